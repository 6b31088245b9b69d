"""`indexer questions`: question sets made from a folder's own documents."""

from __future__ import annotations

import json
import os
import time
from collections import Counter

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.evaluation.sets import load_questions, resolve
from indexer.loaders import load_documents
from indexer.loaders.symbols import outline, walk
from indexer.questions.generate import allocate, make_questions
from indexer.questions.reuse import cached_questions
from indexer.questions.simulate import Knobs
from tests.conftest import CORPUS


def _docs(folder):
    _, docs = load_documents([folder])
    return {d.doc_id: d for d in docs}


def _sentences(topic: str, n: int) -> str:
    return " ".join(f"The {topic} rule number {i} covers {topic} case {i} with distinct wording item{i}x." for i in range(n))


@pytest.mark.parametrize("folder", [CORPUS, CORPUS / "en", CORPUS / "code"], ids=["tr", "en", "code"])
def test_answers_are_exact_substrings_and_targets_resolve(folder, tmp_path):
    made = make_questions(folder, 30, seed=1)
    assert len(made.questions) == 30
    docs = _docs(folder)
    for q in made.questions:
        text = docs[q["doc_id"]].text
        start, end = q["span"]
        assert q["answer"] and q["answer"] in text[start:end]
        assert q["tags"][:2] == ["generated", "extractive"]
        assert q["question"].strip()
    path = tmp_path / "q.jsonl"
    made.write(path)
    loaded = load_questions(path)  # the loader `indexer eval` uses
    resolve(loaded, docs)
    assert all(q.answer_span is not None and q.target == tuple(json.loads(line)["span"])
               for q, line in zip(loaded, path.read_text().splitlines()))


def test_the_same_seed_makes_the_same_questions():
    a = make_questions(CORPUS, 25, seed=7).questions
    b = make_questions(CORPUS, 25, seed=7).questions
    c = make_questions(CORPUS, 25, seed=8).questions
    assert a == b
    assert [q["question"] for q in a] != [q["question"] for q in c]


def test_questions_spread_over_documents_by_size(write_files):
    folder = write_files({"big.md": "# Big\n\n" + _sentences("shipping", 90) + "\n",
                          "small.md": "# Small\n\n" + _sentences("billing", 10) + "\n"})
    made = make_questions(folder, 20, seed=0)
    counts = Counter(q["doc_id"] for q in made.questions)
    assert counts == {"big.md": 18, "small.md": 2}


def test_allocation_is_proportional_and_redistributes_what_a_document_cannot_take():
    assert allocate({"a": 900, "b": 100}, {"a": 50, "b": 50}, 10) == {"a": 9, "b": 1}
    assert allocate({"a": 900, "b": 100}, {"a": 4, "b": 50}, 10) == {"a": 4, "b": 6}
    assert allocate({"a": 1, "b": 1, "c": 1}, {"a": 9, "b": 9, "c": 9}, 4) == {"a": 2, "b": 1, "c": 1}
    assert allocate({"a": 10}, {"a": 3}, 10) == {"a": 3}


BOILERPLATE = """# Handbook

## Table of Contents

- [Returns and refunds for damaged parcels](#returns)
- [Delivery windows for the northern islands](#delivery)

## Returns

A damaged parcel can be returned within thirty days of delivery for a full refund.

```bash
curl -X POST https://api.example.com/returns --data '{"order": 1}'
```

## Setup

```python
client = Client(token="abc")
client.returns.create(order=1)
```

## Useful links

- [Carrier status page of the regional partner](https://status.example.com)
- [Community forum for merchants and buyers](https://forum.example.com)

## License

Permission is hereby granted, free of charge, to any person obtaining a copy of this handbook.
THE HANDBOOK IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.
"""


def test_boilerplate_is_not_asked_about(write_files):
    folder = write_files({"handbook.md": BOILERPLATE,
                          "LICENSE": "Permission is hereby granted, free of charge, to any person obtaining a copy.\n"})
    made = make_questions(folder, 10, seed=0)
    assert [q["answer"] for q in made.questions] == [
        "A damaged parcel can be returned within thirty days of delivery for a full refund."]
    assert made.shortfall.startswith("made 1 of the 10 questions")
    assert any(s.doc_id == "LICENSE" and "not asked about" in s.reason for s in made.skipped)


