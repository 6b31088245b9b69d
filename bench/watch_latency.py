"""How fast `indexer watch` makes a save searchable, and how it copes with a burst.

    python -m bench.watch_latency                 # ~3 minutes: 10 saves, a 2,000-file burst
    python -m bench.watch_latency --trials 5 --files 500 --debounce 50 --max-delay 1000
    python -m bench.watch_latency --smoke         # two documents, one save, a 10-file burst (numbers mean nothing)

1. Save -> visible: `indexer watch corpus -s headers --json` runs as a subprocess on a copy of
   the bundled corpus. Each trial appends a section holding a new word to a document; a
   separate process searches the index for that word (BM25, top 5) until a hit holds it.
   Readers: a new `Index.open` per search (what the next `indexer query` reads: the live
   version in the catalogue, its BM25 files and records), and one long-lived handle (a
   server, `indexer mcp`: it re-reads the catalogue every 2 s). After the trials a real
   `indexer query` process (hybrid) must find the last word. A long-lived handle's
   embedding-only search is tried once too: embedded Chroma keeps the vectors it loaded
   per process, so vectors another process wrote stay unseen until the reader reopens.
2. Burst: a 2,000-file corpus is built, watched, and every file is modified at once (a
   `git checkout` touching 2,000 files): how many builds, how long until the index holds
   them all; then one more save on that corpus, and what `build(changed=...)` saves over
   hashing every file.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import (
    CORPUS,
    ROOT,
    SMOKE_DOCS,
    corpus_docs,
    machine,
    percentile,
    smoke_option,
    table,
    write_corpus,
)
from indexer.indexing.options import BuildOptions
from indexer.settings import Settings

PY = sys.executable


class WatchProcess:
    """`indexer watch --json` as a subprocess; its sync lines arrive on a queue."""

    def __init__(self, corpus: Path, db: Path, debounce: int, max_delay: int) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [PY, "-m", "indexer", "watch", str(corpus), "-s", "headers", "--db", str(db), "--json", "-q",
             "--debounce", str(debounce), "--max-delay", str(max_delay)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.syncs: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            sync = json.loads(line)
            sync["received"] = time.time()
            self.syncs.put(sync)

    def next(self, timeout: float = 600) -> dict:
        try:
            return self.syncs.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"no sync within {timeout}s: {self.proc.stderr.read() if self.proc.poll() else ''}")

    def drain(self, quiet: float) -> list[dict]:
        """Syncs until none came for `quiet` seconds."""
        out = []
        while True:
            try:
                out.append(self.syncs.get(timeout=quiet))
            except queue.Empty:
                return out

    def stop(self) -> None:
        self.proc.send_signal(2)  # SIGINT, as Ctrl-C
        self.proc.wait(timeout=60)


class Poller:
    """A reader process: given a word, it searches until a hit holds it and reports when."""

    def __init__(self, db: Path, reader: str) -> None:
        self.proc = subprocess.Popen([PY, __file__, "--poll", str(db), reader], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert self.proc.stdout.readline().strip() == "ready"

    def watch_for(self, word: str) -> None:
        self.proc.stdin.write(word + "\n")
        self.proc.stdin.flush()

    def seen(self) -> float | None:
        """When the word appeared (epoch seconds), None if not within the poller's patience."""
        answer = self.proc.stdout.readline().split()
        return float(answer[1]) if answer[0] == "seen" else None

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


READERS = {  # name: (a long-lived handle?, search mode, seconds of patience)
    "new handle per query": (False, "bm25", 30.0),
    "long-lived handle": (True, "bm25", 30.0),
}
# (No embedding-only reader: the probe word is made up, and a sentence encoder does not
# retrieve a made-up word; that a long-lived handle sees new vectors is tested in
# tests/test_faults.py.)


