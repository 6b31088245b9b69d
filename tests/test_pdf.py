"""PDF extraction: PDFs drawn here, line by line, so the text a reader sees is known.

The fixture is a three-page Turkish policy (reportlab, DejaVu from matplotlib's fonts):
a heading hierarchy in three sizes, hyphenated line ends, a two-column page whose rows
line up, a ruled table, and a running header and footer with page numbers. The expected
Markdown is written out by hand below; `extract_pdf` must give it back exactly.
"""

from __future__ import annotations

import io
import random
import tempfile
from pathlib import Path

import matplotlib
import pytest
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from indexer.loaders.pdf import PdfText, extract_pdf, page_number_like
from indexer.loaders.skips import SkipFile

# ------------------------------------------------------------------ the fixture

FONTS = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
A4 = (595.0, 842.0)
LEFT, RIGHT = 72.0, 523.0
SIZES = {1: 20.0, 2: 15.0, 3: 12.0}

TITLE = "Kargo ve Teslimat Politikası"
P1 = [
    "Bu belge, Çağrı Öztürk ve İlknur Güneş tarafından hazırlanan kargo kulla-",
    "nım koşullarını anlatır. Sipariş durumunu size e-",
    "posta ile bildiririz; Ar-",
    "Ge ekibimiz Iğdır'daki depoyu her ay ölçer.",
]
P2 = [
    "GÜMRÜK ÜCRETİ ÖDENİR: ŞİRKET ÇAĞRI MERKEZİ DOĞRULAR. Teslimat adresi",
    "değişirse müşteri hizmetleri yeni adresi onaylar ve gönderi yeniden planlanır.",
]
P3 = [
    "Saat 14.00'e kadar verilen siparişler aynı gün kargoya teslim edilir. Hafta sonu",
    "verilen siparişler pazartesi günü yola çıkar; yoğun dönemlerde bu süre uza-",
    "yabilir.",
]
# page 2: two columns whose lines share baselines; paragraph B runs on into the right column
COL_LEFT = [
    ["Anadolu'daki il merkezlerine gönderiler", "genellikle iki iş günü içinde ulaşır.",
     "Kargo firması teslimattan önce alıcıyı", "kısa mesajla bilgilendirir."],
    ["Doğu illerinde hava koşulları", "nedeniyle teslimat süresi"],
]
COL_RIGHT = [
    ["bir iki gün uzayabilir. Bu durumda", "ek ücret alınmaz."],
    ["Köylere ve adalara yapılan", "gönderilerde teslimat en yakın",
     "şubeden yapılır; alıcı paketini", "şubeden kendisi teslim alır."],
]
TABLE = [
    ["Bölge", "Süre", "Ücret"],
    ["İstanbul içi", "1-2 iş günü", "Ücretsiz"],
    ["İlçe ve köyler", "3-5 iş günü", "49,90 TL"],
    ["Yurt dışı", "7-14 iş günü", "Değişken"],
]
P4 = ["Tablodaki ücretlere KDV dahildir. Şikâyetleriniz için çağrı merkezimizi arayın."]
HEADER_LEFT, HEADER_RIGHT = "Örnek Lojistik A.Ş.", "Kargo Politikası 2025"

