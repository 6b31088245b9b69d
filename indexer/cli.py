"""The `indexer` command line: parse options, call the library, format the result.

Heavy libraries (chromadb, embedding models) are imported inside commands, so
`indexer --help` stays fast.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import click

from . import __version__
from .config import DEFAULT_MAX_FILE_SIZE, ENV_CHROMA_URL, ENV_DB, ENV_EMBEDDER
from .errors import IndexerError

DEFAULT_STRATEGY = "auto"  # code -> code, Markdown/HTML -> blocks, other text -> headers


def _fail(message: str, code: int) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def handle_errors(func):
    """Turn library errors into a one-line message and the documented exit code."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except IndexerError as exc:
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted; the previous index is untouched", 130)
        except BrokenPipeError:
            sys.exit(0)

    return wrapper


def _parse_size(value: str) -> int:
    text = str(value).strip().upper().replace(" ", "")
    units = {"KB": 1024, "MB": 1024**2, "GB": 1024**3, "K": 1024, "M": 1024**2, "G": 1024**3, "B": 1}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(text)


class SizeType(click.ParamType):
    name = "SIZE"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return _parse_size(value)
        except ValueError:
            self.fail(f"{value!r} is not a size like 5MB or 200KB", param, ctx)


def corpus_options(func):
    """Options that select and read input files."""
    func = click.option("--include", multiple=True, metavar="GLOB", help="Only index files matching this glob (repeatable).")(func)
    func = click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files or folders matching this glob (repeatable).")(func)
    func = click.option(
        "--max-file-size", type=SizeType(), default=DEFAULT_MAX_FILE_SIZE, show_default="5MB",
        help="Skip files larger than this.",
    )(func)
    func = click.option("--encoding", default=None, help="Decode every file with this encoding instead of detecting it.")(func)
    return func


def json_option(func):
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(func)


def store_options(func):
    """Where the index lives and which embedding model reads and writes it."""
    func = click.option("--db", type=click.Path(file_okay=False), envvar=ENV_DB, default=None,
                        help="Index folder (env INDEXER_DB; default ./.indexer).")(func)
    func = click.option("--chroma-url", envvar=ENV_CHROMA_URL, default=None, metavar="URL",
                        help="Use a Chroma server (http://host:port) instead of the embedded database "
                             "(env INDEXER_CHROMA_URL).")(func)
    func = click.option("--embedder", envvar=ENV_EMBEDDER, default=None, metavar="NAME",
                        help="use-m3 (default), e5-small, or ollama:<model> (env INDEXER_EMBEDDER).")(func)
    func = click.option("--ollama-host", envvar="OLLAMA_HOST", default=None, metavar="URL",
                        help="Ollama server for ollama:<model> embedders (env OLLAMA_HOST).")(func)
    return func


def _pair(text: str, option: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not two numbers like 1,0.5", param_hint=option) from None
    return (a, b)


def search_options(func):
    """How to search; every option left out is the collection's saved setting (`indexer
    tune --save`), else the library default."""
    func = click.option("--children-k", type=int, default=None,
                        help="Parent-child: children taken before mapping to parents [default: 30].")(func)
    func = click.option("--candidates", type=int, default=None,
                        help="Depth each side is searched to [default: 50].")(func)
    func = click.option("--rrf-k", type=int, default=None, help="RRF fusion: the k in 1/(k + rank) [default: 10].")(func)
    func = click.option("--rrf-weights", default=None, metavar="E,B",
                        help="RRF fusion: weights of the embedding and BM25 sides [default: 1,1].")(func)
    func = click.option("--alpha", type=float, default=None,
                        help="Weighted fusion: the embedding side's share [default: 0.5].")(func)
    func = click.option("--fusion", type=click.Choice(["adaptive", "weighted", "rrf"]), default=None,
                        help="Hybrid: adaptive (the embedding's share follows how well BM25 covers the query; "
                             "the default), weighted (min-max scores, --alpha) or rrf.")(func)
    return func


def make_options(k=5, mode=None, fusion=None, alpha=None, rrf_weights=None, rrf_k=None, candidates=None,
                 children_k=None):
    from .searching import SearchOptions

    weights = _pair(rrf_weights, "--rrf-weights") if rrf_weights else None
    options = SearchOptions(mode=mode, k=k, fusion=fusion, alpha=alpha, rrf_k=rrf_k, weights=weights,
                            candidates=candidates, children_k=children_k)
    options.check()
    return options


def quiet_option(func):
    return click.option("--quiet", "-q", is_flag=True, help="No progress bars or notes on stderr.")(func)


class ClickProgress:
    """A progress bar on stderr, shown only on a terminal and without --quiet."""

    def __init__(self, quiet: bool) -> None:
        self.show = not quiet and sys.stderr.isatty()

    def __call__(self, label: str, total: int):
        return _Bar(label, total, self.show)


class _Bar:
    def __init__(self, label: str, total: int, show: bool) -> None:
        self.bar = click.progressbar(length=max(total, 1), label=label, file=sys.stderr) if show else None

    def __enter__(self):
        if self.bar is None:
            return lambda n=1: None
        self.bar.__enter__()
        return self.bar.update

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="indexer")
def cli():
    """Chunk documents with several strategies, store each in Chroma, search with
    embeddings, BM25 or both, and measure which strategy wins on your own questions."""


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--strategy", "-s", "strategies", multiple=True, metavar="S",
              help=f"Preset or kind[:key=value,...], repeatable (default: {DEFAULT_STRATEGY}).")
