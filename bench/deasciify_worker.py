"""One candidate of bench/deasciify.py, run in a fresh interpreter (`python -m bench.deasciify
--worker NAME`, in the candidate's own venv with `--venvs`): it loads the candidate, restores
every set and writes what came out, how long it took and what it touched."""

from __future__ import annotations

import json
import os
import pickle
import re
import sys
import time
from pathlib import Path

from bench.common import dist_bytes, tr_lower
from bench.deasciify_yuret import WORD, YuretDeasciifier, looks_english, protected_mask

# --------------------------------------------------------------------------------------------
# candidates (loaders run inside the worker)
# --------------------------------------------------------------------------------------------

def _load_identity(args):
    return lambda s: s


def _load_akana(args):
    import akana
    return akana.deasciify


def _load_zemberek_deasciifier(args):
    from zemberek.normalization.deasciifier.deasciifier import Deasciifier
    return lambda s: Deasciifier(s).convert_to_turkish()


def _load_zemberek_normalizer(args):
    from zemberek import TurkishMorphology, TurkishSentenceNormalizer
    norm = TurkishSentenceNormalizer(TurkishMorphology.create_with_defaults())
    return norm.normalize


def _load_trnlp(args):
    from trnlp.deasciifier.Asciidecoder import Deasciifier
    return lambda s: Deasciifier(s).convert_to_turkish()


def _load_nlptoolkit(args):
    import random
    random.seed(0)  # SimpleDeasciifier picks a random candidate among the valid words
    from Corpus.Sentence import Sentence
    from Deasciifier.SimpleDeasciifier import SimpleDeasciifier
    from MorphologicalAnalysis.FsmMorphologicalAnalyzer import FsmMorphologicalAnalyzer
    d = SimpleDeasciifier(FsmMorphologicalAnalyzer())
    return lambda s: d.deasciify(Sentence(s)).toString()


def _load_deasciiify(args):
    from deasciiify import deasciiify
    return deasciiify


def _yuret(args) -> YuretDeasciifier:
    path = Path(args.yuret_table) if args.yuret_table else None
    if path is None:
        raise ModuleNotFoundError("no Yuret table found: run --setup DIR then --venvs DIR, or pass --yuret-table")
    with open(path, "rb") as f:
        table = pickle.load(f)
    return YuretDeasciifier(table)


def _load_yuret_own(args):
    return _yuret(args)


def _load_yuret_guarded(args):
    d = _yuret(args)

    def restore(s: str) -> str:
        if looks_english(s):
            return s
        return d(s, protect=protected_mask(s), add_only=True)
    return restore


def _load_yuret_vocab(args):
    """Guards, plus the index vocabulary: a restored word is kept only if the index knows it, or
    does not know the word as typed either (the indexer has this vocabulary from BM25)."""
    d = _yuret(args)
    vocab = set(json.loads(Path(args.vocab).read_text(encoding="utf-8"))) if args.vocab else set()

    def restore(s: str) -> str:
        if looks_english(s):
            return s
        out = d(s, protect=protected_mask(s), add_only=True)
        if len(out) != len(s):
            return out
        res = list(out)
        for m in WORD.finditer(s):
            a, b = m.group(), out[m.start():m.end()]
            if a != b and a.lower() in vocab and tr_lower(b) not in vocab:
                res[m.start():m.end()] = a
        return "".join(res)
    return restore


def _load_indexer(args):
    from indexer.text.deasciify import deasciify
    return deasciify