PAGE1 = (
    f"# {TITLE}\n\n"
    "Bu belge, Çağrı Öztürk ve İlknur Güneş tarafından hazırlanan kargo kullanım koşullarını anlatır. "
    "Sipariş durumunu size e-posta ile bildiririz; Ar-Ge ekibimiz Iğdır'daki depoyu her ay ölçer.\n\n"
    "GÜMRÜK ÜCRETİ ÖDENİR: ŞİRKET ÇAĞRI MERKEZİ DOĞRULAR. Teslimat adresi değişirse müşteri hizmetleri "
    "yeni adresi onaylar ve gönderi yeniden planlanır.\n\n"
    "## Teslim Süreleri\n\n"
    "### İstanbul İçi Gönderiler\n\n"
    "Saat 14.00'e kadar verilen siparişler aynı gün kargoya teslim edilir. Hafta sonu verilen siparişler "
    "pazartesi günü yola çıkar; yoğun dönemlerde bu süre uzayabilir."
)
PAGE2 = (
    "## Bölgelere Göre Koşullar\n\n"
    "Anadolu'daki il merkezlerine gönderiler genellikle iki iş günü içinde ulaşır. Kargo firması "
    "teslimattan önce alıcıyı kısa mesajla bilgilendirir.\n\n"
    "Doğu illerinde hava koşulları nedeniyle teslimat süresi bir iki gün uzayabilir. Bu durumda ek ücret alınmaz.\n\n"
    "Köylere ve adalara yapılan gönderilerde teslimat en yakın şubeden yapılır; alıcı paketini şubeden "
    "kendisi teslim alır."
)
PAGE3 = (
    "## Ücret Tablosu\n\n"
    "| Bölge | Süre | Ücret |\n"
    "| --- | --- | --- |\n"
    "| İstanbul içi | 1-2 iş günü | Ücretsiz |\n"
    "| İlçe ve köyler | 3-5 iş günü | 49,90 TL |\n"
    "| Yurt dışı | 7-14 iş günü | Değişken |\n\n"
    "Tablodaki ücretlere KDV dahildir. Şikâyetleriniz için çağrı merkezimizi arayın."
)
EXPECTED_PAGES = [PAGE1, PAGE2, PAGE3]


def register_fonts() -> None:
    """Register DejaVu (regular and bold) with reportlab once: the PDFs here draw Turkish text."""
    if "DejaVu" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("DejaVu", str(FONTS / "DejaVuSans.ttf")))
        pdfmetrics.registerFont(TTFont("DejaVu-Bold", str(FONTS / "DejaVuSans-Bold.ttf")))


class Writer:
    """Draws lines top-down on a reportlab canvas; `y` is the next baseline from the top."""

    def __init__(self, c: canvas.Canvas):
        self.c, self.y = c, 90.0

    def line(self, text: str, x: float = LEFT, size: float = 10.0, bold: bool = False, width: float = RIGHT - LEFT):
        font = "DejaVu-Bold" if bold else "DejaVu"
        assert pdfmetrics.stringWidth(text, font, size) <= width, f"fixture line too long: {text!r}"
        self.c.setFont(font, size)
        self.c.drawString(x, A4[1] - self.y, text)

    def para(self, lines: list[str], x: float = LEFT, width: float = RIGHT - LEFT, after: float = 8.0):
        for text in lines:
            self.line(text, x, width=width)
            self.y += 12.0
        self.y += after

    def heading(self, level: int, text: str):
        size = SIZES[level]
        self.y += size * 0.6
        self.line(text, size=size, bold=True)
        self.y += size + 8


def draw_furniture(c: canvas.Canvas, n: int, total: int, footer: str) -> None:
    """Page n's running header (left and right) and its `footer` (`{n}`, `{total}` filled in)."""
    c.setFont("DejaVu", 8)
    c.drawString(LEFT, A4[1] - 40, HEADER_LEFT)
    c.drawRightString(RIGHT, A4[1] - 40, HEADER_RIGHT)
    c.drawCentredString(A4[0] / 2, 36, footer.format(n=n, total=total))


def _page1(w: Writer) -> None:
    w.heading(1, TITLE)
    w.para(P1)
    w.para(P2)
    w.heading(2, "Teslim Süreleri")
    w.heading(3, "İstanbul İçi Gönderiler")
    w.para(P3)


def _page2(w: Writer) -> None:
    """Drawn row by row across both columns, so the order of the content stream is not
    the reading order (as with some report generators)."""
    w.heading(2, "Bölgelere Göre Koşullar")
    columns = []
    for paras in (COL_LEFT, COL_RIGHT):
        y, placed = w.y, []
        for lines in paras:
            for text in lines:
                placed.append((y, text))
                y += 12.0
            y += 8.0
        columns.append(placed)
    for (y_left, left), (y_right, right) in zip(*columns):
        w.y = y_left
        w.line(left, x=LEFT, width=211.0)
        w.y = y_right
        w.line(right, x=312.0, width=211.0)