@corpus_options
@click.option("--embedder", envvar=ENV_EMBEDDER, default=None, metavar="NAME",
              help="Embedder for strategies that embed while chunking (semantic).")
@json_option
@handle_errors
def chunk(paths, strategies, include, exclude, max_file_size, encoding, embedder, as_json):
    """Chunk files without storing them: a summary, or every chunk with --json (JSON lines)."""
    from .chunking import iter_chunks

    model = None
    if embedder:
        from .embeddings import get_embedder

        model = get_embedder(embedder)
    found, stats, stream = iter_chunks(
        list(paths), list(strategies) or [DEFAULT_STRATEGY], include=include, exclude=exclude,
        max_file_size=max_file_size, encoding=encoding, skip_dirs=(_db_dir_for_skip(),), embedder=model,
    )
    out = sys.stdout
    for _name, _doc, chunks in stream:
        if as_json:
            for c in chunks:
                out.write(json.dumps(c.to_dict(), ensure_ascii=False) + "\n")
    if as_json:
        _echo_skipped(found, err=True)
        return
    click.echo(f"{'strategy':<22} {'files':>6} {'chunks':>7} {'avgTok':>7} {'maxTok':>7}  kinds")
    for st in stats.values():
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(st.kinds.items(), key=lambda kv: -kv[1]))
        click.echo(f"{st.strategy:<22} {st.files:>6} {st.chunks:>7} {st.avg_tokens:>7.0f} {st.max_tokens:>7}  {kinds}")
    _echo_skipped(found)


def _db_dir_for_skip():
    import os

    return os.environ.get(ENV_DB) or ".indexer"


def _echo_skipped(found, err: bool = False) -> None:
    for item in found.warnings:
        click.echo(f"warning {item.doc_id}: {item.reason}", err=err)
    for item in found.skipped:
        click.echo(f"skipped {item.doc_id}: {item.reason}", err=err)
    if found.unsupported:
        listing = ", ".join(f"{ext} ×{n}" for ext, n in sorted(found.unsupported.items()))
        click.echo(f"ignored unsupported file types: {listing}", err=err)


def _only_strategy(db, chroma_url) -> str:
    from .errors import UsageError
    from .store import Store

    built = sorted({e.strategy for e in Store(db, chroma_url).entries()})
    if len(built) == 1:
        return built[0]
    if not built:
        from .errors import CollectionNotFound

        raise CollectionNotFound("nothing is built yet; build one first: indexer build PATH")
    raise UsageError(f"several collections are built ({', '.join(built)}); pass --strategy")


def _fmt_seconds(value: float) -> str:
    return f"{value:.1f}s" if value < 100 else f"{value / 60:.1f}m"


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--strategy", "-s", "strategies", multiple=True, metavar="S",
              help=f"Preset or kind[:key=value,...], repeatable (default: {DEFAULT_STRATEGY}).")