def poll_forever(db: str, reader: str) -> None:
    """The reader process (`--poll DB READER`)."""
    from indexer.retrieval import Index

    long_lived, mode, patience = READERS[reader]
    held = Index.open("headers", settings=Settings.load(db=db)) if long_lived else None
    (held or Index.open("headers", settings=Settings.load(db=db))).search("warm up", k=5, mode=mode)
    print("ready", flush=True)
    for line in sys.stdin:
        word, start = line.strip(), time.monotonic()
        while True:
            index = held or Index.open("headers", settings=Settings.load(db=db))
            if any(word in hit.chunk.text for hit in index.search(word, k=5, mode=mode)):
                print(f"seen {time.time()}", flush=True)
                break
            if time.monotonic() - start > patience:
                print("timeout", flush=True)
                break
            time.sleep(0.02)


def query_finds(db: Path, word: str) -> bool:
    """Whether a new `indexer query` process (the default hybrid search) returns the word."""
    done = subprocess.run([PY, "-m", "indexer", "query", word, "--db", str(db), "-s", "headers", "--json"],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True)
    return any(word in json.loads(line)["text"] for line in done.stdout.splitlines())


def save_to_visible(work: Path, trials: int, debounce: int, max_delay: int, names: tuple[str, ...] | None = None
                    ) -> tuple[list[list], str]:
    """`names`: the bundled documents to watch (default: all)."""
    corpus, db = work / "corpus", work / "db"
    corpus.mkdir(parents=True)
    for path in sorted(CORPUS.glob("*.md")):
        if names is None or path.name in names:
            shutil.copy(path, corpus / path.name)
    watcher = WatchProcess(corpus, db, debounce, max_delay)
    first = watcher.next()
    print(f"initial sync: {first['seconds']:.1f}s", file=sys.stderr)
    target = sorted(corpus.glob("*.md"))[0]
    rows = []
    for r, reader in enumerate(READERS):
        poller = Poller(db, reader)
        latencies, syncs, word = [], [], ""
        for trial in range(trials if r < 2 else 1):
            word = f"{'flz'[r]}{chr(97 + trial)}zqwx"  # a word of its own, also as a 5-letter stem
            poller.watch_for(word)
            time.sleep(0.3)
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(f"\n## Deneme {r} {trial}\n\nBu bölümde {word} kelimesi geçer.\n")
            saved = time.time()
            seen = poller.seen()
            latencies.append(seen - saved if seen else float("inf"))
            syncs.append(watcher.next()["seconds"])
            time.sleep(0.5)
        poller.close()
        if r == 0:
            note = f"A new `indexer query` process (hybrid) returns the last edit's word: {query_finds(db, word)}."
        shown = [f"{x:.2f}" if math.isfinite(x) else f"not in {READERS[reader][2]:.0f}s" for x in
                 (statistics.median(latencies), percentile(latencies, 90), max(latencies))]
        rows.append([reader, len(latencies), *shown, f"{statistics.median(syncs):.2f}",
                     f"{sum(lat <= 2.0 for lat in latencies)}/{len(latencies)}"])
    watcher.stop()
    return rows, note