def _page3(w: Writer) -> None:
    w.heading(2, "Ücret Tablosu")
    xs = [LEFT, LEFT + 150, LEFT + 300, RIGHT]
    ys = [w.y + 20 * i for i in range(len(TABLE) + 1)]
    w.c.setLineWidth(0.7)
    w.c.grid(xs, [A4[1] - y for y in ys])
    for r, row in enumerate(TABLE):
        for k, cell in enumerate(row):
            w.y = ys[r] + 14
            w.line(cell, x=xs[k] + 4, bold=r == 0, width=xs[k + 1] - xs[k] - 8)
    w.y = ys[-1] + 24
    w.para(P4)


PAGES = [_page1, _page2, _page3]


def make_policy_pdf(path: Path, n_pages: int = 3, footer: str = "Sayfa {n} / {total}", **canvas_args) -> str:
    """Write the policy PDF (page templates cycle for n_pages) and return the Markdown a
    reader should get back."""
    register_fonts()
    c = canvas.Canvas(str(path), pagesize=A4, **canvas_args)
    c.setTitle("")
    for i in range(n_pages):
        draw_furniture(c, i + 1, n_pages, footer)
        PAGES[i % 3](Writer(c))
        c.showPage()
    c.save()
    return expected_text(n_pages)


def expected_text(n_pages: int = 3) -> str:
    return "\n\n".join(EXPECTED_PAGES[i % 3] for i in range(n_pages)) + "\n"


# ------------------------------------------------------------------ the good PDF


@pytest.fixture(scope="module")
def policy(tmp_path_factory) -> tuple[PdfText, str]:
    path = tmp_path_factory.mktemp("pdf") / "politika.pdf"
    expected = make_policy_pdf(path)
    return extract_pdf(path), expected


def test_text_is_the_markdown_a_reader_sees(policy):
    got, expected = policy
    assert got.text == expected
    assert got.title == TITLE
    assert got.warnings == []


def test_turkish_letters_survive_in_nfc(policy):
    import unicodedata

    got, _ = policy
    for letter in "çğıİöşüÇĞÖŞÜ":
        assert letter in got.text
    assert unicodedata.is_normalized("NFC", got.text)


def test_two_columns_read_left_then_right(policy):
    text = policy[0].text
    order = ["Anadolu'daki", "bilgilendirir.", "Doğu illerinde", "bir iki gün", "Köylere"]
    positions = [text.index(s) for s in order]
    assert positions == sorted(positions)
    assert "nedeniyle teslimat süresi bir iki gün uzayabilir." in text  # joined across the column break


def test_running_header_footer_and_page_numbers_are_gone(policy):
    text = policy[0].text
    assert HEADER_LEFT not in text and HEADER_RIGHT not in text
    assert "Sayfa" not in text


def test_line_end_hyphens(policy):
    text = policy[0].text
    assert "kullanım" in text and "uzayabilir." in text  # split words are joined
    assert "e-posta" in text and "Ar-Ge" in text  # real hyphens stay


def test_heading_levels_follow_font_size(policy):
    headings = [line for line in policy[0].text.splitlines() if line.startswith("#")]
    assert headings == [
        f"# {TITLE}", "## Teslim Süreleri", "### İstanbul İçi Gönderiler", "## Bölgelere Göre Koşullar", "## Ücret Tablosu",
    ]


def test_ruled_table_becomes_a_markdown_table(policy):
    lines = policy[0].text.splitlines()
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines if line.startswith("|")]
    assert rows[0] == TABLE[0] and rows[1] == ["---"] * 3 and rows[2:] == TABLE[1:]


def test_page_spans_map_offsets_to_pages(policy):
    got, _ = policy
    assert len(got.pages) == 3
    for i, page_text in enumerate(EXPECTED_PAGES):
        start, end = got.pages[i]
        assert got.text[start:end] == page_text  # a heading's `#` mark belongs to its page
        assert got.page_at(start) == i + 1 and got.page_at(end - 1) == i + 1
    assert got.page_span(got.text.index("Köylere"), got.text.index("| Yurt dışı")) == (2, 3)