@click.option("--name", default=None, help="Collection name for a single --strategy (default: derived).")
@store_options
@corpus_options
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of only changed files.")
@click.option("--no-wait", is_flag=True, help="Fail at once if another build of the strategy is running.")
@click.option("--lang", type=click.Choice(["auto", "tr", "en"]), default="auto", show_default=True,
              help="BM25 analyzer language (auto decides from the documents).")
@click.option("--stem", type=int, default=None, help="BM25 prefix stem length (0 = off; default per language).")
@click.option("--fold/--no-fold", default=None, help="BM25: fold diacritics (ç→c, ı→i...; default per language).")
@click.option("--stopwords/--no-stopwords", default=None, help="BM25: drop common words (default per language).")
@click.option("--bm25-engine", type=click.Choice(["rank-bm25", "bm25s"]), default="rank-bm25", show_default=True,
              help="BM25 engine stored with the collection (bm25s: pip install 'indexer[fast]').")
@quiet_option
@json_option
@handle_errors
def build(paths, strategies, name, db, chroma_url, embedder, ollama_host, include, exclude, max_file_size,
          encoding, full, no_wait, lang, stem, fold, stopwords, bm25_engine, quiet, as_json):
    """Chunk, embed and store: one Chroma collection (+ BM25 index) per strategy.

    Only new and changed files are chunked and embedded again; the previous version
    keeps answering queries until the new one is complete."""
    from .building import build as run_build

    note = (lambda msg: None) if quiet else (lambda msg: click.echo(msg, err=True))
    reports = run_build(
        list(paths), list(strategies) or [DEFAULT_STRATEGY], db=db, chroma_url=chroma_url, embedder=embedder,
        ollama_host=ollama_host, include=include, exclude=exclude, max_file_size=max_file_size, encoding=encoding,
        name=name, full=full, wait=not no_wait, lang=lang, stem=stem, fold=fold, stopwords=stopwords,
        bm25_engine=bm25_engine,
        progress=ClickProgress(quiet), on_message=note,
    )
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in reports], ensure_ascii=False, indent=1))
        return
    click.echo(f"{'strategy':<22} {'mode':<12} {'files':>5} {'chunks':>6} {'avgTok':>6} {'maxTok':>6} "
               f"{'embedded':>8} {'cached':>6} {'time':>7}")
    for r in reports:
        click.echo(f"{r.strategy:<22} {r.mode:<12} {r.files:>5} {r.chunks:>6} {r.avg_tokens:>6.0f} {r.max_tokens:>6} "
                   f"{r.embedded:>8} {r.cache_hits:>6} {_fmt_seconds(r.seconds):>7}")
    for r in reports:
        detail = [f"embedder {r.embedder}", f"bm25 {r.analyzer}"]
        if r.reason:
            detail.append(f"full build: {r.reason}")
        if r.mode != "full":
            detail.append(f"files {r.added} added, {r.changed} changed, {r.removed} removed, {r.unchanged} unchanged")
        timing = ", ".join(f"{k} {_fmt_seconds(v)}" for k, v in r.timings.items() if v >= 0.05)
        if timing:
            detail.append(f"time: {timing}")
        click.echo(f"{r.strategy}: " + "; ".join(detail))
        for note_line in r.notes:
            click.echo(f"{r.strategy}: {note_line}")
    seen = set()
    for r in reports:
        for item in r.warnings + r.skipped:
            line = f"{'warning' if item in r.warnings else 'skipped'} {item.doc_id}: {item.reason}"
            if line not in seen:
                seen.add(line)
                click.echo(line)
    if reports and reports[0].unsupported:
        listing = ", ".join(f"{ext} ×{n}" for ext, n in sorted(reports[0].unsupported.items()))
        click.echo(f"ignored unsupported file types: {listing}")


@cli.command()
@click.argument("text")
@click.option("--strategy", "-s", default=None, help="Collection to search (default: the only one built).")
@click.option("--mode", "-m", type=click.Choice(["embedding", "bm25", "hybrid"]), default=None,
              help="Embedding similarity, BM25, or both fused [default: the collection's saved mode, else hybrid].")
