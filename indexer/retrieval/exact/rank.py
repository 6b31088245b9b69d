"""The exact-match tiers of a lookup's candidates (`exact` says which signals there are):
the definitions a bare symbol or code query names (of the kind it names first:
`exact.kind`), the first chunks of a file it names,
and how many of its exact terms each candidate holds, as tiers above the ranking."""

from __future__ import annotations

from collections.abc import Callable, Container

from ...text.analyzer import Analyzer
from .index import LOOKUP_WORDS, ExactIndex, Ranked, bare_symbol
from .kind import kind_first

# which chunk ids a version has (its `BM25Index`)
Live = Container[str]


def rank_exact(
    query: str,
    analyzer: Analyzer,
    ids: list[str],
    exact: ExactIndex,
    holds: Callable[[list[str], list[str]], list[int]],
    doc_of: Callable[[list[str]], dict[str, str]],
    first_chunks: Callable[[str], list[str]],
    live: Live,
    why: dict[str, str] | None = None,
    texts: Callable[[list[str]], dict[str, str]] | None = None,
) -> tuple[list[str], dict[str, int]]:
    """The exact-match tiers of a lookup's candidates `ids` (best first): (ids to add at the
    end — definitions the query names, or the first chunks of a file it names when no
    candidate comes from it — and each candidate's tier). `holds(terms, ids)` counts the
    terms each chunk's text holds, `doc_of(ids)` gives their documents, `first_chunks(doc)`
    a document's first chunk ids, `live` says which ids the version has. `why`, when
    given, receives what put each tiered id there (`match_labels`). `texts(ids)`, when
    given (each chunk's header and text), lets a query naming a kind (`class Option`)
    put that kind's definitions first (`exact.kind`)."""
    if len(query.split()) > LOOKUP_WORDS:
        return [], {}
    terms = analyzer.exact_terms(query)
    key = bare_symbol(query)
    if not terms and not key:
        return [], {}
    symbols = _symbol_definitions(key, exact, live)
    if texts is not None:
        symbols = kind_first(query, key, symbols, texts)
    codes = _code_definitions(query, terms, exact, live)
    definitions = symbols + codes
    docs = _named_documents(terms, exact)
    extra = _added(ids, definitions, docs, doc_of=doc_of, first_chunks=first_chunks, live=live)
    everything = ids + extra
    held = dict(zip(everything, holds(terms, everything))) if terms else {}
    named = _named_ids(everything, docs, doc_of)
    if why is not None:
        why.update(
            match_labels(held, named, [cid for cid, _ in symbols], [cid for cid, _ in codes])
        )
    return extra, tiers(held, named, definitions)


def _symbol_definitions(key: str, exact: ExactIndex, live: Live) -> Ranked:
    """The live definitions of the symbol a bare symbol query names (`key`; "" for none)."""
    if not key:
        return []
    return [(cid, t) for cid, t in exact.definitions(key) if cid in live]


def _added(
    ids: list[str],
    definitions: Ranked,
    docs: dict[str, int],
    doc_of: Callable[[list[str]], dict[str, str]],
    first_chunks: Callable[[str], list[str]],
    live: Live,
) -> list[str]:
    """The live ids to add after the candidates `ids`, each once: the `definitions`, then —
    when no candidate comes from a document the query names (`docs`) — those documents'
    first chunks."""
    extra = [cid for cid, _ in definitions]
    if docs:
        extra += _first_chunks_named(ids, docs, doc_of, first_chunks)
    seen = set(ids)
    return [cid for cid in dict.fromkeys(extra) if cid not in seen and cid in live]


def _first_chunks_named(
    ids: list[str],
    docs: dict[str, int],
    doc_of: Callable[[list[str]], dict[str, str]],
    first_chunks: Callable[[str], list[str]],
) -> list[str]:
    """The first chunks of the documents the query names (`docs`), when no candidate comes
    from one of them."""
    if any(doc in docs for doc in doc_of(ids).values()):
        return []
    return [cid for doc in docs for cid in first_chunks(doc)]


def _named_ids(
    ids: list[str], docs: dict[str, int], doc_of: Callable[[list[str]], dict[str, str]]
) -> dict[str, int]:
    """For each id, how many exact terms of the query its document's file name has
    (nothing asked when the query names no document)."""
    if not docs:
        return {}
    return {cid: docs.get(doc, 0) for cid, doc in doc_of(ids).items()}


def _code_definitions(query: str, terms: list[str], exact: ExactIndex, live: Live) -> Ranked:
    """A bare code query's (`SEV2`, `error E4021`: at most two words) definitions: the
    live chunks where one of its exact terms is defined, each with a bonus of 1."""
    if not terms or len(query.split()) > 2:
        return []
    return [(cid, 1) for term in terms for cid in exact.codes.get(term, ()) if cid in live]


def _named_documents(terms: list[str], exact: ExactIndex) -> dict[str, int]:
    """The documents whose file names are among the query's exact terms, with how many."""
    docs: dict[str, int] = {}
    for term in terms:
        for doc in exact.names.get(term, ()):
            docs[doc] = docs.get(doc, 0) + 1
    return docs


def match_labels(
    held: dict[str, int], named: dict[str, int], symbols: list[str], codes: list[str]
) -> dict[str, str]:
    """What put each tiered id in its tier, the strongest reason only: `exact symbol` (a
    definition of the symbol the query names), `exact code` (the row, heading or line that
    defines the code), `file name` (a chunk of the file the query names), `exact term` (it
    holds one of the query's codes or identifiers verbatim).

    >>> match_labels({"a": 1, "b": 1}, {"c": 1}, ["b"], ["d"])
    {'a': 'exact term', 'b': 'exact symbol', 'c': 'file name', 'd': 'exact code'}
    """
    out = {cid: "exact term" for cid, n in held.items() if n}
    out.update((cid, "file name") for cid, n in named.items() if n)
    out.update((cid, "exact code") for cid in codes)
    out.update((cid, "exact symbol") for cid in symbols)
    return out


def tiers(held: dict[str, int], named: dict[str, int], definitions: Ranked) -> dict[str, int]:
    """Each candidate's tier: the exact terms its text holds or its file name has (`held`,
    `named`: chunk id -> count, the larger counts), plus the bonus of a definition the
    query names (`ExactIndex.definitions`: 2 outside test files, 1 inside them, more for a
    qualifier that names it). Only ids with a tier above 0 are listed.

    >>> tiers({"a": 1, "b": 1}, {"c": 1}, [("d", 2), ("b", 1)])
    {'a': 1, 'b': 2, 'c': 1, 'd': 2}
    """
    out = {cid: max(n, named.get(cid, 0)) for cid, n in held.items() if n}
    for cid, n in named.items():
        if n and cid not in out:
            out[cid] = n
    for cid, bonus in definitions:
        out[cid] = out.get(cid, 0) + bonus
    return out