def test_a_word_split_across_a_page_break_and_an_empty_page(tmp_path):
    register_fonts()
    path = tmp_path / "sayfa.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    for lines in (["Birinci sayfanın son satırında kulla-"], [], ["nım koşulları ikinci sayfada sürer."]):
        w = Writer(c)
        w.para(lines)
        c.showPage()
    c.save()
    got = extract_pdf(path)
    assert got.text == "Birinci sayfanın son satırında kullanım koşulları ikinci sayfada sürer.\n"
    cut = got.text.index("nım")
    assert got.page_at(cut - 1) == 1 and got.page_at(cut) == 3
    assert got.pages[1] == (cut, cut)  # the empty page owns no offset
    assert got.page_span(0, len(got.text) - 1) == (1, 3)


def test_many_pages_keep_header_footer_detection_and_spans(tmp_path):
    path = tmp_path / "uzun.pdf"
    expected = make_policy_pdf(path, n_pages=7, footer="- {n} -")
    got = extract_pdf(path)
    assert got.text == expected
    assert [got.page_at(s) for s, _ in got.pages] == list(range(1, 8))


@pytest.mark.parametrize(
    "text", ["3", "- 3 -", "— 12 —", "Page 3 of 10", "page 3", "Sayfa 3", "Sayfa 3 / 10", "3 / 10", "iv", "[7]"]
)
def test_page_number_forms(text):
    assert page_number_like(text)


@pytest.mark.parametrize("text", ["3 iş günü", "Sayfa düzeni", "2024 yılı raporu", "Bölüm 3"])
def test_text_that_is_not_a_page_number(text):
    assert not page_number_like(text)


def test_a_page_rotated_for_landscape_reads_upright(tmp_path):
    register_fonts()
    path = tmp_path / "yatay.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    c.setPageRotation(90)
    c.translate(A4[0], 0)
    c.rotate(90)  # the content is drawn sideways so that it reads upright once the page turns
    c.setFont("DejaVu", 10)
    c.drawString(72, 500, "Yatay sayfadaki birinci satır şöyle")
    c.drawString(72, 488, "devam eder ve burada biter.")
    c.showPage()
    c.save()
    got = extract_pdf(path)
    assert got.text == "Yatay sayfadaki birinci satır şöyle devam eder ve burada biter.\n"
    assert got.warnings == []


def test_pdf_from_another_producer(tmp_path):
    """matplotlib writes its own PDFs (embedded DejaVu, its own font encoding)."""
    import matplotlib.pyplot as plt

    path = tmp_path / "grafik.pdf"
    fig = plt.figure(figsize=(6, 2))
    fig.text(0.05, 0.7, "Çeyrek satışları: İzmir ve Muğla şubeleri", fontsize=12)
    fig.text(0.05, 0.4, "Öğrenci ağırlıklı bölgelerde düşüş görüldü.", fontsize=12)
    with matplotlib.rc_context({"pdf.fonttype": 42}):
        fig.savefig(path)
    plt.close(fig)
    got = extract_pdf(path)
    assert "Çeyrek satışları: İzmir ve Muğla şubeleri" in got.text
    assert "Öğrenci ağırlıklı bölgelerde düşüş görüldü." in got.text


def test_code_keeps_its_lines_and_indentation_and_bullets_become_items(tmp_path):
    register_fonts()
    if "DejaVuMono" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("DejaVuMono", str(FONTS / "DejaVuSansMono.ttf")))
    path = tmp_path / "kod.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    w = Writer(c)
    w.para(["Kurulum için şu adımlar yeterlidir:"], after=4)
    for item in ["• Paketi indirin.", "• Ayarları gözden geçirin ve", "  sunucuyu başlatın."]:
        w.line(item)
        w.y += 12
    w.y += 8
    c.setFont("DejaVuMono", 9)
    for code in ["def teslim(gün):", "    if gün > 3:", "        return 'geç'", "", "print(teslim(4))"]:
        c.drawString(LEFT, A4[1] - w.y, code)
        w.y += 11
    w.y += 8
    w.para(["Çıktı geç olur."])
    c.showPage()
    c.save()
    assert extract_pdf(path).text == (
        "Kurulum için şu adımlar yeterlidir:\n\n"
        "- Paketi indirin.\n\n"
        "- Ayarları gözden geçirin ve sunucuyu başlatın.\n\n"
        "```\ndef teslim(gün):\n    if gün > 3:\n        return 'geç'\n\nprint(teslim(4))\n```\n\n"
        "Çıktı geç olur.\n"
    )


