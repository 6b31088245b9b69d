"""The English model (bge-small-en, `indexer/embeddings/bge.py`): its captures for the
fusion labs, how many chunks pass its 512 wordpieces, and its speed run alone or in
padded batches.

    python -m bench.labs.english_lab capture --sets en,code,xquad-en --embedders use-m3,bge-small-en
    python -m bench.labs.english_lab lengths --sets en,xquad-en,code,code-pypi,code-lib2,scipy-docs,man-pages
    python -m bench.labs.english_lab speed --sets en,code --n 200
    python -m bench.labs.english_lab compare --sets en,code,xquad-en --json out.json
    python -m bench.labs.english_lab ratios --sets en,code,xquad-en
    python -m bench.labs.english_lab build --sets xquad-en --embedders bge-small-en,use-m3 [--unit-vectors]
    python -m bench.labs.english_lab rule --sets en,xquad-en,code,scipy-docs,man-pages,tr,xquad-tr
    python -m bench.labs.english_lab fit --kind code --his 0.5,0.6,0.7,0.8 --los 0.1,0.2,0.3,0.4,0.5

`capture` is bench/labs/default_lab.py's capture (a build through the real pipeline, then
the embedding side's candidates for every question; a build embeds its chunks only), and
the CPU seconds of each capture printed. `calibrate_lab prepare` / `fit` then read the captures as for the
other embedders. `lengths`: per set × strategy, the chunks whose `indexed_text` is longer
than the model reads (512 wordpieces, [CLS] and [SEP] included). `speed`: chunks per
second and CPU seconds of `auto` chunks embedded one at a time (what indexer does) and in
padded batches of 16, the cosine between the two, and the peak memory of each.
`compare` (after `capture`): per set × strategy, each side and the default search of both
embedders (recall@1, recall@5, MRR@10, nDCG@10), the English model's default minus use-m3's (paired
95% interval: what "no embedder named" changes), and whether each default holds the rule
(never below its better single side, within the interval), then a summary per set.
`rule`: the embedder a build of each set's folder with none named gets, and why. `fit` (after
`calibrate_lab prepare`): the English model's embedding share per kind of collection, as
`calibrate_lab fit` chose the others' (maximin: the range whose worst cell against the
better single side is best), over every set of the kind, then leave-one-set-out: each
set's cells under the range fitted on the other sets. `ratios`: what each build's probes
measured of its embedder (`retrieval.worth`: embedding MRR@10 over BM25's on made-up
known-item probes), per set × strategy × embedder, for `worth.FULL_AT`. `build`: one cold
build of `auto` per set × embedder in a fresh index folder, the model loaded before the
clock starts: CPU seconds, wall seconds, peak RSS (`--unit-vectors`: every unit of
answer-sized context embedded at build time too, the sentence pass builds had before "Pay
once").
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from bench.common import machine, save_json, table
from bench.labs.default_lab import capture, strategies_for
from bench.public_sets import materialize

ALL_SETS = "en,code,xquad-en,code-pypi,code-lib2,scipy-docs,man-pages"


def run_captures(sets: list[str], strategies: list[str], embedders: list[str], force: bool) -> None:
    for embedder in embedders:
        for name in sets:
            for strategy in strategies or strategies_for(name):
                c0, t0 = time.process_time(), time.perf_counter()
                capture(name, strategy, embedder, force)
                print(f"  {name} {strategy} {embedder}: {time.process_time() - c0:.0f} CPU s, "
                      f"{time.perf_counter() - t0:.0f} s", flush=True)


def chunk_texts(folder: Path, strategy: str) -> list[str]:
    from indexer.indexing.pipeline import iter_chunks

    _, _, stream = iter_chunks([folder], [strategy])
    return [c.indexed_text for _, _, chunks in stream for c in chunks]


def untruncated():
    """The model's tokenizer without its cut: counts every wordpiece of a text."""
    from tokenizers import Tokenizer

    from indexer.embeddings.bge import model_folder

    tokenizer = Tokenizer.from_file(str(model_folder() / "tokenizer.json"))
    tokenizer.no_truncation()
    return tokenizer


