"""PDFs of the kinds whose pages repeat their layout: invoices, forms, statements, slide
decks and a long manual, drawn with reportlab, each with the text it carries known.

Every maker writes the PDF and returns a `Drawn`: per page, the body lines (what a reader
must get back, including lines that are the same on every page but sit in the body) and
the furniture (running titles, page numbers, confidentiality footers: what a reader must
not get). tests/test_pdf_furniture.py checks both; bench/pdf_compare.py times the long
manual at 2,000 pages.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

FONTS = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
A4 = (595.0, 842.0)


@dataclass
class Drawn:
    body: list[list[str]] = field(default_factory=list)  # per page, the lines a reader must get
    furniture: list[str] = field(default_factory=list)  # texts a reader must not get
    headings: list[str] = field(default_factory=list)  # per page, its heading (the manual)


def fonts() -> None:
    if "DejaVu" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("DejaVu", str(FONTS / "DejaVuSans.ttf")))
        pdfmetrics.registerFont(TTFont("DejaVu-Bold", str(FONTS / "DejaVuSans-Bold.ttf")))


class Sheet:
    """A canvas drawn top-down: `y` counts from the top of the page."""

    def __init__(self, path: Path, size=A4, **kw):
        fonts()
        self.c = canvas.Canvas(str(path), pagesize=size, invariant=1, **kw)
        self.w, self.h = size

    def text(self, x: float, y: float, text: str, size: float = 10.0, bold: bool = False, align: str = "left"):
        self.c.setFont("DejaVu-Bold" if bold else "DejaVu", size)
        draw = {"left": self.c.drawString, "right": self.c.drawRightString, "centre": self.c.drawCentredString}[align]
        draw(x, self.h - y, text)

    def page(self):
        self.c.showPage()

    def save(self):
        self.c.save()


def invoice_pdf(path: Path, pages: int = 5) -> Drawn:
    """The issue's invoices, as the user drew them (reportlab's default Helvetica, Letter):
    a bold number, a line of amounts, and a payment note that is the same on every page,
    right under the amounts. No furniture at all: every line is body."""
    c = canvas.Canvas(str(path), invariant=1)
    drawn = Drawn()
    for i in range(1, pages + 1):
        lines = [f"Fatura 100{i}", f"Musteri {i}: toplam tutar {1250 * i} TL, vade {15 * i} gun.",
                 "Odeme havale ile yapilir."]
        c.setFont("Helvetica-Bold", 16)
        c.drawString(72, 760, lines[0])
        c.setFont("Helvetica", 11)
        c.drawString(72, 730, lines[1])
        c.drawString(72, 714, lines[2])
        c.showPage()
        drawn.body.append(lines)
    c.save()
    return drawn


def chapters_pdf(path: Path, pages: int = 3) -> Drawn:
    """The issue's second PDF: each page a chapter heading and one line of text, both the
    same on every page but for their numbers."""
    sheet = Sheet(path)
    drawn = Drawn()
    for n in range(1, pages + 1):
        lines = [f"Bölüm {n}: Teslimat", f"Sayfa {n} metni: sipariş {n + 1} iş gününde teslim edilir."]
        sheet.text(72, 80, lines[0], 14, bold=True)
        sheet.text(72, 110, lines[1], 11)
        sheet.page()
        drawn.body.append(lines)
    sheet.save()
    return drawn


def letterhead_invoice_pdf(path: Path, pages: int = 6) -> Drawn:
    """Invoices on letterhead: a running company line and a confidentiality footer with
    the page number; the invoice number, customer and amounts differ only in digits from
    page to page, at the same place on every page."""
    sheet = Sheet(path)
    drawn = Drawn(furniture=["Örnek Ticaret A.Ş.", "Gizlidir: yalnızca alıcıya yöneliktir", "Sayfa"])
    for i in range(1, pages + 1):
        sheet.text(72, 40, "Örnek Ticaret A.Ş.", 8)
        sheet.text(523, 40, "e-Fatura", 8, align="right")
        lines = [f"Fatura No 2024-{i:04d}", f"Müşteri No 55{i}0, düzenleme tarihi 0{i}.03.2024",
                 f"Hizmet bedeli {1000 + 150 * i},00 TL", f"KDV %20 {200 + 30 * i},00 TL",
                 f"Genel toplam {1200 + 180 * i},00 TL", "Ödeme havale ile yapılır."]
        sheet.text(72, 92, lines[0], 14, bold=True)
        for k, line in enumerate(lines[1:]):
            sheet.text(72, 118 + 14 * k, line)
        sheet.text(72, 800, "Gizlidir: yalnızca alıcıya yöneliktir", 7)
        sheet.text(523, 800, f"Sayfa {i} / {pages}", 7, align="right")
        sheet.page()
        drawn.body.append(lines)
    drawn.furniture.append("e-Fatura")
    sheet.save()
    return drawn


def form_pdf(path: Path, pages: int = 5) -> Drawn:
    """Filled-in application forms: the same labels at the same places on every page, the
    values differ (an application number that grows with the page among them)."""
    sheet = Sheet(path)
    drawn = Drawn(furniture=["Örnek Belediyesi · Form B-12", "Sayfa"])
    names = ["Ayşe Yılmaz", "Mehmet Demir", "Zeynep Kaya", "Ali Çelik", "Elif Şahin", "Can Öztürk"]
    for i in range(1, pages + 1):
        sheet.text(72, 36, "Örnek Belediyesi · Form B-12", 8)
        lines = ["Başvuru Formu", f"Başvuru no: 2024-{i:05d}", f"Ad soyad: {names[i % len(names)]}",
                 f"Telefon: 0532 111 22 {30 + i}", f"Doğum tarihi: 1{i}.04.198{i}", f"Talep edilen tutar: {i}.000 TL",
                 "Beyan: verdiğim bilgilerin doğru olduğunu onaylarım."]
        sheet.text(72, 80, lines[0], 16, bold=True)
        for k, line in enumerate(lines[1:]):
            sheet.text(72, 112 + 18 * k, line, 11)
        sheet.text(297.5, 806, f"Sayfa {i} / {pages}", 8, align="centre")
        sheet.page()
        drawn.body.append(lines)
    sheet.save()
    return drawn


def statement_pdf(path: Path, pages: int = 4) -> Drawn:
    """A bank statement: a running title, the account line (the same on every page, glued to
    the body), transactions, a page total as the last body line, a confidentiality footer
    and a bare page number."""
    sheet = Sheet(path)
    drawn = Drawn(furniture=["Örnek Bank A.Ş. · Hesap Özeti", "Bu belge gizlidir; bilgi amaçlıdır."])
    rng = random.Random(4)
    shops = ["Market alışverişi", "Elektrik faturası", "Maaş ödemesi", "Kira havalesi", "Eczane", "Akaryakıt"]
    for i in range(1, pages + 1):
        sheet.text(72, 36, "Örnek Bank A.Ş. · Hesap Özeti", 8)
        lines = ["Hesap no: TR12 0006 4000 0011 2345 6789 01", f"Devreden bakiye: {10000 + 731 * i},{i}0 TL"]
        sheet.text(72, 80, lines[0])
        sheet.text(72, 93, lines[1])
        y = 120.0
        for k in range(20):
            amount = f"{rng.randint(10, 9000)},{rng.randint(10, 99)} TL"
            row = [f"{(k % 28) + 1:02d}.0{i}.2024", shops[rng.randrange(len(shops))], amount]
            sheet.text(72, y, row[0])
            sheet.text(160, y, row[1])
            sheet.text(523, y, row[2], align="right")
            lines.append(" ".join(row))
            y += 14
        total = f"Sayfa toplamı: {rng.randint(1000, 99999)},{rng.randint(10, 99)} TL"
        sheet.text(72, y + 6, total, bold=True)
        lines.append(total)
        sheet.text(72, 790, "Bu belge gizlidir; bilgi amaçlıdır.", 7)
        sheet.text(297.5, 808, str(i), 8, align="centre")
        sheet.page()
        drawn.body.append(lines)
    sheet.save()
    return drawn


def slides_pdf(path: Path, pages: int = 6) -> Drawn:
    """A slide deck (16:9): titles that differ only in digits, bullets, the company's logo
    text inside the body area on every slide (body, kept), a confidentiality footer and a
    slide number in the corner (furniture)."""
    sheet = Sheet(path, size=(720.0, 405.0))
    drawn = Drawn(furniture=["Şirket içi · Gizli"])
    for i in range(1, pages + 1):
        lines = [f"Çeyrek {i} sonuçları", f"Satışlar {12 + i} milyon TL, hedef {14 + i} milyon TL",
                 f"Yeni müşteri sayısı {340 + 25 * i}", f"İade oranı %{i + 2}", "Acme Analitik"]
        sheet.text(40, 50, lines[0], 28, bold=True)
        for k, line in enumerate(lines[1:4]):
            sheet.text(60, 110 + 32 * k, "• " + line, 18)
        sheet.text(520, 220, lines[4], 14, bold=True)  # the logo text, beside the bullets
        sheet.text(40, 390, "Şirket içi · Gizli", 9)
        sheet.text(690, 390, str(i), 9, align="right")
        sheet.page()
        drawn.body.append(lines)
    sheet.save()
    return drawn


TOPICS = [
    "Kurulum", "Ağ ayarları", "Kullanıcılar ve roller", "Yedekleme", "Geri yükleme", "Günlük kayıtları",
    "Güncelleme", "Sorun giderme", "Güvenlik", "Performans", "Depolama", "Raporlar",
]
_WORDS = (
    "sistem sunucu ayar dosya kullanıcı yönetici yedek kayıt bağlantı işlem süre değer disk bellek ağ port adres "
    "parola rol yetki görev zaman tablo sorgu sonuç hata uyarı sürüm paket modül servis istemci katman izin"
).split()


def manual_pdf(path: Path, pages: int, compress: bool = True) -> Drawn:
    """A long manual: a running header and a page footer, on each page one bold numbered
    heading a point larger than the text (`12. Yedekleme`), at the same place on every
    page, and about 3,500 characters of text in paragraphs whose words and numbers change
    from page to page. `Drawn.headings` lists the headings, one a page."""
    sheet = Sheet(path, pageCompression=1 if compress else 0)
    drawn = Drawn(furniture=["Kurulum ve İşletim Kılavuzu", "Sürüm 4.2", "Sayfa"])
    rng = random.Random(22)
    for n in range(1, pages + 1):
        sheet.text(72, 40, "Kurulum ve İşletim Kılavuzu", 8)
        sheet.text(523, 40, "Sürüm 4.2", 8, align="right")
        heading = f"{n}. {TOPICS[n % len(TOPICS)]}"
        sheet.text(72, 84, heading, 11, bold=True)
        drawn.headings.append(heading)
        lines = []
        y = 108.0
        while y < 740:
            for _ in range(min(rng.randint(3, 6), int((770 - y) / 12.5))):
                words = [rng.choice(_WORDS) for _ in range(12)]
                words[rng.randrange(12)] = str(rng.randint(1, 9999))
                lines.append(" ".join(words).capitalize() + ("." if rng.random() < 0.3 else ""))
                sheet.text(72, y, lines[-1])
                y += 12.5
            y += 8
        drawn.body.append(lines)
        sheet.text(297.5, 806, f"Sayfa {n} / {pages}", 8, align="centre")
        sheet.page()
    sheet.save()
    return drawn


# ---------------------------------------------------------------- layouts read in order (issue 35)

MEASURE = (90.0, 522.0)  # a Texinfo manual's text column


def hidden_mono_font() -> str:
    """DejaVu Sans Mono, registered to be renamed by `hide_fixed_pitch` after drawing."""
    fonts()
    if "Listing" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("Listing", str(FONTS / "DejaVuSansMono.ttf")))
    return "Listing"


def hide_fixed_pitch(path: Path) -> None:
    """Make a fixed-pitch font look like any other: a name no pattern knows (as
    NimbusMonL was) and no FixedPitch flag; only its glyphs' widths tell. Same-length
    byte swaps keep the cross-reference table right (the canvas must not compress)."""
    data = path.read_bytes().replace(b"DejaVuSansMono", b"DejaVuSansPlan")
    path.write_bytes(data.replace(b"/Flags 5 ", b"/Flags 4 "))


def spread(sheet: Sheet, y: float, words: list[str], size: float, x0: float = MEASURE[0],
           x1: float = MEASURE[1], gaps: list[float] | None = None) -> list[float]:
    """Draw words on one baseline: justified from x0 to x1 (`gaps` None) or with the
    given gaps after each word. Returns the gaps drawn."""
    widths = [pdfmetrics.stringWidth(w, "DejaVu", size) for w in words]
    if gaps is None:
        gaps = [(x1 - x0 - sum(widths)) / max(1, len(words) - 1)] * (len(words) - 1)
    x = x0
    for word, width, gap in zip(words, widths, gaps + [0.0]):
        sheet.text(x, y, word, size)
        x += width + gap
    return gaps


def justified_pdf(path: Path) -> list[str]:
    """The issue's page 15 and page 6 of libtasn1's manual: justified lines whose spaces
    are wider than the body font's 0.8 em, or one line whose long last word is pushed to
    the right margin, above short lines (a gap in one line over short lines is a white
    channel two or three lines deep). Returns the lines in reading order."""
    sheet = Sheet(path, size=(612.0, 792.0))
    size, step, (x0, x1) = 11.0, 13.2, (72.0, 540.0)
    space = pdfmetrics.stringWidth(" ", "DejaVu", size)
    lines = [  # page 15: justified ("|"), left-aligned ("<") or the last word at the margin (">")
        ('|BOOLEAN: VALUE must be the null terminated string "TRUE" or "FALSE" and LEN'),
        ("<!= 0."),
        ('|value="TRUE" , len=1 -> boolean=TRUE. value="FALSE" , len=1 ->'),
        ("<boolean=FALSE."),
        ('|OBJECT IDENTIFIER: VALUE must be a null terminated string with each number'),
        ('<separated by a dot (e.g. "1.2.3.543.1"). LEN != 0.'),
        ('<Using "pkix.asn":'),
        ('>result=asn1 write value(cert, "certificate1.tbsCertificate.subject.rdnSequence",'),
        ('<"NEW", 1);'),
        ("|SET OF: the same as SEQUENCE OF, and so on for each of the other types of the"),
        ("<schema."),
    ]
    y, wide = 100.0, []
    for line in lines:
        words = line[1:].split()
        widths = sum(pdfmetrics.stringWidth(w, "DejaVu", size) for w in words)
        gaps = {"|": None, "<": [space] * len(words), ">": [space] * (len(words) - 2)}[line[0]]
        if line[0] == ">":
            gaps.append(x1 - x0 - widths - sum(gaps))
        wide.append(max(spread(sheet, y, words, size, x0, x1, gaps) or [0.0]))
        y += step
    assert wide[2] > 0.9 * size and wide[7] > 2 * size  # wider than a gutter of 0.8 em
    # page 6: TeX's wider space after a sentence ends, above two short lines
    y += step
    page6 = [
        "|The notation to access the Group type of the Example definition above is",
        "|Example.Group (as a NUL-terminated string.) Such strings are used in the functions",
        "<described below.",
        "<Others examples:",
        "|field id of the Group type: Example.Group.id, and so on for the other fields.",
    ]
    for line in page6:
        words = line[1:].split()
        free = x1 - x0 - sum(pdfmetrics.stringWidth(w, "DejaVu", size) for w in words)
        gaps = [space] * len(words) if line[0] == "<" else [free / (len(words) - 1)] * (len(words) - 1)
        if "string.)" in words:
            gaps = [(free - 0.85 * size) / (len(words) - 2)] * (len(words) - 2)
            gaps.insert(words.index("string.)"), 0.85 * size)
        spread(sheet, y, words, size, x0, x1, gaps)
        y += step
    sheet.page()
    sheet.save()
    return [line[1:] for line in lines + page6]


CODE = [  # a listing whose aligned columns leave long gaps inside each line
    "struct entry {",
    "    const char     *name;      /* the element's name      */",
    "    unsigned int    type;      /* its ASN.1 type          */",
    "    const void     *value;     /* its value, or NULL      */",
    "    int             len;       /* bytes in value          */",
    "};",
]
HEXDUMP = [  # shared-mime-info's magic file, as `hexdump -C` prints it
    "00000000  4d 49 4d 45 2d 4d 61 67  69 63 00 0a 5b 35 30 3a  |MIME-Magic..[50:|",
    "00000010  74 65 78 74 2f 78 2d 64  69 66 66 5d 0a 3e 30 3d  |text/x-diff].>0=|",
    "00000020  00 05 64 69 66 66 09 0a  3e 30 3d 00 04 2a 2a 2a  |..diff..>0=..***|",
    "00000030  09 0a 3e 30 3d 00 17 43  6f 6d 6d 6f 6e 20 73 75  |..>0=..Common su|",
    "00000040  62 64 69 72 65 63 74 6f  72 69 65 73 3a 20 0a     |bdirectories: .|",
]
XML = [  # one element a line
    '<?xml version="1.0"?>',
    "<mime-info xmlns='http://www.freedesktop.org/standards/shared-mime-info'>",
    '  <mime-type type="text/x-diff">',
    "    <comment>Differences between files</comment>",
    '    <magic priority="50">',
    '      <match type="string" offset="0" value="diff\\t"/>',
    '      <match type="string" offset="0" value="***\\t"/>',
    "    </magic>",
    '    <glob pattern="*.diff"/>',
    '    <glob pattern="*.patch"/>',
    "  </mime-type>",
    "</mime-info>",
]
PROSE = [
    "The listing below declares one entry of the table that the parser fills in.",
    "The text/x-diff example above would, on its own, create this magic file:",
    "Here is an example source file, named diff.xml, with one element on each line:",
    "Every other file of the database is written from the same source files.",
]


def code_pdf(path: Path) -> str:
    """Prose around a code listing, a hexdump and an XML file, set in a fixed-pitch font
    that says nothing of it (`hide_fixed_pitch`), as the shared-mime-info
    specification's NimbusMonL did. Returns the Markdown a reader must give back."""
    sheet = Sheet(path, size=(612.0, 792.0), pageCompression=0)
    mono = hidden_mono_font()
    y = 90.0
    for prose, block in zip(PROSE, (CODE, HEXDUMP, XML, [])):
        sheet.text(72, y, prose, 10)
        y += 24
        sheet.c.setFont(mono, 9)
        for line in block:
            sheet.c.drawString(72, sheet.h - y, line)
            y += 11
        y += 14
    sheet.page()
    sheet.save()
    hide_fixed_pitch(path)
    fence = "```\n{}\n```"
    return "\n\n".join([PROSE[0], fence.format("\n".join(CODE)), PROSE[1], fence.format("\n".join(HEXDUMP)),
                        PROSE[2], fence.format("\n".join(XML)), PROSE[3]]) + "\n"