def test_a_platypus_table_with_a_merged_row(tmp_path):
    """reportlab's own table layout: rules drawn per row and column, one row spanning
    all columns (its text goes to the first cell)."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Table, TableStyle

    register_fonts()
    style = getSampleStyleSheet()["BodyText"]
    style.fontName = "DejaVu"
    table = Table([["Bölge", "Süre"], ["Marmara", "1-2 gün"], ["Ege ve Akdeniz birlikte", ""], ["Doğu", "3-5 gün"]])
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, "black"), ("SPAN", (0, 2), (1, 2)),
                               ("FONTNAME", (0, 0), (-1, -1), "DejaVu")]))
    path = tmp_path / "platypus.pdf"
    SimpleDocTemplate(str(path)).build([Paragraph("Süreler şöyledir:", style), table, Paragraph("Bitti.", style)])
    assert extract_pdf(path).text == (
        "Süreler şöyledir:\n\n"
        "| Bölge | Süre |\n| --- | --- |\n| Marmara | 1-2 gün |\n| Ege ve Akdeniz birlikte |  |\n| Doğu | 3-5 gün |\n\n"
        "Bitti.\n"
    )


def test_columns_framed_and_split_by_a_rule_are_text_not_a_table(tmp_path):
    """A frame with a rule between the columns makes a 2-cell grid; its lines even line
    up like table rows. It is still two columns of text."""
    register_fonts()
    path = tmp_path / "cerceve.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    c.rect(60, 300, 475, 482)
    c.line(297, 300, 297, 782)
    c.line(60, 700, 535, 700)
    c.setFont("DejaVu", 10)
    for k in range(12):
        c.drawString(72, 680 - 14 * k, f"Sol sütunun {k + 1}. satırı burada.")
        c.drawString(310, 680 - 14 * k, f"Sağ sütunun {k + 1}. satırı burada.")
    c.showPage()
    c.save()
    text = extract_pdf(path).text
    assert "|" not in text
    assert text.index("Sol sütunun 12.") < text.index("Sağ sütunun 1.")


# ------------------------------------------------------------------ bad PDFs (the bad-input matrix builds them too)


def pdf_bytes(make, *args, **kw) -> bytes:
    """What a PDF maker (a function of a path) writes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "made.pdf"
        make(path, *args, **kw)
        return path.read_bytes()


def one_page_pdf(path: Path, paragraphs: list[list[str]]) -> None:
    """A plain one-page PDF: paragraphs of lines in the body font."""
    register_fonts()
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    w = Writer(c)
    for lines in paragraphs:
        w.para(lines)
    c.showPage()
    c.save()


