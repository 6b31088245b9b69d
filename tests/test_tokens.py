import hashlib

import pytest

from indexer.text import tokens
from indexer.text.tokens import get_tokenizer


def test_bpe_table_is_installed_from_the_package_not_downloaded(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tokens._install_bpe_file("o200k_base")
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    installed = tmp_path / hashlib.sha1(url.encode()).hexdigest()
    assert hashlib.sha256(installed.read_bytes()).hexdigest() == tokens._SHA256["o200k_base"]
    from tiktoken.load import load_tiktoken_bpe

    # tiktoken reads the table from that folder; the network is closed (see conftest)
    ranks = load_tiktoken_bpe(url, expected_hash=tokens._SHA256["o200k_base"])
    assert len(ranks) > 199_000
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


def test_decoded_ranks_cache_is_used_and_a_damaged_one_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("INDEXER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    tokens._install_bpe_file("o200k_base")  # as Tokenizer() does first
    first = tokens._load_encoding("o200k_base")  # builds the cache
    cached = tmp_path / "tiktoken" / f"o200k_base-{tokens._SHA256['o200k_base'][:16]}.ranks"
    assert cached.exists()
    again = tokens._load_encoding("o200k_base")
    assert again.encode_ordinary("Kargo İADE 5.000 TL") == first.encode_ordinary("Kargo İADE 5.000 TL")
    cached.write_bytes(b"not marshal data")
    repaired = tokens._load_encoding("o200k_base")
    assert repaired.encode_ordinary("indexer test") == tokens._PROBE["o200k_base"]
    assert not cached.exists() or cached.read_bytes() != b"not marshal data"
