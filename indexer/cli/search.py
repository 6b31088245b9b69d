"""Commands that read the index: `query`, `list`, `dump`, and `drop`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..errors import CollectionNotFound
from ..tables import printable
from ..types import Chunk, pages_label
from .common import echo_json, handle_errors, note_function, settings_from
from .groups import Place
from .library import LibraryChoice, LibraryOption, engines, modes, rule, search_defaults
from .options import built_with_option, db_options, json_option, where_to_read
from .search_options import SearchArgs, search_options

if TYPE_CHECKING:
    from ..retrieval import Context, Index, Query
    from ..types import Hit


def register(cli: click.Group) -> None:
    cli.add_command(query)
    cli.add_command(dump)
    cli.add_command(drop)


def _stale_warning(index: Index) -> None:
    """A quick look (file sizes and times, no hashing) at whether the documents changed
    since the build, when the folder it was built from is at hand."""
    from ..indexing.manifest import quick_stale

    changed = quick_stale(index.store, index.entry)
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        click.echo(
            f"warning: {len(changed)} file(s) changed since {index.entry.strategy} was built "
            f"({', '.join(map(printable, changed[:3]))}{more}); rebuild: {index.store.rebuild_command(index.entry)}",
            err=True,
        )


def _embedder_note(index: Index, strategy: str | None) -> None:
    """Which embedder answers when the strategy is built with several and none was named
    (neither `--embedder` nor `strategy@embedder`)."""
    from ..retrieval.collections import other_embedders, split_name

    others = other_embedders(index.store, index.entry)
    if others and not (strategy and split_name(strategy)[1]):
        click.echo(
            f"note: {index.entry.strategy} is also built with {', '.join(others)}; "
            f"reading the {index.entry.embedder} one (pick with --embedder NAME)",
            err=True,
        )


def chosen_note(index: Index) -> None:
    """Which collection answers a command naming none when several strategies are built,
    and by which rule (`retrieval.collections.chosen`)."""
    if index.chosen_by:
        built = sorted({e.strategy for e in index.store.catalogue.entries()})
        click.echo(
            f"note: reading {index.entry.strategy} of {', '.join(built)}: {index.chosen_by} "
            "(pick one with --strategy S)",
            err=True,
        )


@click.command()
@click.argument("text")
@click.option(
    "--strategy",
    "-s",
    default=None,
    cls=LibraryOption,
    help=lambda: f"Collection to search [default: {rule()}].",
)
@click.option(
    "--mode",
    "-m",
    type=LibraryChoice(modes),
    default=None,
    cls=LibraryOption,
    help=lambda: (
        "Embedding similarity, BM25, or both fused [default: the collection's saved mode, else "
        f"{search_defaults().mode}]."
    ),
)
@click.option(
    "-k",
    "k",
    type=int,
    cls=LibraryOption,
    default_from=lambda: search_defaults().k,
    help="Number of results.",
)
@search_options
@click.option(
    "--bm25-engine",
    type=LibraryChoice(engines),
    default=None,
    help="Override the collection's BM25 engine.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=16),
    default=None,
    metavar="TOKENS",
    help="Answer-sized context: the sentences, rows and lines that answer, as exact spans "
    "under this many tokens (labels included), instead of whole chunks.",
)
@click.option(
    "--fill",
    is_flag=True,
    help="With --budget: use the whole budget (by default the packing stops once the spans taken "
    "hold 97% of the likelihood; filling holds the whole answer more often, at lower precision).",
)
@where_to_read
@json_option
@handle_errors
def query(
    text: str,
    strategy: str | None,
    mode: str | None,
    k: int,
    search: SearchArgs,
    bm25_engine: str | None,
    budget: int | None,
    fill: bool,
    where: Place,
    as_json: bool,
) -> None:
    """Search one collection; show rank, score, where the chunk lives, and its text.

    With --budget N: the best spans of the top 20 chunks in at most N tokens, each with
    its document, lines and heading path (--json: one line per span)."""
    from ..retrieval import Index, Query

    request = Query.checked(text, search.options(k, mode))
    index = Index.open(
        strategy,
        settings=where.reading(),
        built_with=where.embedder,
        bm25_engine=bm25_engine,
        one_shot=True,
    )
    chosen_note(index)
    if where.embedder is None:
        _embedder_note(index, strategy)
    if budget is not None or fill:
        _answer_context(index, request, budget, fill, as_json)
        return
    found = index.lookup(request)
    hits, resolved = found.hits, found.options
    for line in index.repairs:
        click.echo(f"warning: {line}", err=True)
    _stale_warning(index)
    if as_json:
        echo_json(hit.to_dict() for hit in hits)
        return
    if not hits:
        within = f" in the documents --path {' '.join(resolved.paths)} matches"
        click.echo("no results" + (within if resolved.paths else ""))
    _echo_hits(hits, resolved.mode == "hybrid")


def _echo_hits(hits: list[Hit], hybrid: bool) -> None:
    for hit in hits:
        click.echo(hit_line(hit, hybrid))
        if hit.chunk.header:
            click.echo(indented(hit.chunk.header))
        click.echo(indented(hit.chunk.text))
        click.echo()


def indented(text: str) -> str:
    """Document text shown on its own lines, indented, its escape sequences and bidi
    overrides made visible (`printable`)."""
    return "    " + printable(text, lines=True).replace("\n", "\n    ")


def place_label(c: Chunk) -> str:
    """` p.3-4`, ` (slide 3)`: where a chunk lies beside its lines ("" when nowhere)."""
    pages = f" {pages_label(c.start_page, c.end_page)}" if c.start_page else ""
    return pages + (f" ({c.location})" if c.location else "")


def hit_line(hit: Hit, hybrid: bool) -> str:
    """A hit's first line: rank, score, where its chunk lives, its kind, the exact tier
    that ranked it, and (hybrid) its rank on each side."""
    c = hit.chunk
    where = (
        f"{printable(c.doc_id)} {pages_label(c.start_page, c.end_page)}"
        if c.start_page
        else f"{printable(c.doc_id)} {c.location}"
        if c.location
        else f"{printable(c.doc_id)}:{c.start_line}-{c.end_line}"
    )
    match = f"  {hit.match}" if hit.match else ""
    if hit.match and hit.search_score is not None:  # an exact tier put it above better-scored hits
        match += f", scored {hit.search_score:.4f}"
    why = side_ranks(hit)
    return f"#{hit.rank}  {hit.score:.4f}  {where}  [{c.kind}]{match}" + (
        f"  ({', '.join(why)})" if why and hybrid else ""
    )


def side_ranks(hit: Hit) -> list[str]:
    """Where the hit ranked on the embedding and BM25 sides (those that found it)."""
    why = []
    if hit.embedding_rank is not None:
        why.append(f"embedding #{hit.embedding_rank}")
    if hit.bm25_rank is not None:
        why.append(f"bm25 #{hit.bm25_rank}")
    return why


def _answer_context(
    index: Index, request: Query, budget: int | None, fill: bool, as_json: bool
) -> None:
    """--budget: the answer-sized context instead of whole chunks (--fill: all of it)."""
    if budget is None:
        from ..errors import UsageError

        raise UsageError("--fill goes with --budget N")
    context = index.context(request, budget, mass=1.0) if fill else index.context(request, budget)
    _stale_warning(index)
    if context.note:  # scored by BM25 alone, or the unit vectors cannot be kept
        click.echo(f"warning: {context.note}", err=True)
    _echo_context(context, as_json)


def _echo_context(context: Context, as_json: bool) -> None:
    """The packed spans (as handed over, with where each lives), then what they cost."""
    if as_json:
        echo_json(span.to_dict() for span in context.spans)
        if not context.spans:  # no line to read: say why on stderr
            click.echo(context.empty_note("--budget"), err=True)
        return
    if not context.spans:
        click.echo(context.empty_note("--budget"))
    _echo_spans(context)
    click.echo()
    saved = context.whole_tokens - context.tokens
    click.echo(
        f"{context.tokens} of {context.budget} tokens (labels {context.label_tokens}), "
        f"{len(context.spans)} span(s) from {context.candidates} chunks, scored by {context.scoring}; "
        f"the top {context.whole_k} whole chunks: {context.whole_tokens} tokens"
        + (f" ({saved} saved)" if saved > 0 and context.spans else "")
    )


def _echo_spans(context: Context) -> None:
    """Each group's label line, then its spans: where each lives, its size and probability."""
    group = None
    for span in context.spans:
        where = (
            pages_label(span.start_page, span.end_page)
            if span.start_page
            else f"lines {span.start_line}-{span.end_line}"
        )
        if (span.doc_id, span.label) != group:
            click.echo(
                ("\n" if group else "") + f"[{printable(span.doc_id)}] {printable(span.label)}"
            )
            group = (span.doc_id, span.label)
        click.echo(f"  {where}, {span.n_tokens} tok, p={span.score:.2f}")
        click.echo(indented(span.text))