def columns_pdf(path: Path) -> list[str]:
    """A real two-column page of justified text between full-width paragraphs, with a
    line overfull by a few points into the right margin (TeX's overfull box), then a
    two-column page whose right column holds two lines. Returns the lines in reading
    order: each column top to bottom, left before right."""
    rng = random.Random(35)
    sheet = Sheet(path, size=(612.0, 792.0))
    size, step = 10.0, 12.0
    order: list[str] = []

    def line(y: float, x0: float, x1: float, last: bool = False) -> None:
        words = [rng.choice(_WORDS)]  # words up to 85% of the measure, then justified
        while pdfmetrics.stringWidth(" ".join(words), "DejaVu", size) < 0.85 * (x1 - x0):
            words.append(rng.choice(_WORDS))
        spread(sheet, y, words[:-1], size, x0, x1, [3.0] * len(words) if last else None)
        order.append(" ".join(words[:-1]))

    for counts in ((14, 14), (12, 2)):
        y = 80.0
        line(y, 72, 540)
        line(y + step, 72, 546)  # overfull: 6 points into the margin
        y += 3 * step
        for k in range(counts[0]):
            line(y + k * step, 72, 297, last=k == counts[0] - 1)
        for k in range(counts[1]):
            line(y + k * step, 315, 540, last=k == counts[1] - 1)
        y += (counts[0] + 1) * step
        line(y, 72, 540)
        sheet.page()
    sheet.save()
    return order