BSD_TEXT = """Copyright (c) The Regents of the University of California.
All rights reserved.

Redistribution and use in source and binary forms, with or without modification, are
permitted provided that the following conditions are met: redistributions of source code
must retain the above copyright notice.

THIS SOFTWARE IS PROVIDED BY THE REGENTS AND CONTRIBUTORS AS IS AND ANY EXPRESS OR IMPLIED
WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY ARE DISCLAIMED.
"""


def test_licences_named_by_their_id_and_bsd_text_are_not_asked_about(write_files):
    """A stranger's folder of /usr/share/common-licenses files got 39 questions, all from
    Apache-2.0.txt and BSD: neither name was a licence file's, and BSD's text said one of
    the phrases that mark a licence."""
    folder = write_files({"handbook.md": BOILERPLATE, "Apache-2.0.txt": "Apache License\n\nVersion 2.0\n\n"
                          "The Licensor grants you a perpetual, worldwide licence to reproduce the Work.\n",
                          "notes/terms.txt": BSD_TEXT})
    made = make_questions(folder, 10, seed=0)
    assert [q["doc_id"] for q in made.questions] == ["handbook.md"]
    reasons = {s.doc_id: s.reason for s in made.skipped}
    assert "APACHE_2 file" in reasons["Apache-2.0.txt"] and "licence text" in reasons["notes/terms.txt"]


PSEUDO_HEADINGS = """# Guide

**2.3.4 Arrays, Unions, and Enumerations**

An array holds a fixed number of elements of one type in consecutive memory.

4.2 Results of the second trial

The second trial returned every parcel within nine days of its dispatch.

Author contributions: A. Yilmaz designed the study and wrote the first draft of the guide.

Funding: this guide received no grant from any agency in the public or commercial sectors.

3 parcels out of every hundred arrive late when the carrier changes depots on the way.
"""


def test_lines_standing_for_headings_and_credits_are_not_asked_about(write_files):
    made = make_questions(write_files({"guide.md": PSEUDO_HEADINGS}), 10, seed=0)
    assert sorted(q["answer"] for q in made.questions) == [
        "3 parcels out of every hundred arrive late when the carrier changes depots on the way.",
        "An array holds a fixed number of elements of one type in consecutive memory.",
        "The second trial returned every parcel within nine days of its dispatch."]


NOBODYS_TARGETS = """# Installing

The installer needs a 64-bit system with at least two gigabytes of free disk space.

After you have prepared your changes, run:

```
make install
```

See the project's web page for more details.

For more information on proxies, see the network guide.

The tool is released under the BSD 3-clause licence; the LICENSE file holds its text.

Ayrıntılı bilgi için kurulum kılavuzuna bakınız.

This guide walks through the installation on a fresh machine.

The following options are accepted:

- `--prefix` puts the program under another folder than /usr/local.

Copyright (C) 2024 Free Software Foundation, Inc.

Full documentation <https://www.gnu.org/software/coreutils/ls> or available locally via info.

## Colophon

This page is part of release 6.9 of the Linux man-pages project, kept by its volunteers.

## Reporting bugs

Report any translation bugs to the project's translation team at their web site.

## Author

Written by Richard M. Stallman and David MacKenzie for the project.
"""


def test_lead_ins_pointers_colophons_and_licence_grants_are_not_asked_about(write_files):
    """Strangers' trials got questions about "After you have prepared your changes, run:",
    "See the Xpdf web page for details.", a man page's colophon, copyright line, pointer to
    its full documentation, bug-report address and author line, a README's licence line, a
    guide's sentence about itself and a lead-in to a list: nobody looks for any of them."""
    made = make_questions(write_files({"install.md": NOBODYS_TARGETS}), 10, seed=0)
    assert sorted(q["answer"] for q in made.questions) == [
        "- `--prefix` puts the program under another folder than /usr/local.",
        "The installer needs a 64-bit system with at least two gigabytes of free disk space."]