CANDIDATES = {
    # name: (loader, distribution to report, venv names to look for under --venvs, notes)
    "identity": (_load_identity, None, [], "no restoration (baseline)"),
    "akana": (_load_akana, "akana", ["akana"], ""),
    "zemberek-deasciifier": (_load_zemberek_deasciifier, "zemberek-python", ["zemberek-python"], ""),
    "zemberek-normalizer": (_load_zemberek_normalizer, "zemberek-python",
                            ["zemberek-python-np1", "zemberek-python"], "lower-cases, re-tokenises, spell-corrects"),
    "trnlp": (_load_trnlp, "trnlp", ["trnlp"], ""),
    "nlptoolkit": (_load_nlptoolkit, "nlptoolkit-deasciifier", ["nlptoolkit-deasciifier"],
                   "SimpleDeasciifier, random.seed(0)"),
    "nlptoolkit-cy": (_load_nlptoolkit, "nlptoolkit-deasciifier-cy", ["nlptoolkit-deasciifier-cy"],
                      "SimpleDeasciifier, random.seed(0)"),
    "deasciiify": (_load_deasciiify, "deasciiify", ["deasciiify"], "pseudo-localiser, not Turkish"),
    "yuret-own": (_load_yuret_own, None, [], "ours; table from zemberek-python"),
    "yuret-own+guards": (_load_yuret_guarded, None, [], "ours + code/English guards"),
    "yuret-own+guards+vocab": (_load_yuret_vocab, None, [], "ours + guards + index vocabulary check"),
    "indexer": (_load_indexer, None, [], "indexer.text.deasciify: the library version of yuret-own+guards"),
}

# licences the installed metadata does not state (read from the sdist / repository by hand)
KNOWN_LICENCE = {
    "nlptoolkit-deasciifier": "GPL-3.0 (LICENSE file in the sdist; metadata says UNKNOWN)",
    "deasciiify": "MIT",
}


# --------------------------------------------------------------------------------------------
# worker: runs one candidate in a fresh interpreter
# --------------------------------------------------------------------------------------------

FIRST_CALL = "Turkce karakter kullanmadan yazilmis bir soru mu bu?"


def _audit(events: list, out_path: str):
    def hook(event, args):
        if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.sendto",
                     "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect"):
            if len(events) < 50:
                events.append([event, repr(args)[:200]])
        elif event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            if not isinstance(path, (str, bytes, os.PathLike)):
                return
            p = os.fsdecode(path)
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            if writing and "__pycache__" not in p and not p.startswith("/dev/") and p != out_path \
                    and len(events) < 50:
                events.append(["write", p])
    return hook


def _dist_info(name: str | None) -> dict:
    """Version, licence, requirement closure and installed size, from installed metadata."""
    if not name:
        return {}
    from importlib import metadata
    norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()  # noqa: E731
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return {"missing": True}
    seen: dict[str, metadata.Distribution] = {}
    todo = [dist]
    while todo:
        d = todo.pop()
        key = norm(d.metadata["Name"])
        if key in seen:
            continue
        seen[key] = d
        for req in d.requires or []:
            if "extra ==" in req:
                continue
            m = re.match(r"\s*([A-Za-z0-9._-]+)", req)
            try:
                todo.append(metadata.distribution(m.group(1)))
            except (metadata.PackageNotFoundError, AttributeError):
                pass

    def licence(d) -> str:
        md = d.metadata
        parts = []
        if md.get("License-Expression"):
            parts.append(md["License-Expression"])
        lic = md.get("License")
        if lic and lic != "UNKNOWN" and len(lic) < 80:
            parts.append(lic)
        parts += [c.split("::")[-1].strip() for c in md.get_all("Classifier") or [] if c.startswith("License ::")]
        for f in d.files or []:
            if re.search(r"(LICEN[CS]E|COPYING)[^/]*$", str(f), re.I) and "/licenses/" not in str(f):
                try:
                    head = f.locate().read_text(errors="replace")[:3000]
                except OSError:
                    continue
                for pat, label in (("GNU LESSER GENERAL PUBLIC", "LGPL (file)"), ("GNU GENERAL PUBLIC", "GPL (file)"),
                                   ("Apache License", "Apache-2.0 (file)"), ("Permission is hereby granted", "MIT (file)"),
                                   ("Redistribution and use in source", "BSD (file)")):
                    if pat.lower() in head.lower():
                        parts.append(label)
                        break
        out: list[str] = []
        for p in parts:
            if p not in out:
                out.append(p)
        return "; ".join(out) or "not stated"

    lic = licence(dist)
    if norm(name) in KNOWN_LICENCE and lic == "not stated":
        lic = KNOWN_LICENCE[norm(name)]
    return {
        "dist": dist.metadata["Name"],
        "version": dist.version,
        "licence": lic,
        "deps": {k: v.version for k, v in seen.items() if k != norm(dist.metadata["Name"])},
        "dep_licences": {k: licence(v) for k, v in seen.items() if k != norm(dist.metadata["Name"])},
        "size_pkg": dist_bytes(dist),
        "size_closure": sum(dist_bytes(v) for v in seen.values()),
    }