def flowing_columns_pdf(path: Path, paragraphs: int = 14) -> list[str]:
    """reportlab's own two-column layout: justified paragraphs flowing down the left
    frame, on into the right one and the next page. Returns the paragraphs."""
    from reportlab.lib.enums import TA_JUSTIFY
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Paragraph

    fonts()
    rng = random.Random(135)
    style = ParagraphStyle("body", fontName="DejaVu", fontSize=10, leading=12.5, alignment=TA_JUSTIFY,
                           spaceAfter=6)
    texts = []
    for _ in range(paragraphs):
        sentences = []
        for _ in range(rng.randint(2, 5)):
            words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 14))]
            sentences.append(" ".join(words).capitalize() + ".")
        texts.append(" ".join(sentences))
    width, height = A4
    frames = [Frame(56, 56, (width - 130) / 2, height - 112, id="left"),
              Frame(74 + (width - 130) / 2, 56, (width - 130) / 2, height - 112, id="right")]
    doc = BaseDocTemplate(str(path), pagesize=A4, invariant=1)
    doc.addPageTemplates([PageTemplate(id="two", frames=frames)])
    doc.build([Paragraph(t, style) for t in texts])
    return texts


def spec_title_page_pdf(path: Path) -> list[str]:
    """The shared-mime-info specification's first page: the title, the group with its
    web address, the author and a spelled-out e-mail address, all large and bold and
    centred, then numbered sections. Returns the headings a reader must find."""
    sheet = Sheet(path, size=(612.0, 792.0))
    for y, text, size in ((88, "Shared MIME-info Database", 25),
                          (122, "X Desktop Group (http://www.freedesktop.org)", 17),
                          (171, "Thomas Leonard", 17), (194, "tal197 at users.sf.net", 12)):
        sheet.text(306, y, text, size, bold=True, align="centre")
    y = _section(sheet, 250, "1. Introduction", 17, [])
    y = _section(sheet, y, "1.1. Version", 14.5, [
        "This is version 0.21 of the Shared MIME-info Database specification, last updated 2 October 2018."])
    _section(sheet, y, "1.2. What is this spec?", 14.5, [
        "Many programs and desktops use the MIME system to represent the types of files. Frequently, it is",
        "necessary to work out the correct MIME type for a file. This is generally done by examining the name."])
    sheet.page()
    _section(sheet, 80, "1.3. Language used in this specification", 14.5, [
        'The key words "MUST", "MUST NOT", "REQUIRED", "SHALL" and "SHALL NOT" in this document are to be',
        "interpreted as described in RFC 2119."])
    sheet.page()
    sheet.save()
    return ["# Shared MIME-info Database", "## 1. Introduction", "### 1.1. Version", "### 1.2. What is this spec?",
            "### 1.3. Language used in this specification"]