def test_html_navigation_and_footers_are_not_asked_about(write_files):
    page = ("<html><body><nav><ul><li><a href='/'>Home</a></li><li><a href='/shop'>Shop</a></li></ul></nav>"
            "<h1>Returns</h1><p>You can send back any unused item within thirty days of delivery.</p>"
            "<h2>Damaged items</h2><p>Report a damaged item within two days with a photo of the parcel.</p>"
            "<footer><p>Copyright 2024 Example Shop. All rights reserved.</p></footer></body></html>")
    made = make_questions(write_files({"returns.html": page}), 10, seed=0)
    assert sorted(q["answer"] for q in made.questions) == [
        "Report a damaged item within two days with a photo of the parcel.",
        "You can send back any unused item within thirty days of delivery."]


def test_a_table_row_is_asked_about_with_its_column_names(write_files):
    folder = write_files({"plans.md": "# Plans\n\n## Prices\n\n| Plan | Monthly price | Seats |\n|---|---|---|\n"
                                      "| Starter tier | 19 dollars | 3 seats |\n| Growth tier | 199 dollars | 25 seats |\n"})
    made = make_questions(folder, 2, seed=0)
    assert {q["answer"] for q in made.questions} == {"| Starter tier | 19 dollars | 3 seats |",
                                                     "| Growth tier | 199 dollars | 25 seats |"}
    assert all("row" in q["tags"] for q in made.questions)


def test_context_words_come_from_the_passage_s_own_paragraph(write_files):
    """A made-up query's context words are read around its passage within its paragraph:
    a blank line ends what a reader remembers (XQuAD's people ask about one paragraph)."""
    first = "Harbour cranes lift containers daily. Dockworkers inspect every crane cable. Tugboats guide freighters inward."
    second = "Orchards grow apricots near hillsides. Beekeepers tend hives among blossoms. Farmers press cider autumnally."
    folder = write_files({"notes.md": f"# Notes\n\n{first}\n\n{second}\n"})
    words = {p: {w.strip(".").lower() for w in text.split()} for p, text in (("first", first), ("second", second))}
    made = make_questions(folder, 6, seed=0, knobs=Knobs(passage=0.0, noise=0.0, shuffle=0.0, inflect=0.0))
    assert len(made.questions) == 6
    for q in made.questions:
        own = "first" if q["answer"] in first else "second"
        other = "second" if own == "first" else "first"
        query = set(q["question"].lower().split())
        assert query & words[own], q
        assert not query & words[other], q


def test_a_folder_too_small_writes_what_it_could_and_says_so(write_files, tmp_path):
    folder = write_files({"note.md": "# Note\n\nParcels to the islands take five working days by sea.\n\n"
                                     "Express parcels to the islands travel by air in two days.\n"})
    out = tmp_path / "q.jsonl"
    result = CliRunner().invoke(cli, ["questions", str(folder), "-o", str(out), "-n", "10"])
    assert result.exit_code == 0, result.output
    assert "warning: made 2 of the 10 questions asked for" in result.output
    assert len(out.read_text().splitlines()) == 2


@pytest.mark.parametrize("args, code, message", [
    (["{missing}", "-o", "{out}"], 1, "no documents to ask about in"),
    (["{folder}", "-o", "{out}", "-n", "0"], 2, "Invalid value for -n: must be at least 1"),
    (["{folder}", "-o", "{out}", "--llm", "gpt"], 2, "--llm must be extractive or ollama:<model>, not 'gpt'"),
    (["{folder}", "-o", "{nowhere}"], 2, "the folder of"),
    (["{binary}", "-o", "{out}"], 1, "no documents to ask about"),
    (["{headings}", "-o", "{out}"], 1, "no passage worth a question in"),
])
def test_bad_input_is_one_line(write_files, tmp_path, args, code, message):
    folder = write_files({"a.md": "# A\n\nParcels to the islands take five working days by sea.\n"})
    binary = write_files({"blob.bin": b"\x00\x01\x02" * 100}, tmp_path / "binary")
    headings = write_files({"toc.md": "# Guide\n\n## Contents\n\n- [Setup](#setup)\n\n## Setup\n\n```sh\nmake\n```\n"},
                           tmp_path / "headings")
    values = {"headings": str(headings), "missing": str(tmp_path / "missing"), "out": str(tmp_path / "q.jsonl"), "folder": str(folder),
              "nowhere": str(tmp_path / "no" / "q.jsonl"), "binary": str(binary)}
    result = CliRunner().invoke(cli, ["questions", *(a.format(**values) for a in args)])
    assert result.exit_code == code
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "q.jsonl").exists()