@click.option("-k", "k", type=int, default=5, show_default=True, help="Number of results.")
@search_options
@click.option("--bm25-engine", type=click.Choice(["rank-bm25", "bm25s"]), default=None,
              help="Override the collection's BM25 engine.")
@store_options
@json_option
@handle_errors
def query(text, strategy, mode, k, fusion, alpha, rrf_weights, rrf_k, candidates, children_k, bm25_engine, db,
          chroma_url, embedder, ollama_host, as_json):
    """Search one collection; show rank, score, where the chunk lives, and its text."""
    from .searching import Index, check_query

    check_query(text)
    options = make_options(k, mode, fusion, alpha, rrf_weights, rrf_k, candidates, children_k)
    if strategy is None:
        strategy = _only_strategy(db, chroma_url)
    index = Index.open(strategy, db=db, chroma_url=chroma_url, embedder=embedder, ollama_host=ollama_host,
                       bm25_engine=bm25_engine)
    resolved = index.options(options)
    hits = index.search(text, resolved)
    if as_json:
        for hit in hits:
            click.echo(json.dumps(hit.to_dict(), ensure_ascii=False))
        return
    if not hits:
        click.echo("no results")
    for hit in hits:
        c = hit.chunk
        why = []
        if hit.embedding_rank is not None:
            why.append(f"embedding #{hit.embedding_rank}")
        if hit.bm25_rank is not None:
            why.append(f"bm25 #{hit.bm25_rank}")
        click.echo(f"#{hit.rank}  {hit.score:.4f}  {c.doc_id}:{c.start_line}-{c.end_line}  [{c.kind}]"
                   + (f"  ({', '.join(why)})" if resolved.mode == "hybrid" else ""))
        if c.header:
            click.echo("    " + c.header.replace("\n", "\n    "))
        click.echo("    " + c.text.replace("\n", "\n    "))
        click.echo()


@cli.command()
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--strategy", "-s", "strategies", multiple=True, required=True, metavar="S",
              help="Collection to tune (repeatable: strategies are compared too).")
@click.option("--folds", type=int, default=5, show_default=True, help="Cross-validation folds.")
@click.option("--save", is_flag=True, help="Store each collection's winning setting as its default search.")
@click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder of the documents the questions refer to (default: next to QUESTIONS).")
@click.option("--top", type=int, default=10, show_default=True, help="Settings to list.")
@store_options
@json_option
@quiet_option
@handle_errors
def tune(questions, strategies, folds, save, corpus, top, db, chroma_url, embedder, ollama_host, as_json, quiet):
    """Choose search settings on your own questions: modes × fusions (× strategies),
    cross-validated, with the gain over BM25 and embedding alone; --save keeps the winner."""
    from .evaluation import MRR_METRIC
    from .tuning import tune as run_tune

    note = (lambda msg: None) if quiet else (lambda msg: click.echo(msg, err=True))
    result = run_tune(questions, list(strategies), db=db, chroma_url=chroma_url, embedder=embedder,
                      ollama_host=ollama_host, corpus=corpus, folds=folds, save=save, progress=note)
    if as_json:
        for cand in result.candidates:
            click.echo(json.dumps({"row": "candidate", **cand.to_dict()}, ensure_ascii=False))
        click.echo(json.dumps({"row": "summary", **result.to_dict()}, ensure_ascii=False))
        return
    n = len(result.questions)
    ranked = sorted(result.candidates, key=lambda c: -c.mean(MRR_METRIC))
    width = max(len(c.label) for c in ranked[:top]) + 2
    click.echo(f"{n} questions; every setting scored on all of them (in-sample):")
    click.echo(f"{'strategy: setting':<{width}}{'MRR@10':>8}{'recall@1':>10}{'recall@5':>10}{'ctxTok@5':>10}")
    for c in ranked[:top]:
        r1, r5 = round(c.mean("recall@1") * n), round(c.mean("recall@5") * n)
        click.echo(f"{c.label:<{width}}{c.mean(MRR_METRIC):>8.3f}{f'{r1}/{n}':>10}{f'{r5}/{n}':>10}"
                   f"{sum(c.ctx_tokens) / n:>10.0f}")
    cv = {m: sum(v) / n for m, v in result.held_out.items()}
    click.echo()
    click.echo(f"cross-validated over {result.folds} folds (chosen on {result.folds - 1}/{result.folds} of the questions, "
               f"scored on the rest): MRR@10 {cv[MRR_METRIC]:.3f}, recall@1 {round(cv['recall@1'] * n)}/{n}, "
               f"recall@5 {round(cv['recall@5'] * n)}/{n}")
    for name in ("bm25", "embedding", "default"):
        mean, (lo, hi) = result.versus(name)
        verdict = "noise (interval spans 0)" if lo <= 0 <= hi else ("better" if mean > 0 else "worse")
        click.echo(f"  tuned vs {name:<10} MRR@10 {mean:+.3f} [{lo:+.3f}, {hi:+.3f}]  {verdict}")
    agree = max(result.chosen.count(label) for label in result.chosen)
    click.echo(f"  the same setting won {agree} of {result.folds} folds")
    click.echo()
    best = result.best
    click.echo(f"best on all questions: {best.label} (MRR@10 {best.mean(MRR_METRIC):.3f}, "
               f"ctxTok@5 {sum(best.ctx_tokens) / n:.0f})")
    if result.saved:
        click.echo(f"saved as the default search of {', '.join(result.saved)}: query, eval and the API use it "
                   "unless told otherwise (indexer list shows it)")
    else:
        click.echo("run again with --save to make it the collection's default")