def image_only_pdf(path: Path) -> None:
    """A scanned page: a picture of text, no text layer."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader

    image = Image.new("RGB", (400, 100), "white")
    ImageDraw.Draw(image).text((10, 40), "Taranmis sayfa", fill="black")
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.drawImage(ImageReader(io.BytesIO(buf.getvalue())), 72, 600, 400, 100)
    c.showPage()
    c.save()


def encrypted_pdf() -> bytes:
    return pdf_bytes(make_policy_pdf, n_pages=1, encrypt="parola")


def truncated_pdf(cut: int | None = None) -> bytes:
    data = pdf_bytes(make_policy_pdf)
    return data[: len(data) // 2 if cut is None else cut]


def garbage_pdf(seed: int = 8) -> bytes:
    """A PDF header and an end marker around random bytes."""
    return b"%PDF-1.7\n" + random.Random(seed).randbytes(4000) + b"\n%%EOF\n"


# the one-line reasons a build gives for them
ENCRYPTED = "encrypted PDF (needs a password); decrypt it first, e.g. qpdf --decrypt --password=PASS in.pdf out.pdf"
TRUNCATED = "truncated PDF (no end-of-file marker; the copy or download was cut short?); get a complete copy"
CORRUPT = "corrupt or truncated PDF (PDFium cannot open it); repair it, e.g. with qpdf, or get a new copy"
NO_TEXT = "no text layer (a scanned PDF?); OCR it first, e.g. with ocrmypdf"


def _reason(path, **kw) -> str:
    with pytest.raises(SkipFile) as info:
        extract_pdf(path, **kw)
    reason = str(info.value)
    assert "\n" not in reason
    return reason


def test_encrypted_pdf_is_skipped_with_a_password_hint(tmp_path):
    path = tmp_path / "gizli.pdf"
    path.write_bytes(encrypted_pdf())
    assert _reason(path) == ENCRYPTED


def test_truncated_pdf_is_skipped(tmp_path):
    for cut in (None, -200, 600):
        path = tmp_path / f"yarim{cut}.pdf"
        path.write_bytes(truncated_pdf(cut))
        assert "truncated" in _reason(path)
    assert _reason(path) == TRUNCATED


def test_garbage_with_a_pdf_name_is_skipped(tmp_path):
    path = tmp_path / "cop.pdf"
    path.write_bytes(random.Random(7).randbytes(4000))
    assert "not a PDF" in _reason(path)
    header_only = tmp_path / "bas.pdf"
    header_only.write_bytes(garbage_pdf())
    assert _reason(header_only) == CORRUPT
    empty = tmp_path / "bos.pdf"
    empty.write_bytes(b"")
    assert "empty" in _reason(empty)


def test_image_only_pdf_needs_ocr(tmp_path):
    path = tmp_path / "tarama.pdf"
    image_only_pdf(path)
    reason = _reason(path)
    assert reason == NO_TEXT and "ocrmypdf" in reason


def test_real_world_pdf_without_text(tmp_path):
    """matplotlib ships its toolbar icons as PDFs: vector drawings, no text."""
    icon = Path(matplotlib.get_data_path()) / "images" / "home.pdf"
    if not icon.exists():
        pytest.skip("matplotlib without its icon PDFs")
    assert "no text layer" in _reason(icon)


def test_page_cap(tmp_path):
    path = tmp_path / "uc.pdf"
    make_policy_pdf(path)
    reason = _reason(path, max_pages=2)
    assert "3 pages" in reason and "--max-pdf-pages" in reason
    assert len(extract_pdf(path, max_pages=3).pages) == 3


def test_owner_password_only_pdf_is_read(tmp_path):
    """Permissions without a user password (no copying, say) do not stop reading."""
    from reportlab.lib.pdfencrypt import StandardEncryption

    path = tmp_path / "kisitli.pdf"
    expected = make_policy_pdf(path, encrypt=StandardEncryption("", ownerPassword="sahip", canCopy=0))
    assert extract_pdf(path).text == expected


def test_damaged_bytes_never_crash(tmp_path):
    """Random damage inside a good PDF ends in text or in SkipFile, nothing else."""
    whole = tmp_path / "tam.pdf"
    make_policy_pdf(whole)
    data = whole.read_bytes()
    rng = random.Random(11)
    outcomes = set()
    for k in range(25):
        damaged = bytearray(data)
        for _ in range(rng.choice([1, 10, 200])):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        path = tmp_path / f"bozuk{k}.pdf"
        path.write_bytes(bytes(damaged))
        try:
            got = extract_pdf(path)
        except SkipFile as exc:
            assert str(exc) and "\n" not in str(exc)
            outcomes.add("skipped")
        else:
            assert isinstance(got.text, str) and len(got.pages) <= 3
            outcomes.add("read")
    assert outcomes