def manual_title_page_pdf(path: Path, email: bool = True) -> list[str]:
    """A Texinfo manual's title page (libtasn1's): the title, a subtitle in the text
    font, and the authors large and bold at the foot of the page (the last one with an
    e-mail address, or none); the copyright page; then chapters. Returns the headings."""
    sheet = Sheet(path, size=(612.0, 792.0))
    sheet.text(90, 230, "Libtasn1", 20.5, bold=True)
    sheet.text(522, 250, "Abstract Syntax Notation One (ASN.1) library for the GNU system", 11, align="right")
    sheet.text(522, 263, "for version 4.19.0, 18 August 2022", 11, align="right")
    last = "Nikos Mavrogiannopoulos" + (" (help-libtasn1@gnu.org)" if email else "")
    authors = ["Fabio Fiorina", "Simon Josefsson", last]
    for k, name in enumerate(authors):
        sheet.text(90, 645 + 17 * k, name, 14.5, bold=True)
    sheet.page()
    for k, line in enumerate(["This manual is for GNU Libtasn1 (version 4.19.0, 18 August 2022), which is a library",
                              "for Abstract Syntax Notation One (ASN.1) and Distinguished Encoding Rules (DER)",
                              "manipulation. Copyright 2001-2022 Free Software Foundation, Inc."]):
        sheet.text(90, 100 + 13 * k, line, 11)
    sheet.page()
    y = _section(sheet, 100, "1 Introduction", 17, [
        "This document describes the Libtasn1 library that provides Abstract Syntax Notation One parsing",
        "and structures management, and Distinguished Encoding Rules encoding and decoding functions."], size=11)
    _section(sheet, y, "1.1 Features", 14.5, [
        "On-line ASN.1 structure management that does not require any C code file generation, and",
        "off-line ASN.1 structure management with C code file generation containing an array."], size=11)
    sheet.page()
    sheet.save()
    return ["# Libtasn1", "## 1 Introduction", "### 1.1 Features"]


def _section(sheet: Sheet, y: float, heading: str, heading_size: float, lines: list[str], size: float = 10.0) -> float:
    """A bold heading and its paragraph; returns where the next one goes."""
    sheet.text(72, y, heading, heading_size, bold=True)
    y += heading_size + 14
    for line in lines:
        sheet.text(72, y, line, size)
        y += size * 1.3
    return y + 18