def worker(args) -> None:
    import resource
    import threading
    from concurrent.futures import ThreadPoolExecutor

    events: list = []
    sys.addaudithook(_audit(events, args.out))
    loader, dist_name, _, _ = CANDIDATES[args.worker]
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    res: dict = {"name": args.worker, "python": sys.executable, "events": events}
    if dist_name:
        res["dist"] = _dist_info(dist_name)
        if res["dist"].get("missing"):
            res["skipped"] = f"{dist_name} is not installed in {sys.executable}"
            Path(args.out).write_text(json.dumps(res))
            return
    if args.worker == "indexer":
        import indexer
        data_file = Path(indexer.__file__).parent / "data" / "deasciify-patterns.json.gz"  # the table it reads
        res["dist"] = {"dist": "indexer.text.deasciify", "version": "-", "licence": "ours + MIT table (Yuret)",
                       "deps": {}, "size_pkg": data_file.stat().st_size, "size_closure": data_file.stat().st_size}
    if args.worker.startswith("yuret"):
        res["dist"] = {"dist": "(ours)", "version": "-", "licence": "ours + MIT table (Yuret)", "deps": {},
                       "size_pkg": Path(args.yuret_table).stat().st_size if args.yuret_table else 0,
                       "size_closure": Path(args.yuret_table).stat().st_size if args.yuret_table else 0,
                       "table": args.yuret_table}
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    try:
        fn = loader(args)
    except ModuleNotFoundError as e:
        res["skipped"] = f"{type(e).__name__}: {e}"
        Path(args.out).write_text(json.dumps(res))
        return
    except Exception as e:  # noqa: BLE001
        res["error"] = f"load: {type(e).__name__}: {e}"
        Path(args.out).write_text(json.dumps(res))
        return
    res["load_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    try:
        res["first_out"] = fn(FIRST_CALL)
    except Exception as e:  # noqa: BLE001
        res["error"] = f"first call: {type(e).__name__}: {e}"
        Path(args.out).write_text(json.dumps(res))
        return
    res["first_call_ms"] = (time.perf_counter() - t1) * 1000
    outs: dict[str, list] = {}
    times: dict[str, list] = {}
    errors: dict[str, list] = {}
    for name, ds in data.items():
        o, tl, er = [], [], []
        for q in ds["input"]:
            t = time.perf_counter()
            try:
                r = fn(q)
                if not isinstance(r, str):
                    r = str(r)
            except Exception as e:  # noqa: BLE001
                r = q
                if len(er) < 5:
                    er.append(f"{type(e).__name__}: {e} on {q!r}")
                er.append(None)
            tl.append((time.perf_counter() - t) * 1000)
            o.append(r)
        outs[name], times[name], errors[name] = o, tl, [e for e in er if e] + [len([e for e in er if e is None])]
    res["outputs"], res["times_ms"], res["errors"] = outs, times, errors
    res["rss_base_mb"] = rss0 / 1024
    res["rss_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # determinism and thread-safety on the first 300 XQuAD (or whatever the first set is) questions
    first = next(iter(data))
    sample = data[first]["input"][:300]
    again = [fn(q) for q in sample]
    res["deterministic"] = again == outs[first][:300]
    t = time.perf_counter()
    with ThreadPoolExecutor(2) as ex:
        threaded = list(ex.map(fn, sample))
    res["threads_same"] = threaded == again
    res["threads_s"] = time.perf_counter() - t
    t = time.perf_counter()
    for q in sample:
        fn(q)
    res["seq_s"] = time.perf_counter() - t
    res["threads_alive"] = threading.active_count()
    Path(args.out).write_text(json.dumps(res, ensure_ascii=False))