def burst(work: Path, files: int, debounce: int, max_delay: int, repeat: int = 5,
          names: tuple[str, ...] | None = None, quiet: float = 3.0) -> tuple[list[list], list[list]]:
    """`repeat` timings of each build, `quiet` seconds without a sync that end the burst."""
    from indexer.indexing.building import build

    corpus, db = work / "big", work / "bigdb"
    docs = [(name, text) for name, text in corpus_docs().items() if names is None or name in names]
    write_corpus(corpus, [(f"d{i // 100:02d}/{i:04d}-{docs[i % len(docs)][0]}", docs[i % len(docs)][1])
                          for i in range(files)])
    t0 = time.perf_counter()
    [initial] = build([corpus], ["headers"], settings=Settings.load(db=db))
    initial_s = time.perf_counter() - t0
    watcher = WatchProcess(corpus, db, debounce, max_delay)
    first = watcher.next()
    paths = sorted(p for p in corpus.rglob("*.md"))
    start = time.time()
    for i, path in enumerate(paths):  # a checkout: every file rewritten, one section each new
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\n## Sürüm Notu\n\nBu dosya {i} numaralı değişiklikle güncellendi.\n")
    written = time.time() - start
    syncs = []
    while sum(r["changed"] for s in syncs for r in s["reports"]) < len(paths):
        syncs.append(watcher.next())
    syncs += watcher.drain(quiet)
    total = max(s["received"] for s in syncs) - start
    embedded = sum(r["embedded"] for s in syncs for r in s["reports"])
    building = sum(s["seconds"] for s in syncs)
    embedding = sum(r["timings"].get("embed", 0.0) for s in syncs for r in s["reports"])
    rows = [[files, f"{initial_s:.1f}", f"{first['seconds']:.2f}", f"{written:.2f}", len(syncs),
             " + ".join(str(s["files"]) for s in syncs), f"{total:.1f}", f"{building:.1f}", embedded,
             f"{embedding:.1f}"]]

    target = paths[len(paths) // 2]
    with open(target, "a", encoding="utf-8") as fh:
        fh.write("\nBir satır daha.\n")
    one = watcher.next()
    watcher.stop()
    hash_rows = [[f"one save on {files} files (watch)", f"{one['seconds']:.2f}",
                  f"{one['reports'][0]['timings'].get('hash', 0):.3f}"]]
    doc_id = target.relative_to(corpus).as_posix()
    for label, changed in (("build(changed=None): hash every file", None), ("build(changed={doc})", {doc_id})):
        seconds, hashing = [], []
        for _ in range(repeat):
            with open(target, "a", encoding="utf-8") as fh:
                fh.write("x\n")
            t0 = time.perf_counter()
            [report] = build([corpus], ["headers"], BuildOptions(lang=initial.analyzer.split("-")[0]),
                             settings=Settings.load(db=db), changed=changed)
            seconds.append(time.perf_counter() - t0)
            hashing.append(report.timings.get("hash", 0.0))
        hash_rows.append([label, f"{statistics.median(seconds):.2f}", f"{statistics.median(hashing):.3f}"])
    return rows, hash_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--debounce", type=int, default=100, help="ms of quiet that closes a batch")
    parser.add_argument("--max-delay", type=int, default=1600, help="ms a batch waits at most")
    parser.add_argument("--poll", nargs=2, metavar=("DB", "MODE"), help=argparse.SUPPRESS)
    smoke_option(parser)
    args = parser.parse_args()
    if args.poll:
        poll_forever(*args.poll)
        return
    names, repeat, quiet = (SMOKE_DOCS, 1, 0.5) if args.smoke else (None, 5, 3.0)
    if args.smoke:
        args.trials, args.files = 1, 10
    work = Path(tempfile.mkdtemp(prefix="watch-bench-"))
    try:
        latency, note = save_to_visible(work / "latency", args.trials, args.debounce, args.max_delay, names)
        burst_rows, hash_rows = burst(work, args.files, args.debounce, args.max_delay, repeat, names, quiet)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"## indexer watch — {time.strftime('%Y-%m-%d')}, {machine()}\n")
    print(f"debounce {args.debounce} ms, max delay {args.max_delay} ms; strategy headers, embedder use-m3\n")
    print("### Save -> visible to a search (seconds)\n")
    print(table(["reader", "saves", "median", "p90", "max", "sync median", "<= 2 s"], latency))
    print(f"\n{note}")
    print("\n### Burst: every file of a corpus modified at once\n")
    print(table(["files", "initial build s", "first sync s", "writes s", "builds", "files per build",
                 "save->all visible s", "building s", "embedded", "embedding s"], burst_rows))
    print("\n### Hashing only what changed\n")
    print(table(["sync", "seconds", "hash s"], hash_rows))


if __name__ == "__main__":
    main()
