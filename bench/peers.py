"""The pipelines users glue together today, on the same folder, embedder and Chroma as
`indexer build`: run one and print what it did (JSON). `bench/run.py` runs each in its
own process and measures wall time and peak RSS around it.

    python -m bench.peers langchain FOLDER DB --size 128
    python -m bench.peers llamaindex FOLDER DB --size 128
    python -m bench.peers langchain --smoke     # the two smoke documents into a temporary DB

- LangChain: RecursiveCharacterTextSplitter (sizes in o200k tokens) -> langchain-chroma's
  Chroma (persistent, local).
- LlamaIndex: SentenceSplitter (sizes in o200k tokens) -> ChromaVectorStore, through a
  VectorStoreIndex (llama-index-core + llama-index-vector-stores-chroma).

Both embed with indexer's default model (use-m3), wrapped as a LangChain `Embeddings`
and a LlamaIndex `BaseEmbedding`, in batches of 64 like indexer's; both read the files
as plain text (no loader packages). Install them with: pip install -e ".[bench]".
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from bench.common import smoke_corpus, smoke_option

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def read_folder(folder: Path) -> list[tuple[str, str]]:
    """(relative path, text) of every Markdown and text file, as both peers get them."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".md", ".txt"))
    return [(str(p.relative_to(folder)), p.read_text(encoding="utf-8")) for p in files]


def model():
    from indexer.embeddings import get_embedder

    return get_embedder("use-m3")


def embed_all(texts: list[str], batch: int = 64) -> list[list[float]]:
    m = model()
    out: list[list[float]] = []
    for i in range(0, len(texts), batch):
        out.extend(m.embed_documents(texts[i : i + batch]).tolist())
    return out


def o200k_encode():
    from indexer.text.tokens import get_tokenizer

    return get_tokenizer().encode


def run_langchain(folder: Path, db: Path, size: int, overlap: int) -> dict:
    from langchain_chroma import Chroma
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    class UseM3(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embed_all(texts)

        def embed_query(self, text: str) -> list[float]:
            return model().embed_query(text).tolist()

    encode = o200k_encode()
    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap,
                                              length_function=lambda t: len(encode(t)))
    t0 = time.perf_counter()
    docs = [Document(page_content=text, metadata={"source": name}) for name, text in read_folder(folder)]
    chunks = splitter.split_documents(docs)
    split_s = time.perf_counter() - t0
    store = Chroma(collection_name="langchain", embedding_function=UseM3(), persist_directory=str(db))
    for i in range(0, len(chunks), 256):  # Chroma caps one add; batches like indexer's
        store.add_documents(chunks[i : i + 256])
    return {"chunks": len(chunks), "split_s": round(split_s, 3), "seconds": round(time.perf_counter() - t0, 3)}


def run_llamaindex(folder: Path, db: Path, size: int, overlap: int) -> dict:
    import chromadb
    from llama_index.core import Document, Settings, StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.vector_stores.chroma import ChromaVectorStore

    class UseM3(BaseEmbedding):
        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return embed_all(texts)

        def _get_text_embedding(self, text: str) -> list[float]:
            return embed_all([text])[0]

        def _get_query_embedding(self, query: str) -> list[float]:
            return model().embed_query(query).tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    embed = UseM3(model_name="use-m3", embed_batch_size=64)
    Settings.embed_model = embed
    Settings.llm = None
    t0 = time.perf_counter()
    docs = [Document(text=text, metadata={"source": name}) for name, text in read_folder(folder)]
    splitter = SentenceSplitter(chunk_size=size, chunk_overlap=overlap, tokenizer=o200k_encode())
    Settings.node_parser = splitter  # its default (cl100k_base) would be downloaded
    nodes = splitter.get_nodes_from_documents(docs)
    split_s = time.perf_counter() - t0
    client = chromadb.PersistentClient(path=str(db))
    store = ChromaVectorStore(chroma_collection=client.get_or_create_collection("llamaindex"))
    VectorStoreIndex(nodes, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed,
                     insert_batch_size=256)
    return {"chunks": len(nodes), "split_s": round(split_s, 3), "seconds": round(time.perf_counter() - t0, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("peer", choices=["langchain", "llamaindex"])
    parser.add_argument("folder", type=Path, nargs="?", help="what to index (not with --smoke)")
    parser.add_argument("db", type=Path, nargs="?", help="the Chroma folder to write (not with --smoke)")
    parser.add_argument("--size", type=int, default=128, help="chunk size in o200k tokens")
    parser.add_argument("--overlap", type=int, default=0)
    smoke_option(parser)
    args = parser.parse_args()
    run = run_langchain if args.peer == "langchain" else run_llamaindex
    if args.smoke:
        with tempfile.TemporaryDirectory(prefix="indexer-peers-") as tmp:
            print(json.dumps(run(smoke_corpus(Path(tmp) / "docs"), Path(tmp) / "db", args.size, args.overlap)))
        return
    if not (args.folder and args.db):
        parser.error("FOLDER and DB are needed (or --smoke)")
    print(json.dumps(run(args.folder, args.db, args.size, args.overlap)))


if __name__ == "__main__":
    main()
