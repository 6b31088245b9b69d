"""Made-up questions written by an LLM through Ollama (`indexer questions --llm ollama:MODEL`).

The model sees a passage and its heading path (or a definition and its symbol) and writes
a question a user would ask whose answer is in it, without copying its wording, plus the
exact words of the passage that answer it. Every reply is validated: the answer must be
found in the passage, and a question whose words come too much from the passage (a share
of its content words over `MAX_OVERLAP`, or a run of `MAX_RUN` words copied) is rejected.
Replies are cached by (model, prompt version, document hash, passage hash) in
`<db>/cache/questions.sqlite`, through the same client (`indexer.llm`), host setting and
cache format as the `contextual` strategy.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..llm import LANGUAGE_NAMES, ChatClient, ReplyCache
from ..types import Document
from .code import Symbol
from .passages import Passage
from .simulate import TermStats

PROMPT_VERSION = 1  # in the cache's key: a new prompt asks again
MAX_OVERLAP = (
    0.6  # share of a question's content words found in its passage (code: MAX_OVERLAP_CODE)
)
MAX_OVERLAP_CODE = 0.85  # a developer names identifiers of the code they look for
MAX_RUN = 5  # words in a row copied from the passage
MAX_WORDS = 40

SYSTEM = (
    "You write the questions people type into the search box of a documentation site. "
    "Reply in {language} with one JSON object and nothing else."
)
USER = """<heading>{heading}</heading>
<passage>
{passage}
</passage>
Write one question a reader would ask whose answer is in this passage. Ask about what they need — their
situation, the purpose, the outcome — in your own words: do not copy phrases from the passage. Then quote,
word for word, the shortest part of the passage that answers it.
Reply as JSON: {{"question": "...", "answer": "..."}}"""
USER_CODE = """<symbol>{heading}</symbol>
<code>
{passage}
</code>
Write one question a developer would type to find this code: what it does or where something is handled,
in your own words (they may name an identifier). Reply as JSON: {{"question": "..."}}"""


@dataclass
class QuestionStats:
    backend: str
    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    accepted: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    overlaps: list[float] = field(default_factory=list)

    def reject(self, reason: str) -> None:
        self.rejected[reason] = self.rejected.get(reason, 0) + 1

    def summary(self) -> str:
        mean = sum(self.overlaps) / len(self.overlaps) if self.overlaps else 0.0
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.rejected.items())) or "none"
        return (
            f"{self.backend}: {self.calls} LLM calls, {self.cache_hits} cached, {self.input_tokens:,} input and "
            f"{self.output_tokens:,} output tokens; {self.accepted} questions accepted (mean word overlap with "
            f"their passage {mean:.2f}), rejected: {why}"
        )


class OllamaQuestioner:
    """Questions from an LLM on an Ollama server (the official client's chat API,
    temperature 0, fixed seed), validated and cached."""

    def __init__(self, model: str, host: str | None, cache_dir: Path | None) -> None:
        self.client = ChatClient(
            model,
            host,
            purpose=" for questions",
            fallback=", or use --llm extractive",
            missing="give the Ollama model: --llm ollama:gemma3:4b",
        )
        self.backend = self.client.backend
        self.cache = ReplyCache(
            cache_dir / "questions.sqlite" if cache_dir else None, PROMPT_VERSION
        )
        self.stats = QuestionStats(self.backend)
        self.vocab = TermStats()

    def ask(
        self, doc: Document, target: Passage | Symbol, lang: str
    ) -> tuple[str, list[str], tuple[int, int]] | None:
        """(question, tags, answer span) or None when the reply fails validation."""
        code = isinstance(target, Symbol)
        (lo, hi), heading = _focus(doc, target)
        passage = doc.text[lo:hi]
        question, answer = parse_reply(self._reply(doc, heading, passage, lang, code))
        problem, overlap = self._judge(question, passage, lang, code)
        span = None if problem else _answer_span(doc, target, answer)
        if span is None:
            self.stats.reject(problem or "answer not in the passage")
            return None
        self.stats.accepted += 1
        self.stats.overlaps.append(overlap)
        return question, [f"overlap:{round(overlap, 1):.1f}"], span

    def _judge(self, question: str, passage: str, lang: str, code: bool) -> tuple[str, float]:
        """Why a question is rejected ("" when it is not), and how much of it the passage
        holds (0.0 when it is rejected before that is measured)."""
        if not question:
            return "no question", 0.0
        words = question.split()
        if len(words) < 3 or len(words) > MAX_WORDS:
            return "too short or too long", 0.0
        overlap, run = copied(self.vocab, question, passage, lang)
        if overlap > (MAX_OVERLAP_CODE if code else MAX_OVERLAP) or (run >= MAX_RUN and not code):
            return "copies the passage", overlap
        return "", overlap

    def _reply(self, doc: Document, heading: str, passage: str, lang: str, code: bool) -> str:
        key = hashlib.sha256(f"{heading}\0{passage}".encode()).hexdigest()
        model_key = f"questions-v{PROMPT_VERSION}:{self.backend}"
        cached = self.cache.get(model_key, doc.hash, key)
        if cached is not None:
            self.stats.cache_hits += 1
            return cached
        response = self.client.chat(
            SYSTEM.format(language=LANGUAGE_NAMES.get(lang, "the passage's language")),
            (USER_CODE if code else USER).format(heading=heading, passage=passage),
            max_tokens=256,
            json=True,
        )
        self.stats.calls += 1
        self.stats.input_tokens += response.input_tokens
        self.stats.output_tokens += response.output_tokens
        self.cache.put(
            model_key,
            doc.hash,
            key,
            reply=response.text,
            tokens_in=response.input_tokens,
            tokens_out=response.output_tokens,
        )
        return response.text


def _focus(doc: Document, target: Passage | Symbol) -> tuple[tuple[int, int], str]:
    """The span the question is asked about, and the heading the prompt shows over it."""
    if isinstance(target, Symbol):
        return (target.start, target.end), f"{doc.doc_id} · {target.symbol}"
    section = doc.sections[target.section] if doc.sections else None
    return target.target, section.path if section else doc.title


def _answer_span(doc: Document, target: Passage | Symbol, answer: str) -> tuple[int, int] | None:
    """A definition's signature line; a passage's answer as the reply quoted it, when the
    passage's target holds it."""
    if isinstance(target, Symbol):
        return target.answer
    lo, hi = target.target
    return find_answer(doc.text, answer, lo, hi)