def lengths(sets: list[str], strategies: list[str]) -> str:
    from indexer.embeddings.bge import MAX_WORDPIECES

    tokenizer = untruncated()
    rows = []
    for name in sets:
        folder, _ = materialize(name)
        for strategy in strategies:
            counts = sorted(len(e.ids) for e in tokenizer.encode_batch(chunk_texts(folder, strategy)))
            over = [n for n in counts if n > MAX_WORDPIECES]
            rows.append([name, strategy, len(counts), counts[len(counts) // 2], counts[-1],
                         f"{len(over)} ({100 * len(over) / len(counts):.1f}%)",
                         f"{100 * sum(n - MAX_WORDPIECES for n in over) / sum(counts):.1f}%"])
    return table(["set", "strategy", "chunks", "median wordpieces", "max", f"over {MAX_WORDPIECES}",
                  "wordpieces cut"], rows)


def batched(model, texts: list[str], size: int = 16):
    import numpy as np

    out = []
    for i in range(0, len(texts), size):
        encodings = model.tokenizer.encode_batch(texts[i:i + size])
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), np.int64)
        mask = np.zeros_like(ids)
        for j, e in enumerate(encodings):
            ids[j, :len(e.ids)], mask[j, :len(e.ids)] = e.ids, 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        out.append(model.session.run(None, feed)[0][:, 0])
    return np.concatenate(out)