@cli.command(name="list")
@store_options
@json_option
@handle_errors
def list_(db, chroma_url, embedder, ollama_host, as_json):
    """Collections in the index: strategy, parameters, embedder, size, build time, and the
    search settings saved by `indexer tune --save`."""
    from .searching import SearchOptions
    from .store import Store

    entries = Store(db, chroma_url).entries()
    if as_json:
        for e in entries:
            click.echo(json.dumps(e.__dict__, ensure_ascii=False))
        return
    if not entries:
        click.echo("no collections yet; build one: indexer build PATH --strategy headers")
        return
    click.echo(f"{'strategy':<22} {'embedder':<12} {'files':>5} {'chunks':>6} {'avgTok':>6}  {'built':<19}  "
               f"{'search':<44}  parameters")
    for e in entries:
        params = ",".join(f"{k}={v}" for k, v in e.params.items() if v is not None)
        saved = e.extra.get("search")
        search = SearchOptions().resolved(saved, e.embedder).describe() + (" (tuned)" if saved else "")
        click.echo(f"{e.strategy:<22} {e.embedder:<12} {e.files:>5} {e.chunks:>6} {e.avg_tokens:>6.0f}  "
                   f"{e.built_at[:19]:<19}  {search:<44}  {e.kind}:{params}")


@cli.command()
@click.option("--strategy", "-s", required=True, help="Collection to dump.")
@click.option("--doc", "doc_id", default=None, help="Only this document (its doc_id).")
@store_options
@json_option
@handle_errors
def dump(strategy, doc_id, db, chroma_url, embedder, ollama_host, as_json):
    """The stored chunks in document order with their spans, to inspect where cuts fall."""
    from .embeddings import canonical_name
    from .searching import Index
    from .store import Store

    store = Store(db, chroma_url)
    entry = store.find(strategy, canonical_name(embedder) if embedder else None)
    chunks = Index(store, entry).chunks(doc_id)
    for c in chunks:
        if as_json:
            click.echo(json.dumps(c.to_dict(), ensure_ascii=False))
            continue
        click.echo(f"--- {c.doc_id} [{c.start}..{c.end}] lines {c.start_line}-{c.end_line} {c.kind} "
                   f"{c.n_tokens} tok  {c.id}")
        if c.header:
            click.echo("  header: " + c.header.replace("\n", " | "))
        click.echo(c.text)


@cli.command()
@click.option("--strategy", "-s", required=True, help="Collection to remove.")
@store_options
@handle_errors
def drop(strategy, db, chroma_url, embedder, ollama_host):
    """Remove a collection (and its BM25 index and manifest)."""
    from .embeddings import canonical_name
    from .store import Store

    store = Store(db, chroma_url)
    entry = store.find(strategy, canonical_name(embedder) if embedder else None)
    with store.lock(entry.strategy, entry.embedder):
        store.unpublish(entry)
        store.delete_collection(entry.collection)
        if entry.parents:
            store.delete_collection(entry.parents)
        store.cleanup(entry.strategy, entry.embedder)
    click.echo(f"dropped {entry.strategy} ({entry.embedder}, {entry.chunks} chunks)")