def parse_reply(reply: str) -> tuple[str, str]:
    """(question, answer) from a reply: a JSON object, possibly inside a code fence or
    other text; ("", "") when there is none."""
    match = re.search(r"\{.*\}", reply or "", re.S)
    if not match:
        return "", ""
    try:
        data = json.loads(match.group())
    except ValueError:
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    question = data.get("question")
    answer = data.get("answer")
    return (
        " ".join(question.split()) if isinstance(question, str) else "",
        answer.strip() if isinstance(answer, str) else "",
    )


def copied(vocab: TermStats, question: str, passage: str, lang: str) -> tuple[float, int]:
    """The share of a question's content words found in the passage, and the longest run
    of its words (any) that appears in the passage as written."""
    terms = [k for k, _ in vocab.terms(question, lang)]
    in_passage = {k for k, _ in vocab.terms(passage, lang)}
    share = sum(k in in_passage for k in terms) / len(terms) if terms else 1.0
    q = re.findall(r"\w+", question.casefold())
    p = " " + " ".join(re.findall(r"\w+", passage.casefold())) + " "
    run = 0
    for i in range(len(q)):
        j = i + run + 1
        while j <= len(q) and f" {' '.join(q[i:j])} " in p:
            run = j - i
            j += 1
    return share, run


def find_answer(text: str, answer: str, lo: int, hi: int) -> tuple[int, int] | None:
    """Where an LLM's quoted answer is in text[lo:hi]: exactly, or with any whitespace
    (and Markdown table pipes) between its words; None when it is not there."""
    if not answer:
        return None
    at = text.find(answer, lo, hi)
    if at != -1:
        return at, at + len(answer)
    words = answer.split()
    if not words:
        return None
    pattern = r"[\s|]+".join(re.escape(w) for w in words)
    m = re.compile(pattern).search(text, lo, hi)
    return (m.start(), m.end()) if m else None
