"""Turkish deasciifiers measured side by side: can we restore ç ğ ı ö ş ü in a query before embedding it?

Users type "yurtdisina kargo var mi" for "yurtdışına kargo var mı". BM25 folds diacritics and copes;
the embedders (USE multilingual, multilingual-e5-small) see "koyune" and "köyüne" as different words.
This script folds real Turkish questions to ASCII the way a person on an English keyboard would,
restores them with each candidate, and measures how much comes back, how much is damaged, what it
costs, and whether it stays offline.

Test sets
  xquad-tr    the 1,190 Turkish XQuAD questions (xquad.tr.json in --xquad DIR)
  corpus-tr   the corpus/questions.jsonl questions written with Turkish letters (tag "ascii" left out)
  code-tr     the Turkish questions of corpus/code/questions.jsonl that have Turkish letters
  typed-ascii the 11 corpus questions really typed without Turkish letters, restored against a gold
              spelling written by hand (tests/typed_ascii.json, the test suite's table)
Damage sets (a deasciifier must leave these alone; we count what it changes)
  xquad-en    the 1,190 English XQuAD questions
  corpus-en   corpus/en/questions.jsonl plus the ASCII questions of corpus/code/questions.jsonl
  identifiers every identifier (>= 3 chars) of the source files under corpus/code, one per call
  phrases     a few hand-picked mixed English/code queries ("QueueWorker drain timeout", ...)

Candidates (each runs in a fresh interpreter, so import and first-call times are cold starts):
  identity             no restoration: where we start from
  akana                akana.deasciify (Rust, MIT OR Apache-2.0)
  zemberek-deasciifier zemberek-python's port of Deniz Yuret's turkish-mode decision lists
  zemberek-normalizer  zemberek-python's TurkishSentenceNormalizer (morphology + LM + spelling)
  trnlp                trnlp's copy of the same Yuret/Sevinç deasciifier (GPL-3)
  nlptoolkit           nlptoolkit-deasciifier SimpleDeasciifier (GPL-3; the NGram one needs a model
                       the package does not ship)
  nlptoolkit-cy        the Cython build of the same
  deasciiify           PyPI "deasciiify": a pseudo-localiser, not a Turkish tool (sanity check)
  yuret-own            our own ~60-line implementation of Yuret's algorithm (after the MIT-licensed
                       turkish.el), reading the decision-list table shipped in zemberek-python
  yuret-own+guards     the same, but it never touches code-like tokens (CamelCase, snake_case,
                       a.b, ALLCAPS, digits, q/w/x), the English pronoun "I", letters the user already
                       typed with a diacritic, or text that reads as English (stop-word test)
  yuret-own+guards+vocab  the same, and a restored word is dropped when the index vocabulary
                       (corpus/ + XQuAD contexts here; BM25's vocabulary in the indexer) knows the
                       word as typed but not as restored
  indexer              indexer.text.deasciify, the library version of yuret-own+guards (table shipped
                       as indexer/data/deasciify-patterns.json.gz)

Usage
  python -m bench.deasciify                       # whatever is importable here; others skipped
  python -m bench.deasciify --smoke               # identity and indexer only, in seconds
  python -m bench.deasciify --setup /tmp/deasc    # one venv per candidate, pip install, du sizes
  python -m bench.deasciify --venvs /tmp/deasc    # run each candidate in its own venv
  options: --no-unshare (run with the network), --json out.json, --examples 15, --only a,b

Beside it: bench/labs/deasciify_retrieval.py measures what restoring does to search, and
bench/deasciify_table.py writes the decision-list table the library ships.

Network: by default every candidate runs under `unshare -rn` (a network namespace with no
interfaces), and an audit hook records any socket/urllib use and any file written, so a package
that downloads a model or lexicon at import or first call shows up as an error or an event.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# XQuAD: --xquad DIR, env INDEXER_XQUAD_DIR, else bench/.cache/xquad
from bench.common import (
    parse_args,
    save_json,
    smoke_option,
    xquad_option,
)
from bench.deasciify_sets import build_vocab, load_sets, score_en, score_tr
from bench.deasciify_table import find_yuret_table
from bench.deasciify_worker import CANDIDATES, FIRST_CALL, worker

# pip specs for --setup (venv name -> list of pip argument lists run in order)
SETUP = {
    "akana": [["akana"]],
    "zemberek-python": [["zemberek-python"]],
    "zemberek-python-np1": [["zemberek-python", "numpy<2"]],
    "trnlp": [["trnlp"]],
    "nlptoolkit-deasciifier": [["nlptoolkit-deasciifier"]],
    # the sdists need Cython at build time but do not declare it, fail under Cython >= 3.1, and
    # cimport each other, so they must be built in dependency order without build isolation
    "nlptoolkit-deasciifier-cy": [["cython<3.1", "wheel"], "SNAPSHOT"] + [
        ["--no-build-isolation", "--no-deps", f"nlptoolkit-{p}-cy"]
        for p in ["util", "datastructure", "math", "dictionary", "corpus", "sampling",
                  "morphologicalanalysis", "ngram", "deasciifier"]
    ],
    "deasciiify": [["deasciiify"]],
}


# --------------------------------------------------------------------------------------------
# setup: one venv per candidate
# --------------------------------------------------------------------------------------------

def _du(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def setup(root: Path, only: set[str] | None) -> None:
    root.mkdir(parents=True, exist_ok=True)
    report_path = root / "install-report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    for name, steps in SETUP.items():
        if only and name not in only:
            continue
        venv = root / name
        if venv.exists():
            shutil.rmtree(venv)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = str(venv / "bin" / "python")
        sp = next((venv / "lib").glob("python*/site-packages"))

        def freeze() -> set[str]:
            r = subprocess.run([py, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True)
            return set(r.stdout.split())
        before, size0 = freeze(), _du(sp)
        t0, ok, log = time.time(), True, ""
        for step in steps:
            if step == "SNAPSHOT":  # build tools installed: measure from here
                before, size0 = freeze(), _du(sp)
                continue
            r = subprocess.run([py, "-m", "pip", "install", "-q", *step], capture_output=True, text=True)
            if r.returncode:
                ok = False
                log = "\n".join(line for line in (r.stdout + r.stderr).splitlines()
                                if "WARNING: Location" not in line)[-1500:]
                break
        added = sorted(freeze() - before)
        report[name] = {"ok": ok, "seconds": round(time.time() - t0, 1), "added_bytes": _du(sp) - size0,
                        "added": added, "log": log}
        print(f"{name:28s} {'ok' if ok else 'FAILED'} {report[name]['seconds']:7.1f}s "
              f"+{report[name]['added_bytes'] / 1e6:7.1f} MB  {' '.join(added)}", flush=True)
        report_path.write_text(json.dumps(report, indent=1))


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------

def _unshare_prefix() -> list[str]:
    exe = shutil.which("unshare")
    if not exe:
        return []
    for flags in (["-rn"], ["-n"]):
        if subprocess.run([exe, *flags, "true"], capture_output=True).returncode == 0:
            return [exe, *flags]
    return []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--vocab", help=argparse.SUPPRESS)
    ap.add_argument("--setup", metavar="DIR", help="create one venv per candidate under DIR and pip install it")
    ap.add_argument("--venvs", metavar="DIR", help="run each candidate with DIR/<venv>/bin/python when present")
    ap.add_argument("--yuret-table", help="decision-list pickle for yuret-own (default: found in zemberek-python)")
    ap.add_argument("--only", help="comma-separated candidate (or, with --setup, venv) names")
    ap.add_argument("--no-unshare", action="store_true", help="do not cut the network off for the candidates")
    ap.add_argument("--json", metavar="PATH", help="write all results (outputs included) as JSON")
    ap.add_argument("--examples", type=int, default=8, help="wrong words / changed English shown per candidate")
    smoke_option(ap)
    xquad_option(ap, "folder with xquad.tr.json and xquad.en.json (the sets are skipped without them)")
    args = parse_args(ap)  # --xquad in the environment, so the candidates' worker processes see it too
    if args.smoke:
        args.only, args.examples = "identity,indexer", 2
    only = set(args.only.split(",")) if args.only else None
    if args.worker:
        worker(args)
        return
    if args.setup:
        setup(Path(args.setup), only)
        return

    sets = load_sets()
    venvs = Path(args.venvs) if args.venvs else None
    table = args.yuret_table or (str(p) if (p := find_yuret_table([venvs] if venvs else [])) else None)
    prefix = [] if args.no_unshare else _unshare_prefix()
    print(f"# Turkish deasciifiers — {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}")
    print(f"network during runs: {'cut off (' + ' '.join(prefix) + ')' if prefix else 'available'}")
    print("sets: " + ", ".join(f"{k} ({len(v['input'])})" for k, v in sets.items()))
    print(f"yuret table: {table or 'not found (yuret-own skipped)'}\n")
    install = {}
    if venvs and (venvs / "install-report.json").exists():
        install = json.loads((venvs / "install-report.json").read_text())

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data_path = Path(tmp) / "data.json"
        data_path.write_text(json.dumps({k: {"input": v["input"]} for k, v in sets.items()}, ensure_ascii=False))
        vocab_path = Path(tmp) / "vocab.json"
        vocab_path.write_text(json.dumps(build_vocab(), ensure_ascii=False))
        for name, (_, dist, venv_names, note) in CANDIDATES.items():
            if only and name not in only:
                continue
            py = sys.executable
            venv_used = None
            if venvs:
                for vn in venv_names:
                    if (venvs / vn / "bin" / "python").exists():
                        py, venv_used = str(venvs / vn / "bin" / "python"), vn
                        break
            out = Path(tmp) / f"{name}.json"
            cmd = [*prefix, py, str(Path(__file__).resolve()), "--worker", name, "--data", str(data_path),
                   "--out", str(out)]
            if table:
                cmd += ["--yuret-table", table]
            if name.endswith("+vocab"):
                cmd += ["--vocab", str(vocab_path)]
            t0 = time.time()
            env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
            if not out.exists():
                r = {"name": name, "error": f"worker died (rc {proc.returncode}): {proc.stderr[-600:]}"}
            else:
                r = json.loads(out.read_text())
            r["wall_s"] = time.time() - t0
            r["venv"] = venv_used
            r["note"] = note
            r["install"] = install.get(venv_used) if venv_used else None
            r["stdout_lines"] = len(proc.stdout.splitlines())
            r["stdout_head"] = proc.stdout[:300]
            r["stderr_head"] = proc.stderr[:300]
            results[name] = r
            status = r.get("skipped") or r.get("error") or "ok"
            print(f"ran {name:22s} {r['wall_s']:6.1f}s  {status}", file=sys.stderr, flush=True)

    # ---- scoring
    for name, r in results.items():
        if "outputs" not in r:
            continue
        r["scores"] = {}
        for sname, ds in sets.items():
            o = r["outputs"][sname]
            r["scores"][sname] = (score_tr(ds["gold"], ds["input"], o) if ds["kind"] == "tr"
                                  else score_en(ds["input"], o))

    ran = {k: v for k, v in results.items() if "scores" in v}
    fmt = lambda x: "—" if x is None or x != x else f"{x:.1f}"  # noqa: E731

    print("## Not measured\n")
    for name, r in results.items():
        if name not in ran:
            extra = ""
            if r.get("install") and not r["install"]["ok"]:
                extra = f" (install failed: {r['install']['log'][-200:]!r})"
            print(f"- {name}: {r.get('skipped') or r.get('error')}{extra}")
    print()

    tr_sets = [s for s, d in sets.items() if d["kind"] == "tr"]
    en_sets = [s for s, d in sets.items() if d["kind"] == "en"]
    for s in tr_sets:
        d = sets[s]
        sc0 = next(iter(ran.values()))["scores"][s] if ran else None
        print(f"## {s}: {len(d['gold'])} questions, {sc0['words'] if sc0 else '?'} words, "
              f"{sc0['need'] if sc0 else '?'} need restoring\n")
        print("| candidate | word acc | word acc (case-insens.) | sentence exact | sentence (words) "
              "| needed & restored | correct words damaged |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, r in ran.items():
            sc = r["scores"][s]
            print(f"| {name} | {fmt(sc['acc_cs'])} | {fmt(sc['acc_ci'])} | {fmt(sc['sent'])} | "
                  f"{fmt(sc['sent_words'])} | {fmt(sc['need_ok'])} | {fmt(sc['damaged'])} |")
        print()
    print("## English and code passed through (share changed; lower is better)\n")
    print("| candidate | " + " | ".join(f"{s} questions | {s} words" for s in en_sets) + " |")
    print("|---|" + "---:|---:|" * len(en_sets))
    for name, r in ran.items():
        cells = []
        for s in en_sets:
            sc = r["scores"][s]
            cells += [fmt(sc["q_changed"]), fmt(sc["w_changed"])]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print("## Cost, licence, offline\n")
    print(f"ms/question: warm, over {tr_sets[0]}; load: import + construction in a fresh interpreter; "
          "installed: files of the distribution (and of its requirement closure) from its RECORD; "
          "du added: what `--setup` measured pip adding to an empty venv; network / writes: what the "
          "audit hook saw (socket, urllib, files opened for writing outside __pycache__); "
          "2 threads: same outputs as sequential on 300 questions, and the wall times\n")
    print("| candidate | version | licence | load s | first call ms | ms/question (median, mean, p95) "
          "| peak RSS MB | installed MB (pkg / with deps) | du added MB | deps | network / writes "
          "| prints to stdout | deterministic | 2 threads same |")
    print("|---|---|---|---:|---:|---|---:|---|---:|---|---|---|---|---|")
    for name, r in ran.items():
        t = r["times_ms"][tr_sets[0]]
        q = sorted(t)
        p95 = q[int(0.95 * (len(q) - 1))]
        di = r.get("dist") or {}
        deps = ", ".join(f"{k} {v}" for k, v in sorted((di.get("deps") or {}).items())) or "none"
        inst = r.get("install") or {}
        ev = r.get("events") or []
        net = [e for e in ev if e[0] != "write"]
        writes = [e for e in ev if e[0] == "write"]
        evs = ("none" if not ev else f"{len(net)} net, {len(writes)} writes: "
               + "; ".join(f"{e[0]} {e[1][:80]}" for e in ev[:3]))
        errs = sum(v[-1] for v in r["errors"].values())
        print(f"| {name} | {di.get('version', '-')} | {di.get('licence', '-')} | {r['load_s']:.2f} | "
              f"{r['first_call_ms']:.1f} | {statistics.median(t):.2f}, {statistics.fmean(t):.2f}, {p95:.2f} | "
              f"{r['rss_peak_mb']:.0f} | {di.get('size_pkg', 0) / 1e6:.1f} / {di.get('size_closure', 0) / 1e6:.1f} | "
              f"{fmt(inst['added_bytes'] / 1e6) if inst else '—'} | {deps} | {evs}"
              f"{f' ({errs} calls raised)' if errs else ''} | {r.get('stdout_lines', 0)} lines "
              f"| {r['deterministic']} | {r['threads_same']} "
              f"({r['seq_s']:.2f}s seq, {r['threads_s']:.2f}s 2 threads) |")
    print()
    if args.examples:
        print("## Examples\n")
        for name, r in ran.items():
            if name == "identity":
                continue
            print(f"### {name}")
            print(f"first call: {FIRST_CALL!r} -> {r['first_out']!r}")
            if r.get("stdout_head"):
                print(f"printed to stdout: {r['stdout_head'][:200]!r}")
            w = r["scores"][tr_sets[0]]["wrong"][: args.examples]
            print("wrong words (gold -> output): " + ", ".join(f"{g}->{o}" for g, o, _ in w))
            for s in ("phrases", "corpus-en"):
                ex = r["scores"][s]["examples"][: max(1, args.examples // 2)]
                for i, o in ex:
                    print(f"  {s}: {i!r} -> {o!r}")
            for s, e in r["errors"].items():
                if e[-1]:
                    print(f"  {s}: {e[-1]} calls raised, e.g. {e[0]}")
            print()
    save_json(args.json, results)


if __name__ == "__main__":
    main()
