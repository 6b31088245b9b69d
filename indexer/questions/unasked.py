"""What nobody asks about: the rules that keep a sentence, a list item or a block from being
a made-up question's target (`passages` applies them). Each pattern names a real case a
trial found: a pointer elsewhere, a sentence about the page, a man page's running header, a
shell command, a reference-list entry, a lead-in ending in a colon, credits, thanks and
funders, contact lists, licence text, copyright lines, run-on text."""

from __future__ import annotations

import re

WORDS = re.compile(r"[^\W\d_][\w'’-]*")
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|<https?://[^>]*>|https?://\S+|www\.\S+")
_MARKUP = re.compile(r"[*_`~>#|]+")

LICENCE_TEXT = re.compile(
    r"permission is hereby granted|without (any )?warrant(y|ies)|all rights reserved|licensed under the|"
    r"is free software[;,]|unlimited permission to|"
    r"gnu (lesser |affero )?general public licen[cs]e|creative commons|apache licen[cs]e|"
    r"(the|this) software is provided|mit licen[cs]e|tüm hakları saklıdır|"
    r"redistribution and use in source and binary forms|implied warranties of merchantability|"
    r"terms and conditions for use, reproduction,? and distribution|"
    r"(released|distributed|available|licen[cs]ed) under (the )?(terms of (the )?)?[\w .-]{0,40}licen[cs]e",
    re.I,
)
# a sentence that only points elsewhere ("See `quad` for more details.", "For more information,
# see ...", "Ayrıntılı bilgi için ... bakınız"): what it points at is the answer, not it
_POINTER = re.compile(
    r"^\W*((?-i:[A-Z][A-Z ]*[A-Z])\n\s*)?(see|refer to|for (more|further|additional|full|complete) (details|information)|"
    r"(ayrıntılı|detaylı|daha fazla) bilgi için|bkz|full documentation|"
    r"(or )?available locally via|report (any )?(translation )?bugs to)\b",
    re.I,
)
# a sentence about the document rather than its subject ("This page describes how ...", "This
# guide walks through ...", "The following list is extracted from ...", "Bu belgede ...
# açıklanır"): its words are the page's headings, and the answer is the rest of the page
_META = re.compile(
    r"^\W*(this|the following|these) (page|guide|document|section|chapter|manual( page)?|article|"
    r"tutorial|list|table|reference|documentation)\b[^.:]{0,60}?\b(describes?|explains?|walks? through|"
    r"covers?|documents?|introduces?|summari[sz]es?|(is|are|was|were) (extracted|taken|copied|"
    r"generated|derived|adapted) from)\b|"
    r"^\W*bu (sayfa|belge|bölüm|kılavuz|rehber)(da|de)?\b[^.]{0,120}\b(açıklar|anlatır|açıklanır|"
    r"anlatılır|ele alır|ele alınır)\W*$",
    re.I,
)
# a copyright line, or who wrote the program ("Copyright (C) 2024 Free Software Foundation",
# "Written by Richard Stallman.")
# an entry of a reference list: authors by initials and surname after a number in brackets,
# or followed by a year or an RFC
# ("F. Cusack and M. Forssen, Generic Message Exchange ..., RFC 4256, January 2006.",
# "[12] J. Smith, A. Jones: ... 2019.")
_REFERENCE = re.compile(
    r"^\W*\[\d+\]\s*([A-Z]\.\s?){1,3}[A-Z][\w'’-]+(,|\s+and\s|\s+et al)|"
    r"^\W*([A-Z]\.\s?){1,3}[A-Z][\w'’-]+(,|\s+and\s|\s+et al).*\b((19|20)\d\d|RFC\s?\d+)\b",
    re.S,
)
_COPYRIGHT = re.compile(r"^\W*(copyright\b|©|\(c\)\s*\d|telif hakkı\b|written by\b)", re.I)
# a man page's running header or footer ("GNU coreutils 9.1    September 2022    LS(1)")
_MAN_RUNNING = re.compile(r"^[^\n]*(\t| {2,})[ \t]*[\w.+-]+\(\d\w*\)\s*$")
# a command typed at a shell prompt ("$ ssh-keygen -lv -f ~/.ssh/known_hosts", "> bzip2 out"):
# code, though plain text does not mark it so
_PROMPT = re.compile(r"^\s*[$>%]\s+[\w./~-]+(\s|$)")
# credits and declarations of a paper, nobody's answer (matched at a passage's start)
_CREDITS = re.compile(
    r"^\W*(author(s'?|'s)? contributions?|(the )?authors? (declare|thank|acknowledge|would like)|"
    r"acknowledg(e)?ments?|funding|competing interests?|conflicts? of interests?|"
    r"data (and code )?availability|ethics (approval|statement)|correspondence( to)?|"
    r"yazar katkıları|çıkar çatışması|finansman|(many |special |big )?thanks( go(es)?)? to|"
    r"(we|i) (would like to |want to )?thank|teşekkürler)\b",
    re.I,
)
# who paid for it ("The development of this software has partly been funded by ...")
_FUNDED = re.compile(r"\b(funded|sponsored|financed) by\b", re.I)
# an e-mail address, also written out ("jdoe at example.org", on a line that is no sentence):
# a passage that is mostly names and addresses is a credits or contact list
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+|<[\w.+-]+@[\w.-]+>")  # <x@MASKED> too
_SPELLED_EMAIL = re.compile(r"\b[\w.+-]+ (at|AT) [\w-]+(\.[a-z]{2,})+\b(?![^\n]*[.!?]\s*$)", re.M)
CONTACT_WORDS = 6  # a passage with an address per this many other words or fewer is a contact list
# a man page's option entry names its subject in its term, even when it ends "as follows:"
_OPTION = re.compile(r"\s*--?\w")
MAX_CHARS = 3000  # a longer passage is no sentence (a file of one line, a list run together)


def plain_words(text: str) -> list[str]:
    """Words with letters of a passage, links reduced to their anchor text and markup dropped."""
    return WORDS.findall(_MARKUP.sub(" ", LINK.sub(r" \1 ", text)))


def not_asked(text: str) -> bool:
    """A sentence or item nobody looks for: a pointer, a sentence about the page, a man
    page's running header, a shell command, a reference, a lead-in (it ends in a colon:
    what it introduces is the answer; an option entry excepted), who paid for the work, a
    contact line, or run-on text too long to be a sentence."""
    if len(text) > MAX_CHARS or (text.rstrip().endswith(":") and not _OPTION.match(text)):
        return True
    return any(found(text) for found in _UNASKED) or _contact_list(text)


_UNASKED = (
    _POINTER.search,
    _META.search,
    _MAN_RUNNING.match,
    _PROMPT.match,
    _REFERENCE.match,
    _FUNDED.search,
)


def _contact_list(text: str) -> bool:
    """Names and e-mail addresses: an address per CONTACT_WORDS other words or fewer."""
    rest = _SPELLED_EMAIL.sub(" ", _EMAIL.sub(" ", text))
    contacts = len(_EMAIL.findall(text)) + len(_SPELLED_EMAIL.findall(_EMAIL.sub(" ", text)))
    return contacts > 0 and contacts * CONTACT_WORDS >= len(plain_words(rest))


def credits_or_licence(text: str) -> bool:
    """A block of licence text, a paper's credits (or thanks), or a copyright line."""
    return bool(LICENCE_TEXT.search(text) or _CREDITS.match(text) or _COPYRIGHT.match(text))
