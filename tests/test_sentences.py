import pytest

from indexer.chunkers.units import sentence_units
from indexer.loaders import make_document
from indexer.text.sentences import split_sentences


def sents(text):
    return [text[s:e] for s, e in split_sentences(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Ücret 5.000 TL'dir. Ekspres 89,90 TL.", ["Ücret 5.000 TL'dir.", "Ekspres 89,90 TL."]),
        ("Sürüm 1.5 çıktı. Detay www.carsim.com.tr/a.b adresinde.", ["Sürüm 1.5 çıktı.", "Detay www.carsim.com.tr/a.b adresinde."]),
        ("Elektronik, giyim vb. ürünler iade edilir. Süre 14 gündür.", ["Elektronik, giyim vb. ürünler iade edilir.", "Süre 14 gündür."]),
        ("Dr. Ayşe Kaya ve Prof. Demir katıldı. Toplantı bitti.", ["Dr. Ayşe Kaya ve Prof. Demir katıldı.", "Toplantı bitti."]),
        ("Belge No. 12 ekte. Bkz. madde 4.", ["Belge No. 12 ekte.", "Bkz. madde 4."]),
        ("A. Yılmaz imzaladı. Onaylandı!", ["A. Yılmaz imzaladı.", "Onaylandı!"]),
        ("Paket 3. gün teslim edilir. Sorun yok mu? Evet… Tamam.", ["Paket 3. gün teslim edilir.", "Sorun yok mu?", "Evet…", "Tamam."]),
        ("Örn. kargo ücreti düşer. Ayrıca bkz. iade.", ["Örn. kargo ücreti düşer.", "Ayrıca bkz. iade."]),
        ("Use e.g. the CLI. Mr. Smith agreed. It works (really.) Next one.", ["Use e.g. the CLI.", "Mr. Smith agreed.", "It works (really.)", "Next one."]),
        ("He said \"stop.\" Then left.", ["He said \"stop.\"", "Then left."]),
        ("no punctuation at all", ["no punctuation at all"]),
        ("Satır bir\nsatır iki devam eder. Yeni cümle.", ["Satır bir\nsatır iki devam eder.", "Yeni cümle."]),
        ("Paragraf bir\n\nParagraf iki.", ["Paragraf bir", "Paragraf iki."]),
    ],
)
def test_split_sentences(text, expected):
    assert sents(text) == expected


def test_spans_are_exact_with_offsets():
    text = "xx Bir. İki. yy"
    spans = split_sentences(text, 3, 12)
    assert [text[s:e] for s, e in spans] == ["Bir.", "İki."]


def test_units_rows_items_and_headings_are_their_own_units():
    doc = make_document(
        "k.md",
        "# Kargo\n\nİlk cümle. İkinci cümle.\n\n| Bölge | Süre |\n|---|---|\n| Van | 3 gün |\n\n"
        "1. Adım bir.\n2. Adım iki.\n\n```\ncode {\n}\n```\n",
    )
    units = [(doc.text[u.start : u.end], u.kind) for u in sentence_units(doc)]
    assert units == [
        ("# Kargo", "heading"),
        ("İlk cümle.", "sentence"),
        ("İkinci cümle.", "sentence"),
        ("| Bölge | Süre |\n|---|---|", "row"),
        ("| Van | 3 gün |", "row"),
        ("1. Adım bir.", "item"),
        ("2. Adım iki.", "item"),
        ("```\ncode {\n}\n```", "code"),
    ]