CODE = '''"""Billing helpers."""


def parse_strategy_spec(spec: str) -> dict:
    """Split a strategy spec like fixed:size=32 into its name and parameters."""
    name, _, params = spec.partition(":")
    return {"name": name, "params": params}


class InvoiceBook:
    """Keeps the invoices of one customer account."""

    def __init__(self, account: str) -> None:
        self.account = account
        self.items = []

    def total_due(self, currency: str) -> float:
        """Sum the unpaid invoice amounts in the given currency."""
        due = [i.amount for i in self.items if not i.paid]
        return sum(due)


def test_parse_strategy_spec():
    assert parse_strategy_spec("a:b")["name"] == "a"
    assert True
'''


def test_code_questions_target_definitions(write_files):
    folder = write_files({"billing/book.py": CODE})
    made = make_questions(folder, 10, seed=2)
    doc = _docs(folder)["billing/book.py"]
    spans = {(d.start, d.end): d.symbol for d in walk(outline(doc).definitions)}
    assert len(made.questions) == 3  # test functions and __init__ are not asked about
    assert {spans[tuple(q["span"])] for q in made.questions} == {
        "parse_strategy_spec", "InvoiceBook", "InvoiceBook.total_due"}
    for q in made.questions:
        assert "definition" in q["tags"] and "code" in q["tags"]
        assert q["answer"] == doc.text.split("\n")[doc.line_of(doc.text.find(q["answer"])) - 1].strip()
        assert any(t in q["tags"] for t in ("name", "comment", "identifiers"))
    # the symbol as typed; or its name's words with words of its docstring
    names = make_questions(folder, 10, seed=2, knobs=Knobs(symbol=1.0)).questions
    assert {q["question"] for q in names} <= {"parse_strategy_spec", "billing parse_strategy_spec", "InvoiceBook",
                                              "billing InvoiceBook", "InvoiceBook.total_due", "total_due",
                                              "billing total_due"}
    docstring = {"split", "like", "fixed", "size", "32", "name", "parameters"}
    from_docstring = 0
    for seed in range(5):
        words = make_questions(folder, 10, seed=seed, knobs=Knobs(symbol=0.0)).questions
        asked = [q for q in words if spans[tuple(q["span"])] == "parse_strategy_spec"]
        said = set(asked[0]["question"].lower().replace("?", "").split())
        assert said & {"parse", "strategy", "spec"}  # a word of the name, at least
        assert "comment" in asked[0]["tags"]
        from_docstring += bool(said & docstring)
    assert from_docstring >= 2  # words of the docstring, often


def test_code_queries_take_their_off_target_share_from_their_own_knob(write_files):
    """`code_noise` is the share of a code query's words drawn from the rest of its file;
    prose queries keep `noise`."""
    funcs = "\n\n".join(
        f"def {verb}_{noun}(records, limit):\n    total = 0\n    for item in records:\n"
        f"        total += item.{noun}_{verb}_weight * limit\n    return total\n"
        for verb, noun in [("merge", "ledger"), ("split", "invoice"), ("rotate", "journal"), ("audit", "voucher"),
                           ("archive", "receipt"), ("settle", "payment"), ("reopen", "account"), ("sweep", "balance")])
    folder = write_files({"books/ops.py": funcs, "guide.md": "".join(
        f"## {topic.title()}\n\n{_sentences(topic, 6)}\n\n" for topic in
        ("delivery", "refund", "warranty", "shipping", "invoice", "coupon", "membership", "pickup"))})

    def shares(knobs):
        tagged = {"code": [], "prose": []}
        for seed in range(6):
            for q in make_questions(folder, 12, seed=seed, knobs=knobs).questions:
                if "name" not in q["tags"]:
                    tagged["code" if "code" in q["tags"] else "prose"].append("noise-terms" in q["tags"])
        return {k: sum(v) / len(v) for k, v in tagged.items()}

    quiet = shares(Knobs(symbol=0.0, code_noise=0.0, noise=0.45))
    loud = shares(Knobs(symbol=0.0, code_noise=0.5, noise=0.45))
    assert quiet["code"] == 0.0 and loud["code"] > 0.5
    assert quiet["prose"] > 0.3 and abs(quiet["prose"] - loud["prose"]) < 1e-9  # prose untouched


