"""Commands that measure on a question set: `eval` and `tune`."""

from __future__ import annotations

from pathlib import Path

import click

from ..tables import printable
from .common import echo_json, handle_errors, note_function, settings_from
from .options import (
    BUDGETS, db_options, json_option, make_options, ollama_option, quiet_option, search_options,
    read_options,
)
from .library import LibraryChoice, LibraryOption, modes, parameter_default, rule


def _evaluate_default(name: str):
    from ..evaluation import evaluate

    return parameter_default(evaluate, name)


def _tune_default(name: str):
    from ..evaluation.tune import tune

    return parameter_default(tune, name)


def register(cli: click.Group) -> None:
    cli.add_command(eval_)
    cli.add_command(tune)


# the question file's format, shown by `eval --help` and `tune --help` (\b: kept as written)
QUESTION_FORMAT = """\b
QUESTIONS is a file of JSON lines, one question (a JSON object) a line:
  id        required: a string or a whole number, unique in the file
  question  required: the text that is searched for
  doc_id    required (or targets): the expected document, its path relative
            to the corpus folder with / between folders
  section   heading path of the expected section: "Title › Heading"
  symbol    the expected code definition: "QueueWorker.drain"
  span      [start, end]: character offsets of the expected passage
  answer    the answer, word for word as in the document (within the
            section, symbol or span): one per question; a strict hit holds
            all of it
  tags      a string or a list of strings (--by-tag)
  targets   whole documents instead of doc_id, several with grades:
            [{"doc_id": "a.md", "grade": 2}, {"doc_id": "b.md", "grade": 1}]
A hit overlaps the target passage (section, symbol, span, else the answer);
a doc_id alone targets its whole document. Every field but id, question and
doc_id/targets may be left out; a wrong type is named with its line."""


def _made_up_default(name: str):
    from ..questions import on_demand

    return {"n": on_demand.QUESTIONS}.get(name) or parameter_default(on_demand.generated_questions, name)


DEFAULT_N = -1  # `--generate` given without N: the library's default number (on_demand.QUESTIONS)


def generate_option(func):
    func = click.option("--seeds", type=int, default=None, cls=LibraryOption,
                        help=lambda: "With --generate: how many made-up sets (seeds --seed, --seed + 1, ...) "
                                     "are pooled; more make the advice steadier "
                                     f"[default: {_made_up_default('seeds')}].")(func)
    func = click.option("--seed", type=int, default=None, cls=LibraryOption,
                        help=lambda: "With --generate: the seed of the first made-up set (the same seed makes the "
                                     f"same set; each seed's set is kept apart) [default: {_made_up_default('seed')}]."
                        )(func)
    return click.option("--generate", "generate", type=int, default=None, is_flag=False, flag_value=DEFAULT_N,
                        metavar="[N]", cls=LibraryOption,
                        help=lambda: "No question file? Make up to N questions a set from the documents "
                                     f"[default N: {_made_up_default('n')}] (offline, see `indexer questions`), "
                                     "kept in the index folder and reused while the documents are unchanged; "
                                     "the output says which rows the made-up questions can tell apart.")(func)