@click.command()
@click.option(
    "--strategy",
    "-s",
    default=None,
    cls=LibraryOption,
    help=lambda: f"Collection to dump [default: {rule()}].",
)
@click.option("--doc", "doc_id", default=None, help="Only this document (its doc_id).")
@click.argument("document", required=False)
@db_options
@built_with_option
@json_option
@handle_errors
def dump(
    strategy: str | None,
    doc_id: str | None,
    document: str | None,
    db: str | None,
    chroma_url: str | None,
    embedder: str | None,
    as_json: bool,
) -> None:
    """The stored chunks in document order with their spans, to inspect where cuts fall;
    DOCUMENT (or --doc) keeps one document's."""
    from ..indexing.manifest import newlines
    from ..retrieval import Index

    if document and doc_id and document != doc_id:
        raise click.UsageError(
            f"DOCUMENT {document!r} and --doc {doc_id!r} name two documents; give one"
        )
    doc_id = doc_id or document

    index = Index.open(strategy, settings=settings_from(db, chroma_url), built_with=embedder)
    chosen_note(index)
    try:
        chunks = index.chunks(doc_id)
    except CollectionNotFound as exc:
        raise CollectionNotFound(f"{exc}{_named_as(doc_id, index)}") from None
    newline = newlines(index.store, index.entry)
    if as_json:
        echo_json(
            {**c.to_dict(), **({"newline": newline[c.doc_id]} if c.doc_id in newline else {})}
            for c in chunks
        )
        return
    _echo_chunks(chunks, newline)


