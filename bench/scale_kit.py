"""Pieces of `bench/scale.py` that a fresh process needs too: the bench-only embedder and
the corpus generator.

The embedder (`bench-hash`) returns a deterministic pseudo-random unit vector of 512
dimensions (the default model's) seeded by a hash of the text: the HNSW side gets the
vectors and sizes of a real collection while no model time is in the figures. Random unit
vectors have no cluster structure, the hardest case for HNSW, so its query times here are
an upper bound. It is registered by importing this module; `bench/scale_cli.py` is
`indexer`'s CLI with it registered (for the cold `indexer query` and `indexer serve`).

The corpus is Turkish XQuAD (CC BY-SA 4.0) recombined: its paragraphs' sentences drawn at
random into Markdown documents of about 50 64-token windows each, under headings; every
paragraph also carries record numbers (two drawn from ten million, one from a Zipf-like
law), so the vocabulary grows with the corpus as a real one does (numbers are never
stemmed) instead of stopping at XQuAD's prefix stems.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

import numpy as np

from indexer.embeddings import Embedder, register

DIMENSION = 512
CHUNKS_PER_FILE = 88  # fixed64 windows (48-token steps) a generated document makes (measured)


class HashEmbedder(Embedder):
    name = "bench-hash"
    batch_size = 1024

    @property
    def dimension(self) -> int:
        return DIMENSION

    @staticmethod
    def _vector(text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(DIMENSION).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


@register("bench-hash")
def _bench_hash(settings, _arg) -> Embedder:
    return HashEmbedder()


def xquad_sentences(path: Path) -> tuple[list[str], list[str]]:
    """(sentences, article titles) of an XQuAD file."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    sentences, titles = [], []
    for article in data:
        titles.append(article["title"])
        for para in article["paragraphs"]:
            sentences += [s.strip() for s in re.split(r"(?<=[.!?])\s+", para["context"]) if len(s.strip()) > 20]
    return sentences, titles


def questions(path: Path, n: int, seed: int = 7) -> list[str]:
    """`n` XQuAD questions (the queries of the timing runs)."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    qs = [qa["question"] for a in data for p in a["paragraphs"] for qa in p["qas"]]
    random.Random(seed).shuffle(qs)
    return qs[:n]


def document(rng: random.Random, sentences: list[str], titles: list[str], number: int) -> str:
    """One generated Markdown document (~CHUNKS_PER_FILE fixed64 windows)."""
    def codes() -> str:  # a record number drawn from ten million, and a Zipf-like one (a few common, most rare)
        return f"kayıt {rng.randrange(10_000_000)}, {rng.randrange(10_000_000)}, ref {int(rng.paretovariate(0.6))}"

    parts = [f"# {rng.choice(titles)} {number}\n"]
    for section in range(6):
        parts.append(f"## {rng.choice(titles)}: bölüm {section + 1}\n")
        for _ in range(3):
            body = " ".join(rng.choice(sentences) for _ in range(5))
            parts.append(f"{body} ({codes()})\n")
    return "\n".join(parts)


def write_corpus(folder: Path, chunks: int, xquad: Path, seed: int = 1) -> Path:
    """A folder of generated documents making about `chunks` fixed64 chunks, written once
    (a folder that already holds them is kept): file i is the same in every size, so the
    10k corpus is the start of the 100k one."""
    files = max(1, round(chunks / CHUNKS_PER_FILE))
    done = folder / ".complete"
    if done.exists() and done.read_text() == str(files):
        return folder
    sentences, titles = xquad_sentences(xquad)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        rng = random.Random(seed * 1_000_003 + i)
        sub = folder / f"part{i // 1000:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"doc{i:06d}.md").write_text(document(rng, sentences, titles, i), encoding="utf-8")
    done.write_text(str(files))
    return folder