@cli.command(name="eval")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--strategy", "-s", "strategies", multiple=True, required=True, metavar="S",
              help="Collection to evaluate (repeatable).")
@click.option("--mode", "-m", "modes", multiple=True, type=click.Choice(["embedding", "bm25", "hybrid"]),
              help="Search mode (repeatable; default all three).")
@click.option("-k", "ks", multiple=True, type=int, help="Cut-offs for recall (repeatable; default 1 and 5).")
@click.option("--embedder", "embedders", multiple=True, envvar=None, metavar="NAME",
              help="Evaluate the collections built with this embedder (repeatable: one row per embedder).")
@click.option("--db", type=click.Path(file_okay=False), envvar=ENV_DB, default=None, help="Index folder.")
@click.option("--chroma-url", envvar=ENV_CHROMA_URL, default=None, metavar="URL", help="Chroma server.")
@click.option("--ollama-host", envvar="OLLAMA_HOST", default=None, metavar="URL", help="Ollama server.")
@click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder of the documents the questions refer to (default: next to QUESTIONS).")
@search_options
@click.option("--budget", type=int, default=None, metavar="TOKENS",
              help="Also score at equal prompt cost: hits in rank order up to this many tokens.")
@click.option("--by-tag", is_flag=True, help="Recall and MRR per question tag.")
@click.option("--compare", nargs=2, multiple=True, metavar="A B",
              help="Paired difference of two rows (strategy/mode), two modes, or two strategies.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True), default=None, metavar="FILE",
              help="Write every number and per-question results as JSON ('-' for stdout).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Write the table as CSV.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Recall against context tokens: .png (needs matplotlib), .html or .svg.")
@quiet_option
@handle_errors
def eval_(questions, strategies, modes, ks, embedders, db, chroma_url, ollama_host, corpus, fusion, alpha,
          rrf_weights, rrf_k, candidates, children_k, budget, by_tag, compare, json_path, csv_path, plot_path, quiet):
    """Score stored strategies on a question set: recall@k, MRR, strict hits, context cost,
    with 95% intervals — the table to choose a chunking strategy by."""
    from . import report
    from .evaluation import evaluate

    note = (lambda msg: None) if quiet else (lambda msg: click.echo(msg, err=True))
    result = evaluate(
        questions, list(strategies), tuple(modes) or ("embedding", "bm25", "hybrid"), tuple(ks) or (1, 5), db=db,
        chroma_url=chroma_url, embedders=tuple(embedders) or (None,), ollama_host=ollama_host, corpus=corpus,
        budget=budget, options=make_options(5, None, fusion, alpha, rrf_weights, rrf_k, candidates, children_k),
        progress=lambda row: note(f"evaluated {row.strategy}/{row.mode} ({row.embedder}) in {row.seconds:.1f}s"),
    )
    to_stdout = json_path == "-"
    if json_path:
        data = result.to_dict()
        data["compare"] = [c for a, b in compare for c in result.compare(a, b)]
        text = json.dumps(data, ensure_ascii=False, indent=1)
        if to_stdout:
            click.echo(text)
        else:
            Path(json_path).write_text(text + "\n", encoding="utf-8")
    if csv_path:
        Path(csv_path).write_text(report.to_csv(result), encoding="utf-8")
    if plot_path:
        report.plot(result, plot_path)
    if to_stdout:
        return
    click.echo(f"{len(result.questions)} questions from {questions}; documents in {result.source}")
    click.echo(report.table(result))
    click.echo()
    click.echo(report.intervals(result))
    extra = report.extras(result)
    if extra:
        click.echo()
        click.echo(extra)
    if by_tag:
        click.echo()
        click.echo(report.by_tag(result))
    for a, b in compare:
        click.echo()
        click.echo(report.comparison(result, a, b))
    for path, what in ((json_path, "JSON"), (csv_path, "CSV"), (plot_path, "plot")):
        if path:
            note(f"wrote {what} to {path}")