def _question_file(questions, generate, seed, seeds, strategies, settings, built_with, corpus,
                   note) -> tuple[str, str | None, bool]:
    """The question file to score on, the corpus folder, and whether the questions are
    made up: the file given, or made with --generate."""
    if questions and generate is not None:
        raise click.UsageError("give a question file or --generate [N], not both")
    if not questions and generate is None:
        raise click.UsageError("give a question file, or --generate [N] to make questions from the documents")
    if questions:
        if seed is not None or seeds is not None:
            raise click.UsageError("--seed and --seeds choose made-up questions: they go with --generate, "
                                   "not a question file")
        return questions, corpus, False
    if generate != DEFAULT_N and generate < 1:
        raise click.BadParameter(f"must be at least 1, not {generate}", param_hint="--generate")
    if seeds is not None and seeds < 1:
        raise click.BadParameter(f"must be at least 1, not {seeds}", param_hint="--seeds")
    from ..questions.on_demand import CAVEAT, generated_questions

    made = generated_questions(_made_up_default("n") if generate == DEFAULT_N else generate, list(strategies),
                               settings=settings, built_with=built_with, corpus=corpus,
                               seed=_made_up_default("seed") if seed is None else seed,
                               seeds=_made_up_default("seeds") if seeds is None else seeds)
    note(made.describe())
    note(f"note: {CAVEAT}")
    if made.made is not None and made.made.shortfall and generate != DEFAULT_N:
        click.echo(f"warning: {made.made.shortfall}; scoring on those", err=True)
    for line in made.made.notes if made.made is not None else ():
        note(f"note: {line}")
    return str(made.path), str(made.roots[0]) if len(made.roots) == 1 else corpus, True


def _writable(path: str | None, option: str) -> None:
    """Check an output file's folder before the work that ends by writing it."""
    if path and not Path(path).expanduser().resolve().parent.is_dir():
        raise click.BadParameter(f"the folder of {path} does not exist; create it first", param_hint=option)


@click.command(name="eval", epilog=QUESTION_FORMAT)
@click.argument("questions", required=False, type=click.Path(exists=True, dir_okay=False))
@generate_option
@click.option("--strategy", "-s", "strategies", multiple=True, metavar="S", cls=LibraryOption,
              help=lambda: f"Collection to evaluate (repeatable) [default: {rule()}].")
@click.option("--mode", "-m", "modes", multiple=True, type=LibraryChoice(modes),
              help="Search mode (repeatable; default all three).")
@click.option("-k", "ks", multiple=True, type=int, cls=LibraryOption,
              help=lambda: "Cut-offs for recall (repeatable; default "
                           f"{' and '.join(map(str, _evaluate_default('ks')))}).")
@click.option("--embedder", "embedders", multiple=True, metavar="NAME",
              help="Evaluate the collections built with this embedder (repeatable: one row per embedder).")
@db_options
@ollama_option
@click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder of the documents the questions refer to (default: next to QUESTIONS).")
@search_options
@click.option("--budget", "budgets", multiple=True, type=BUDGETS, metavar="TOKENS",
              help="Also score answer-sized context (query --budget) and whole chunks cut at this many tokens "
                   "against the questions' answers (repeatable, or a list: 100,200,400,800); hits in rank order "
                   "up to the first budget give recall and MRR at equal cost.")
@click.option("--by-tag", is_flag=True, help="Recall and MRR per question tag.")
@click.option("--boundaries", "show_boundaries", is_flag=True,
              help="Also where each collection's stored chunks cut: inside words, sentences, tables, code, "
                   "list items, functions, and what they keep whole.")
@click.option("--compare", nargs=2, multiple=True, metavar="A B",
              help="Paired difference of two rows (strategy/mode), two modes, or two strategies.")
@click.option("--require-fresh", is_flag=True,
              help="Fail when documents changed since a collection was built, or a collection lacks documents "
                   "some questions are about (default: warn, and leave those questions out).")
