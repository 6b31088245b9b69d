"""Write the bundled PDF sample: a four-page Turkish staff handbook, and say what a
reader should get back from it.

    python corpus/pdf/make_sample.py            # writes corpus/pdf/personel-el-kitabi.pdf

The PDF has what real ones have: a running header and a footer with page numbers, a
heading hierarchy in three sizes, paragraphs wrapped over several lines, a ruled table,
a bulleted list, and a page set in two columns. `expected_markdown()` is the Markdown
text indexer should extract, known by construction; corpus/pdf/questions.jsonl asks
about it. Needs reportlab (a test dependency) and matplotlib's bundled DejaVu fonts.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "personel-el-kitabi.pdf"
PAGE_W, PAGE_H = 595.0, 842.0
MARGIN_L, MARGIN_R = 72.0, 523.0
GUTTER = 22.0
BODY, LEADING = 10.0, 12.5
HEADING_SIZES = {1: 20.0, 2: 15.0, 3: 12.0}
HEADER = ("Örnek Teknoloji A.Ş.", "Personel El Kitabı 2025")

TITLE = "Personel El Kitabı"
# pages: a list of (kind, payload); kinds: h1/h2/h3 (text), p (paragraph), table (rows),
# items (bullets), columns (left paragraphs, right paragraphs)
PAGES = [
    [
        ("h1", TITLE),
        ("p", "Bu el kitabı, Örnek Teknoloji A.Ş. çalışanlarının çalışma düzenini, izin haklarını ve yan haklarını "
              "özetler. Şirket politikalarıyla çelişen bir durumda güncel politika metni geçerlidir."),
        ("h2", "Çalışma Düzeni"),
        ("h3", "Esnek Çalışma Saatleri"),
        ("p", "Çekirdek çalışma saatleri 10.00 ile 16.00 arasıdır. Çalışanlar işe 08.00 ile 10.00 arasında başlayabilir "
              "ve günlük dokuz saatlik süreyi tamamladıklarında ayrılabilirler."),
        ("p", "Öğle arası bir saattir ve çalışma süresine sayılmaz. Toplantılar çekirdek saatler dışında "
              "planlanmaz."),
        ("h3", "Uzaktan Çalışma"),
        ("p", "Çalışanlar haftada en fazla iki gün evden çalışabilir. Uzaktan çalışılan günler bir hafta önceden "
              "yöneticiye bildirilir ve ekip takvimine işlenir."),
        ("p", "Yurt dışından uzaktan çalışma yılda en fazla otuz gün ile sınırlıdır ve İnsan Kaynakları "
              "onayı gerektirir."),
    ],
    [
        ("h2", "İzinler"),
        ("h3", "Yıllık İzin"),
        ("p", "Yıllık izin süresi kıdeme göre belirlenir. Kullanılmayan izinlerin en fazla beş günü bir sonraki yıla "
              "devredilebilir."),
        ("table", [
            ["Kıdem", "Yıllık izin", "Devredilebilen"],
            ["1-5 yıl", "14 iş günü", "5 gün"],
            ["5-15 yıl", "20 iş günü", "5 gün"],
            ["15 yıl ve üzeri", "26 iş günü", "5 gün"],
        ]),
        ("h3", "Hastalık ve Aile İzinleri"),
        ("p", "Hastalık raporu en geç iki iş günü içinde İnsan Kaynakları sistemine yüklenmelidir. Raporsuz "
              "hastalık izni yılda üç günü geçemez."),
        ("p", "Doğum izni on altı haftadır. Babalık izni on iş günüdür ve doğumdan sonraki ilk ay içinde kullanılır."),
    ],
    [
        ("h2", "Yan Haklar"),
        ("columns", (
            [
                "Yemek kartına her ay 4.500 TL yüklenir. Kart yalnızca anlaşmalı restoranlarda ve marketlerde "
                "geçerlidir; bakiye bir sonraki aya devreder.",
                "Ulaşım desteği, şehir içi toplu taşıma kartına aylık 1.200 TL olarak yüklenir. Otopark ücreti "
                "ayrıca ödenmez.",
            ],
            [
                "Özel sağlık sigortası çalışanı, eşini ve çocuklarını kapsar. Poliçe her yıl ocak ayında "
                "yenilenir ve diş tedavisini de içerir.",
                "Eğitim bütçesi kişi başına yılda 15.000 TL'dir. Konferans ve sertifika ücretleri bu bütçeden "
                "karşılanır.",
            ],
        )),
    ],
    [
        ("h2", "Masraflar ve Güvenlik"),
        ("h3", "Masraf Bildirimi"),
        ("p", "İş seyahati masrafları seyahat dönüşünden sonraki on gün içinde bildirilir. Aşağıdaki kurallar "
              "geçerlidir:"),
        ("items", [
            "Taksi masrafları için fiş veya elektronik makbuz zorunludur.",
            "Konaklama gecelik 3.000 TL sınırını aşarsa yönetici onayı gerekir.",
            "Maaş avansı en fazla bir aylık net maaş kadar olabilir.",
        ]),
        ("h3", "Bilgi Güvenliği"),
        ("p", "Şifreler doksan günde bir değiştirilir ve en az on iki karakter uzunluğunda olmalıdır. İki aşamalı "
              "doğrulama bütün sistemlerde açıktır."),
        ("p", "Kaybolan veya çalınan bir dizüstü bilgisayar aynı gün güvenlik ekibine bildirilir; cihaz uzaktan "
              "silinir."),
    ],
]


def expected_markdown() -> str:
    """The Markdown a reader should get from the PDF (headers, footers and page numbers
    left out, wrapped lines joined, the table as a Markdown table)."""
    parts = []
    for page in PAGES:
        for kind, payload in page:
            if kind in ("h1", "h2", "h3"):
                parts.append("#" * int(kind[1]) + " " + payload)
            elif kind == "p":
                parts.append(payload)
            elif kind == "table":
                rows = ["| " + " | ".join(r) + " |" for r in payload]
                parts.append("\n".join([rows[0], "|" + " --- |" * len(payload[0])] + rows[1:]))
            elif kind == "items":
                parts.extend("- " + item for item in payload)
            elif kind == "columns":
                parts.extend(payload[0] + payload[1])
    return "\n\n".join(parts) + "\n"


def _fonts():
    import matplotlib
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    fonts = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    if "DejaVu" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("DejaVu", str(fonts / "DejaVuSans.ttf")))
        pdfmetrics.registerFont(TTFont("DejaVu-Bold", str(fonts / "DejaVuSans-Bold.ttf")))
    return pdfmetrics.stringWidth


def _wrap(text: str, width: float, measure) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        trial = f"{line} {word}" if line else word
        if line and measure(trial, "DejaVu", BODY) > width:
            lines.append(line)
            line = word
        else:
            line = trial
    return lines + [line]


class _Page:
    """Draws blocks top-down; `y` is the next baseline, from the top of the page."""

    def __init__(self, c, measure):
        self.c, self.measure, self.y = c, measure, 96.0

    def text(self, x: float, text: str, font: str = "DejaVu", size: float = BODY) -> None:
        self.c.setFont(font, size)
        self.c.drawString(x, PAGE_H - self.y, text)

    def heading(self, level: int, text: str) -> None:
        size = HEADING_SIZES[level]
        self.y += size * 0.6
        self.text(MARGIN_L, text, "DejaVu-Bold", size)
        self.y += size + 8

    def paragraph(self, text: str, x: float = MARGIN_L, width: float = MARGIN_R - MARGIN_L) -> None:
        for line in _wrap(text, width, self.measure):
            self.text(x, line)
            self.y += LEADING
        self.y += 8

    def items(self, items: list[str]) -> None:
        for item in items:
            lines = _wrap(item, MARGIN_R - MARGIN_L - 14, self.measure)
            self.text(MARGIN_L, "•")
            for line in lines:
                self.text(MARGIN_L + 14, line)
                self.y += LEADING
            self.y += 4
        self.y += 4

    def table(self, rows: list[list[str]]) -> None:
        xs = [MARGIN_L, MARGIN_L + 170, MARGIN_L + 320, MARGIN_R]
        ys = [self.y + 20 * i for i in range(len(rows) + 1)]
        self.c.setLineWidth(0.7)
        self.c.grid(xs, [PAGE_H - y for y in ys])
        for r, row in enumerate(rows):
            for k, cell in enumerate(row):
                self.y = ys[r] + 14
                self.text(xs[k] + 5, cell, "DejaVu-Bold" if r == 0 else "DejaVu")
        self.y = ys[-1] + 22

    def columns(self, left: list[str], right: list[str]) -> None:
        width = (MARGIN_R - MARGIN_L - GUTTER) / 2
        top = self.y
        bottoms = []
        for x, paragraphs in ((MARGIN_L, left), (MARGIN_L + width + GUTTER, right)):
            self.y = top
            for text in paragraphs:
                self.paragraph(text, x, width)
            bottoms.append(self.y)
        self.y = max(bottoms)


def write(path: Path = OUT) -> str:
    """Write the PDF to `path` (byte-for-byte the same every time) and return the
    Markdown a reader should get from it."""
    from reportlab.pdfgen import canvas

    measure = _fonts()
    c = canvas.Canvas(str(path), pagesize=(PAGE_W, PAGE_H), invariant=1)
    c.setTitle(TITLE)
    c.setAuthor("indexer")
    for n, blocks in enumerate(PAGES, start=1):
        c.setFont("DejaVu", 8)
        c.drawString(MARGIN_L, PAGE_H - 42, HEADER[0])
        c.drawRightString(MARGIN_R, PAGE_H - 42, HEADER[1])
        c.drawCentredString(PAGE_W / 2, 36, f"Sayfa {n} / {len(PAGES)}")
        page = _Page(c, measure)
        for kind, payload in blocks:
            if kind in ("h1", "h2", "h3"):
                page.heading(int(kind[1]), payload)
            elif kind == "p":
                page.paragraph(payload)
            elif kind == "table":
                page.table(payload)
            elif kind == "items":
                page.items(payload)
            elif kind == "columns":
                page.columns(*payload)
        c.showPage()
    c.save()
    return expected_markdown()


if __name__ == "__main__":
    write()
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT} "
          f"({OUT.stat().st_size / 1024:.0f} KB)")
