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