@json_option
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Write the table as CSV.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Recall against context tokens: .png (needs matplotlib), .html or .svg.")
@quiet_option
@handle_errors
def eval_(questions, generate, seed, seeds, strategies, modes, ks, embedders, db, chroma_url, ollama_host, corpus, fusion,
          alpha, rrf_weights, rrf_k, candidates, children_k, budgets, by_tag, show_boundaries, compare, require_fresh,
          as_json, csv_path, plot_path, quiet):
    """Score stored strategies on a question set: recall@k, MRR@10, strict hits, context
    cost, with 95% intervals — the table to choose a chunking strategy by. No question
    file? --generate makes a set from the documents, and says which rows it cannot tell apart."""
    from ..evaluation import evaluate, report
    from ..evaluation.advice import advice_of
    from ..evaluation.coverage import dropped, left_out_warning

    options = make_options(5, None, fusion, alpha, rrf_weights, rrf_k, candidates, children_k)
    options.check()  # before any work
    _writable(csv_path, "--csv")
    _writable(plot_path, "--plot")
    if plot_path:
        report.check_plot(plot_path)  # matplotlib is missing: say so now, not after the evaluation
    note = note_function(quiet)
    settings = settings_from(db, chroma_url, None, ollama_host)
    questions, corpus, made_up = _question_file(questions, generate, seed, seeds, strategies, settings,
                                                (embedders or (None,))[0], corpus, note)
    result = evaluate(
        questions, list(strategies), tuple(modes) or _evaluate_default("modes"), tuple(ks) or _evaluate_default("ks"),
        settings=settings, built_with=tuple(embedders) or (None,),
        corpus=corpus, budget=tuple(b for group in budgets for b in group), require_fresh=require_fresh,
        compare=tuple(compare),
        options=options,
        progress=lambda row: note(f"evaluated {row.strategy}/{row.mode} ({row.embedder}) in {row.seconds:.1f}s"),
    )
    if result.left_out:
        click.echo(f"warning: {left_out_warning(result.left_out, len(result.questions))}", err=True)
    for name, files in result.stale.items():
        click.echo(f"warning: {name} was built from other versions of {len(files)} file(s) "
                   f"({', '.join(map(printable, files[:3]))}{' ...' if len(files) > 3 else ''}); its numbers may not hold — rebuild it, "
                   "or pass --require-fresh to make this an error", err=True)
    quality = None
    if show_boundaries:
        from ..evaluation.boundaries import stored_boundaries

        quality = stored_boundaries(sorted({r.strategy for r in result.rows}), result.source, settings=settings,
                                    built_with=tuple(embedders) or (None,))
    if csv_path:
        Path(csv_path).write_text(report.to_csv(result, quality), encoding="utf-8")
    if plot_path:
        report.plot(result, plot_path)
    advice = advice_of(result) if made_up else None
    if as_json:
        echo_json(report.json_rows(result, compare, quality) + ([{"row": "advice", **advice.to_dict()}] if advice else []))
        return
    left = f" ({len(dropped(result.left_out))} left out, see the warning)" if result.left_out else ""
    click.echo(f"{len(result.questions)} questions from {questions}{left}; documents in {result.source}")
    click.echo(report.table(result))
    click.echo()
    click.echo(report.intervals(result))
    if advice:
        click.echo()
        click.echo(advice.text())
    extra = report.extras(result)
    if extra:
        click.echo()
        click.echo(extra)
    if quality:
        click.echo()
        click.echo(report.boundaries(result, quality))
    if by_tag:
        click.echo()
        click.echo(report.by_tag(result))
    for a, b in compare:
        click.echo()
        click.echo(report.comparison(result, a, b))
    for path, what in ((csv_path, "CSV"), (plot_path, "plot")):
        if path:
            note(f"wrote {what} to {path}")


@click.command(epilog=QUESTION_FORMAT)
@click.argument("questions", required=False, type=click.Path(exists=True, dir_okay=False))
@generate_option
@click.option("--strategy", "-s", "strategies", multiple=True, metavar="S", cls=LibraryOption,
              help=lambda: f"Collection to tune (repeatable: strategies are compared too) [default: {rule()}].")
@click.option("--folds", type=int, cls=LibraryOption, default_from=lambda: _tune_default("folds"),
              help="Cross-validation folds.")
@click.option("--save", is_flag=True,
              help="Store each collection's winning setting as its default search, where the cross-validation "
                   "shows it better than the current default (else the default is kept, and the output says why).")