def test_cached_questions_are_reused_while_the_documents_are_unchanged(write_files, tmp_path):
    folder = write_files({"a.md": "# A\n\n" + _sentences("delivery", 12) + "\n"})
    cache = tmp_path / "cache"
    path, made = cached_questions(folder, 5, folder=cache, seed=1)
    assert made is not None and len(path.read_text().splitlines()) == 5
    again, made_again = cached_questions(folder, 5, folder=cache, seed=1)
    assert again == path and made_again is None
    touched = time.time() + 3  # the same contents, a new modification time: still reused (keyed by content)
    os.utime(folder / "a.md", (touched, touched))
    assert cached_questions(folder, 5, folder=cache, seed=1) == (path, None)
    assert cached_questions(folder, 5, folder=cache, seed=2)[0] != path  # other generator settings
    later = time.time() + 5
    (folder / "a.md").write_text("# A\n\n" + _sentences("returns", 12) + "\n", encoding="utf-8")
    os.utime(folder / "a.md", (later, later))
    changed, remade = cached_questions(folder, 5, folder=cache, seed=1)
    assert changed != path and remade is not None
    assert all("returns" in q["answer"] for q in remade.questions)


def test_the_cli_writes_a_set_eval_can_read(tmp_path):
    out = tmp_path / "q.jsonl"
    result = CliRunner().invoke(cli, ["questions", str(CORPUS), "-o", str(out), "-n", "12", "--seed", "3", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.splitlines()[-1])
    assert summary["questions"] == 12 and summary["documents"] == 10 and summary["output"] == str(out)
    questions = load_questions(out)
    resolve(questions, _docs(CORPUS))
    assert len(questions) == 12


def test_a_suffix_after_a_number_is_not_a_query_word():
    """`6'sı` is one word: its suffix alone (`sı`) is nothing a person would type."""
    from indexer.questions.simulate import TermStats

    terms = TermStats().terms("Arızalı ürünlerin 6'sı ve 2024’te gelen 3'ü yenilendi.", "tr")
    surfaces = [surface for _, surface in terms]
    assert "6'sı" in surfaces and "2024’te" in surfaces and "3'ü" in surfaces
    assert not {"sı", "te", "ü"} & set(surfaces)


def test_sections_under_a_later_h1_keep_their_paths_in_questions_and_passages(tmp_path):
    """A later H1 is a sibling of the first (issue 35, item 10): a question naming its
    section with or without the old title prefix still resolves, and a top-level
    boilerplate section is still left out of made-up passages."""
    from indexer.questions.passages import passages

    (tmp_path / "guide.md").write_text(
        "# Guide\n\nThe guide explains how returns are handled by the shop in detail.\n\n"
        "# Shipping\n\nParcels leave the warehouse within two working days of the order.\n\n"
        "# License\n\nThis text is licensed under the terms of the permissive license below.\n",
        encoding="utf-8")
    _, found = load_documents([tmp_path])
    docs = {d.doc_id: d for d in found}
    doc = docs["guide.md"]
    assert [s.path for s in doc.sections] == ["Guide", "Shipping", "License"]
    questions = tmp_path / "q.jsonl"
    rows = [{"id": "a", "question": "when do parcels leave", "doc_id": "guide.md", "section": "Shipping"},
            {"id": "b", "question": "when do parcels leave", "doc_id": "guide.md", "section": "Guide › Shipping"}]
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    qs = load_questions(questions)
    resolve(qs, docs)
    shipping = doc.sections[1]
    assert [q.target for q in qs] == [(shipping.start, shipping.end)] * 2
    texts = [doc.text[p.start:p.end] for p in passages(doc)]
    assert any("warehouse" in t for t in texts)
    assert not any("licensed" in t for t in texts)