def speed(sets: list[str], n: int) -> str:
    from indexer.embeddings.base import normalise
    from indexer.embeddings.bge import BertOnnx

    model = BertOnnx.load(2)
    model.cls(["warm up"])
    rows = []
    for name in sets:
        folder, _ = materialize(name)
        texts = chunk_texts(folder, "auto")[:n]
        wordpieces = sum(len(e.ids) for e in model.tokenizer.encode_batch(texts)) / len(texts)
        timings = {}
        for how, run in (("alone", model.cls), ("batches of 16", lambda t: batched(model, t))):
            c0, t0 = time.process_time(), time.perf_counter()
            timings[how] = (normalise(run(texts)), time.perf_counter() - t0, time.process_time() - c0,
                            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        cosine = (timings["alone"][0] * timings["batches of 16"][0]).sum(1)
        for how, (_, wall, cpu, rss) in timings.items():
            rows.append([name, how, len(texts), f"{wordpieces:.0f}", f"{len(texts) / wall:.1f}",
                         f"{cpu / len(texts) * 1000:.0f}", f"{rss:.0f}",
                         f"{cosine.min():.4f} / {cosine.mean():.4f}" if how != "alone" else "1 (itself)"])
    return table(["set", "run", "chunks", "mean wordpieces", "chunks/s", "CPU ms per chunk", "peak RSS MiB so far",
                  "cosine to alone (min / mean)"], rows)


METRICS = ("recall@1", "recall@5", "mrr@10", "ndcg@10")
MODES = ("embedding", "bm25", "hybrid")


def compare_cells(name: str, strategies: list[str], embedders: list[str]) -> list[dict]:
    from bench.labs.default_lab import LAB
    from indexer.evaluation.metrics import paired_difference
    from indexer.evaluation.run import evaluate
    from indexer.settings import Settings

    folder, questions = materialize(name)
    db = LAB / f"db-{name}"
    ev = evaluate(questions, strategies, MODES, (1, 5), built_with=tuple(embedders), corpus=folder,
                  settings=Settings.load(db=db))
    rows = {(r.strategy, r.embedder, r.mode): r for r in ev.rows}
    out = []
    for strategy in dict.fromkeys(r.strategy for r in ev.rows):
        cell = {"set": name, "strategy": strategy, "questions": len(ev.questions), "values": {}, "diff": {},
                "holds": {}}
        for emb in embedders:
            for mode in MODES:
                row = rows[(strategy, emb, mode)]
                cell["values"][f"{emb}/{mode}"] = {m: round(sum(row.per_question(m)) / row.n, 4) for m in METRICS}
            for m in METRICS:
                default = rows[(strategy, emb, "hybrid")].per_question(m)
                better = max((rows[(strategy, emb, side)].per_question(m) for side in ("embedding", "bm25")), key=sum)
                mean, (lo, hi) = paired_difference(default, better)
                cell["holds"][f"{emb}/{m}"] = [round(mean, 4), round(lo, 4), round(hi, 4)]
        base, new = embedders
        for mode in MODES:
            for m in METRICS:
                mean, (lo, hi) = paired_difference(rows[(strategy, new, mode)].per_question(m),
                                                   rows[(strategy, base, mode)].per_question(m))
                cell["diff"][f"{mode}/{m}"] = [round(mean, 4), round(lo, 4), round(hi, 4)]
        out.append(cell)
    return out


def interval(d: list[float], scale: float = 1.0) -> str:
    f = (lambda x: f"{x * scale:+.1f}") if scale != 1.0 else (lambda x: f"{x:+.3f}")
    return f"{f(d[0])} [{f(d[1])}, {f(d[2])}]"


def compare_report(cells: list[dict], embedders: list[str]) -> str:
    base, new = embedders
    rows = []
    for c in cells:
        v = c["values"]
        fmt = {m: (lambda x: f"{100 * x:.1f}") if m.startswith("recall") else (lambda x: f"{x:.3f}") for m in METRICS}
        for m in METRICS:
            scale = 100.0 if m.startswith("recall") else 1.0
            rows.append([c["set"], c["strategy"], m,
                         " / ".join(fmt[m](v[f"{base}/{mode}"][m]) for mode in MODES),
                         " / ".join(fmt[m](v[f"{new}/{mode}"][m]) for mode in MODES),
                         interval(c["diff"][f"hybrid/{m}"], scale), interval(c["diff"][f"embedding/{m}"], scale),
                         interval(c["holds"][f"{new}/{m}"], scale)])
    return table(["set", "strategy", "metric", f"{base} emb / bm25 / default", f"{new} emb / bm25 / default",
                  f"default {new} - {base} [95%]", f"embedding {new} - {base} [95%]",
                  f"{new} default - better side [95%]"], rows)


def rule_pick(name: str) -> str:
    """The embedder a build of the set's folder with none named gets, and why."""
    from indexer.indexing.embedder_choice import embedder_for, samples
    from indexer.loaders import discover
    from indexer.settings import Settings
    from indexer.text.analyzer import detect_language

    found = discover([materialize(name)[0]])
    sample = samples(found, None)
    choice = embedder_for(Settings.load(embedder="auto"), found, detect_language(sample), sample)
    return f"{choice.name} ({choice.why})"


def verdict(d: list[float]) -> str:
    return "above" if d[1] > 0 else "below" if d[2] < 0 else "noise"


def summary(cells: list[dict], embedders: list[str]) -> str:
    """Per set: `auto`'s default of each embedder, the difference and the embedding side's
    (paired 95%), then over every strategy × metric how many differences are above zero,
    within noise or below, and the worst cell of each default against its better side."""
    base, new = embedders
    rows = []
    for name in dict.fromkeys(c["set"] for c in cells):
        mine = [c for c in cells if c["set"] == name]
        auto = next(c for c in mine if c["strategy"] == "auto")

        def fig(emb: str, mode: str) -> str:
            v = auto["values"][f"{emb}/{mode}"]
            return f"{100 * v['recall@1']:.1f} / {100 * v['recall@5']:.1f} / {v['mrr@10']:.3f} / {v['ndcg@10']:.3f}"

        def counts(key: str) -> str:
            got = [verdict(c["diff"][f"{key}/{m}"]) for c in mine for m in METRICS]
            return " / ".join(str(got.count(v)) for v in ("above", "noise", "below"))

        def worst(emb: str) -> str:
            # cells whose interval is under zero (below the better side), then the lowest MRR@10
            below = [f"{c['strategy']} {m}" for c in mine for m in METRICS if c["holds"][f"{emb}/{m}"][2] < 0]
            cell = min(mine, key=lambda c: c["holds"][f"{emb}/mrr@10"][0])
            return f"{', '.join(below) or 'none'}; {interval(cell['holds'][f'{emb}/mrr@10'])} ({cell['strategy']})"

        rows.append([name, auto["questions"], fig(base, "hybrid"), fig(new, "hybrid"),
                     interval(auto["diff"]["hybrid/recall@1"], 100), interval(auto["diff"]["hybrid/recall@5"], 100),
                     interval(auto["diff"]["hybrid/mrr@10"]),
                     fig(base, "embedding"), fig(new, "embedding"), interval(auto["diff"]["embedding/mrr@10"]),
                     counts("hybrid"), counts("embedding"), worst(base), worst(new)])
    return table(["set", "questions", f"{base} default R@1 / R@5 / MRR@10 / nDCG@10", f"{new} default",
                  "R@1 difference [95%]", "R@5 difference [95%]", "MRR@10 difference [95%]", f"{base} embedding alone",
                  f"{new} embedding alone", "embedding MRR@10 difference",
                  "default: above / noise / below (strategy × metric)", "embedding: above / noise / below",
                  f"{base} default - better side: cells below; lowest MRR@10", f"{new} same"], rows)


KIND_SETS = {"code": ("code", "code-pypi", "code-lib2"), "prose": ("en", "xquad-en", "scipy-docs", "man-pages")}


def cell_scores(col: dict, ranges: list[tuple], covs: list[tuple]) -> dict:
    """One prepared collection: each side's (MRR@10, recall@1), and the default's under
    every alpha range × coverage range."""
    from bench.labs import calibrate_lab

    sides = calibrate_lab.sides(col)
    grid = {}
    for rng in ranges:
        for cov in covs:
            m, r1, _ = calibrate_lab.score(col, "real", calibrate_lab.adaptive(rng, cov))
            grid[(rng, cov)] = (m, r1)
    return {"better": (max(v[0] for v in sides.values()), max(v[1] for v in sides.values())), "grid": grid}


def fit_kind(kind: str, embedder: str, ranges: list[tuple], covs: list[tuple], size: str = "") -> str:
    from bench.labs import calibrate_lab
    from indexer.retrieval.fusion import size_of

    cells: dict[str, list[tuple[str, dict]]] = {}
    for name in KIND_SETS[kind]:
        for col in calibrate_lab.load(f"{name}--*--{embedder}"):
            if not size or size_of(col["avg_tokens"]) == size:
                cells.setdefault(name, []).append((col["strategy"], cell_scores(col, ranges, covs)))
    keys = [(r, c) for r in ranges for c in covs]

    def against(cell: dict, key) -> tuple[float, int, bool]:
        m, r1 = cell["grid"][key]
        dm, dr = m - cell["better"][0], r1 - cell["better"][1]
        return dm, dr, calibrate_lab.holds(dm, dr)

    def best(names: list[str]):
        def score(key):
            got = [against(c, key) for n in names for _, c in cells[n]]
            return sum(g[2] for g in got), round(min(g[0] for g in got), 4), sum(
                c["grid"][key][0] for n in names for _, c in cells[n])
        return max(keys, key=score)

    def label(key) -> str:
        (lo, hi), (clo, chi) = key
        return f"{lo:g}-{hi:g} by {clo:g}-{chi:g}"

    rows = []
    whole = best(list(cells))
    for name in cells:
        key = best([n for n in cells if n != name]) if len(cells) > 1 else whole
        got = [against(c, key) for _, c in cells[name]]
        rows.append([name, label(key), len(got), sum(g[2] for g in got), f"{min(g[0] for g in got):+.4f}",
                     f"{min(g[1] for g in got):+d}",
                     ", ".join(s for (s, _), g in zip(cells[name], got) if not g[2]) or "-"])
    got = [(n, s, against(c, whole)) for n in cells for s, c in cells[n]]
    rows.append(["all", label(whole), len(got), sum(g[2] for _, _, g in got), f"{min(g[2][0] for g in got):+.4f}",
                 f"{min(g[2][1] for g in got):+d}", ", ".join(f"{n}/{s}" for n, s, g in got if not g[2]) or "-"])
    return table(["held-out set", "range by coverage (fitted on the others)", "cells", "hold",
                  "worst MRR@10 - better side", "worst recall@1 - better side", "cells that fail"], rows)


def ratios(sets: list[str], embedders: list[str]) -> str:
    from bench.labs.default_lab import LAB
    from indexer.settings import Settings
    from indexer.store import Store

    rows = []
    for name in sets:
        db = LAB / f"db-{name}"
        if not db.exists():
            continue
        for e in Store(Settings.load(db=db)).catalogue.entries():
            m = (e.extra.get("fusion") or {}).get("measured") or {}
            if e.embedder in embedders and m:
                kind = e.extra["fusion"].get("kind", "")
                rows.append([name, e.strategy, e.embedder, kind, f"{e.avg_tokens:.0f}", m.get("probes"),
                             m.get("embedding_mrr"), m.get("bm25_mrr"), m.get("ratio")])
    return table(["set", "strategy", "embedder", "kind", "avgTok", "probes", "embedding MRR@10", "BM25 MRR@10",
                  "ratio"], rows)


def cold_build(name: str, embedder: str, unit_vectors: bool = False) -> dict:
    import shutil
    import tempfile

    from indexer.embeddings import get_embedder
    from indexer.indexing.building import build
    from indexer.indexing.options import BuildOptions
    from indexer.settings import Settings

    folder, _ = materialize(name)
    get_embedder(embedder).embed_documents(["warm up"])
    db = Path(tempfile.mkdtemp(prefix="english-lab-")) / "db"
    c0, t0 = time.process_time(), time.perf_counter()
    try:
        [report] = build([folder], ["auto"], BuildOptions(unit_vectors=unit_vectors),
                         settings=Settings.load(db=db, embedder=embedder))
    finally:
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        shutil.rmtree(db.parent, ignore_errors=True)
    return {"set": name, "embedder": embedder, "unit_vectors": unit_vectors, "chunks": report.chunks, "cpu_s": round(cpu, 1),
            "wall_s": round(seconds, 1), "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cmd", choices=("capture", "lengths", "speed", "compare", "fit", "ratios", "build", "rule"))
    parser.add_argument("--sets", default=ALL_SETS)
    parser.add_argument("--strategies", default="")
    parser.add_argument("--embedders", default="use-m3,bge-small-en")
    parser.add_argument("--n", type=int, default=200, help="speed: chunks per set")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--unit-vectors", action="store_true", help="build: embed every unit too (before Pay once)")
    parser.add_argument("--json", default="", help="compare: write the cells here")
    parser.add_argument("--kind", default="prose", choices=sorted(KIND_SETS), help="fit: the kind of collection")
    parser.add_argument("--size", default="", help="fit: only collections of this chunk size class (long, short)")
    parser.add_argument("--his", default="0.4,0.5,0.6,0.7,0.8", help="fit: the ceilings searched")
    parser.add_argument("--los", default="0.05,0.1,0.2,0.3,0.4,0.5", help="fit: the floors searched")
    parser.add_argument("--covs", default="0.25-0.6", help="fit: the coverage ranges searched (lo-hi,...)")
    args = parser.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    strategies = [s for s in args.strategies.split(",") if s]
    print(f"# {args.cmd}, {machine()}\n", flush=True)
    if args.cmd == "capture":
        run_captures(sets, strategies, args.embedders.split(","), args.force)
    elif args.cmd == "fit":
        his, los = ([float(x) for x in v.split(",")] for v in (args.his, args.los))
        ranges = [(lo, hi) for hi in his for lo in los if lo <= hi]
        covs = [tuple(float(x) for x in c.split("-")) for c in args.covs.split(",")]
        print(fit_kind(args.kind, args.embedders.split(",")[-1], ranges, covs, args.size))
    elif args.cmd == "build":
        rows = [cold_build(name, emb, args.unit_vectors) for emb in args.embedders.split(",") for name in sets]
        print(table(["set", "embedder", "unit vectors", "chunks", "CPU s", "wall s", "peak RSS MiB"],
                    [[r["set"], r["embedder"], r["unit_vectors"], r["chunks"], r["cpu_s"], r["wall_s"], r["peak_rss_mib"]] for r in rows]))
    elif args.cmd == "ratios":
        print(ratios(sets, args.embedders.split(",")))
    elif args.cmd == "compare":
        embedders = args.embedders.split(",")
        cells = []
        for name in sets:
            cells += compare_cells(name, strategies or strategies_for(name), embedders)
            print(compare_report(cells[-len(strategies or strategies_for(name)):], embedders), flush=True)
        if args.json:
            save_json(Path(args.json), {"machine": machine(), "cells": cells})
        print("\n" + compare_report(cells, embedders))
        print("\n" + summary(cells, embedders))
    elif args.cmd == "rule":
        for name in sets:
            print(f"{name}: {rule_pick(name)}")
    elif args.cmd == "lengths":
        print(lengths(sets, strategies or ["auto", "headers"]))
    else:
        print(speed(sets, args.n))


if __name__ == "__main__":
    main()