@click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder of the documents the questions refer to (default: next to QUESTIONS).")
@click.option("--top", type=int, default=10, show_default=True, help="Settings to list.")
@read_options
@json_option
@quiet_option
@handle_errors
def tune(questions, generate, seed, seeds, strategies, folds, save, corpus, top, db, chroma_url, ollama_host, embedder,
         as_json, quiet):
    """Choose search settings on your own questions: modes × fusions (× strategies),
    cross-validated, with the gain over BM25 and embedding alone; --save keeps the winner
    where the cross-validation shows it better than the collection's current default. No
    question file? --generate makes a set from the documents."""
    from ..evaluation import MRR_METRIC, NDCG_METRIC
    from ..evaluation.advice import tune_advice
    from ..evaluation.coverage import left_out_warning
    from ..evaluation.tune import tune as run_tune
    from ..evaluation.tune import verdict
    from ..tables import table

    settings = settings_from(db, chroma_url, None, ollama_host)
    questions, corpus, made_up = _question_file(questions, generate, seed, seeds, strategies, settings, embedder,
                                                corpus, note_function(quiet))
    result = run_tune(questions, list(strategies), settings=settings,
                      built_with=embedder, corpus=corpus, folds=folds, save=save, progress=note_function(quiet))
    if result.left_out:
        click.echo(f"warning: {left_out_warning(result.left_out, len(result.questions))}", err=True)
    advice = tune_advice(result) if made_up else None
    if as_json:
        echo_json([{"row": "candidate", **c.to_dict()} for c in result.candidates]
                  + [{"row": "summary", **result.to_dict()}] + ([{"row": "advice", **advice.to_dict()}] if advice else []))
        return
    n = len(result.questions)
    ranked = sorted(result.candidates, key=lambda c: -c.mean(MRR_METRIC))
    rows = [[c.label, f"{c.mean(MRR_METRIC):.3f}", f"{c.mean(NDCG_METRIC):.3f}", f"{round(c.mean('recall@1') * n)}/{n}",
             f"{round(c.mean('recall@5') * n)}/{n}", f"{sum(c.ctx_tokens) / n:.0f}"] for c in ranked[:top]]
    click.echo(table(["strategy: setting", "MRR@10", "nDCG@10", "recall@1", "recall@5", "ctxTok@5"], rows,
                     f"{n} questions; every setting scored on all of them (in-sample):"))
    cv = {m: sum(v) / n for m, v in result.held_out.items()}
    click.echo()
    click.echo(f"cross-validated over {result.folds} folds (chosen on {result.folds - 1}/{result.folds} of the questions, "
               f"scored on the rest): MRR@10 {cv[MRR_METRIC]:.3f}, nDCG@10 {cv[NDCG_METRIC]:.3f}, "
               f"recall@1 {round(cv['recall@1'] * n)}/{n}, "
               f"recall@5 {round(cv['recall@5'] * n)}/{n}")
    for name in ("bm25", "embedding", "default"):
        mean, (lo, hi) = result.versus(name)
        click.echo(f"  tuned vs {name:<10} MRR@10 {mean:+.3f} [{lo:+.3f}, {hi:+.3f}]  {verdict(lo, hi)}")
    agree = max(result.chosen.count(label) for label in result.chosen)
    click.echo(f"  the same setting won {agree} of {result.folds} folds")
    click.echo()
    best = result.best
    click.echo(f"best on all questions: {best.label} (MRR@10 {best.mean(MRR_METRIC):.3f}, "
               f"ctxTok@5 {sum(best.ctx_tokens) / n:.0f})")
    for line in advice.lines() if advice else ():
        click.echo(line)
    for d in result.decisions:
        if d.saved:
            click.echo(f"saved as the default search of {d.collection}: {d.reason()}; query, eval and the API "
                       "use it unless told otherwise (indexer list shows it)")
        elif d.save:
            click.echo(f"{d.collection}: run again with --save to make it the default: {d.reason()}")
        else:
            click.echo(f"{'kept' if save else '--save would keep'} the current default of {d.collection}: {d.reason()}")