def _echo_chunks(chunks: list[Chunk], newline: dict[str, str]) -> None:
    """The chunks as `dump` shows them, a document read with other newlines than `\\n`
    said once."""
    told: set[str] = set()
    for c in chunks:
        if newline.get(c.doc_id, "lf") != "lf" and c.doc_id not in told:
            told.add(c.doc_id)
            click.echo(_newline_note(c.doc_id, newline[c.doc_id]))
        _echo_chunk(c)


def _newline_note(doc_id: str, newline: str) -> str:
    return (
        f"=== {printable(doc_id)} has {newline.upper()} newlines: offsets index its text "
        "with each newline read as \\n (as Python's open() reads it)"
    )


def _echo_chunk(c: Chunk) -> None:
    """A stored chunk as `dump` shows it: where it lies, its header, its text."""
    click.echo(
        f"--- {printable(c.doc_id)} [{c.start}..{c.end}] lines {c.start_line}-{c.end_line}"
        f"{place_label(c)} {c.kind} {c.n_tokens} tok  {c.id}"
    )
    if c.header:
        click.echo("  header: " + printable(c.header.replace("\n", " | ")))
    click.echo(printable(c.text, lines=True))


@click.command()
@click.option("--strategy", "-s", required=True, help="Collection to remove.")
@db_options
@built_with_option
@click.option("--no-wait", is_flag=True, help="Fail at once if a build of the strategy is running.")
@click.option("--quiet", "-q", is_flag=True, help="No note on stderr while waiting for a build.")
@handle_errors
def drop(
    strategy: str,
    db: str | None,
    chroma_url: str | None,
    embedder: str | None,
    no_wait: bool,
    quiet: bool,
) -> None:
    """Remove a collection (and its BM25 index and manifest). A build of it running now is
    waited for, and the version it publishes is what is dropped."""
    from ..chunkers import collection_names
    from ..embeddings import canonical_name
    from ..store import Store

    settings = settings_from(db, chroma_url)
    store = Store(settings)
    wanted = canonical_name(embedder, settings) if embedder else None
    entry = store.builds.drop(
        collection_names(strategy), wanted, wait=not no_wait, on_wait=note_function(quiet)
    )
    click.echo(f"dropped {entry.strategy} ({entry.embedder}, {entry.chunks} chunks)")


def _named_as(doc_id: str | None, index: Any) -> str:
    """A hint for a document asked for by a path the index does not name it by: documents
    are named by their path inside the indexed folder (`tr/kedi.txt` is `kedi.txt` when the
    folder `tr` was indexed)."""
    from ..indexing.manifest import read_manifest

    if not doc_id:
        return ""
    manifest = read_manifest(index.store, index.entry)
    wanted = doc_id.replace("\\", "/").rstrip("/")
    near = sorted(
        d
        for d in (manifest.files if manifest else ())
        if wanted.endswith("/" + d)
        or d.endswith("/" + wanted.rsplit("/", 1)[-1])
        or d == wanted.rsplit("/", 1)[-1]
    )
    if not near:
        return "; `indexer list` shows what was built, `indexer dump` without a name every document"
    return f"; documents are named by their path inside the indexed folder: {', '.join(repr(d) for d in near[:3])}"
