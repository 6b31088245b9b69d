"""Faturalama modülü: fatura üretimi, numaralandırma ve defter kayıtları.

Invoice records are created when an order is paid. Every invoice gets a
sequential number per (tenant, year), e.g. ``ACME-2024-000123``.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from enum import Enum
from typing import Dict, Iterable, Iterator, List, Optional

# KDV oranı (Türkiye standart oranı).
DEFAULT_VAT_RATE = Decimal("0.20")
INVOICE_PREFIX_SEPARATOR = "-"
PAYMENT_TERM_DAYS = 30
CENT = Decimal("0.01")


class InvoiceStatus(str, Enum):
    DRAFT = "draft"
    ISSUED = "issued"
    PAID = "paid"
    VOID = "void"


class InvoiceError(Exception):
    """Fatura işlemlerinde oluşan hatalar için temel sınıf."""


@dataclass(frozen=True)
class LineItem:
    """Tek bir fatura satırı: ürün kodu, adet ve birim fiyat."""

    sku: str
    description: str
    quantity: int
    unit_price: Decimal
    vat_rate: Decimal = DEFAULT_VAT_RATE

    @property
    def net_amount(self) -> Decimal:
        return (self.unit_price * self.quantity).quantize(CENT, ROUND_HALF_UP)

    @property
    def vat_amount(self) -> Decimal:
        return (self.net_amount * self.vat_rate).quantize(CENT, ROUND_HALF_UP)


@dataclass
class Invoice:
    """Müşteriye kesilen fatura.

    Tutarlar her zaman kuruş hassasiyetinde yuvarlanır (ROUND_HALF_UP).
    """

    number: str
    tenant: str
    customer_id: str
    issued_on: date
    items: List[LineItem] = field(default_factory=list)
    status: InvoiceStatus = InvoiceStatus.DRAFT
    currency: str = "TRY"
    notes: Optional[str] = None

    @property
    def net_total(self) -> Decimal:
        return sum((item.net_amount for item in self.items), Decimal("0"))

    @property
    def vat_total(self) -> Decimal:
        return sum((item.vat_amount for item in self.items), Decimal("0"))

    @property
    def gross_total(self) -> Decimal:
        return self.net_total + self.vat_total

    @property
    def due_date(self) -> date:
        """Vade tarihi: düzenleme tarihinden itibaren 30 gün."""
        return self.issued_on + timedelta(days=PAYMENT_TERM_DAYS)

    def validate(self) -> None:
        """Faturanın kesilebilir olduğunu kontrol eder; değilse InvoiceError fırlatır."""
        if not self.items:
            raise InvoiceError(f"invoice {self.number} has no line items")
        for item in self.items:
            if item.quantity <= 0:
                raise InvoiceError(f"line {item.sku}: quantity must be positive")
            if item.unit_price < 0:
                raise InvoiceError(f"line {item.sku}: negative unit price")
        if len(self.currency) != 3:
            raise InvoiceError(f"bad currency code {self.currency!r}")

    def close(self) -> None:
        """Mark a paid invoice as closed; a void invoice cannot be closed."""
        if self.status is InvoiceStatus.VOID:
            raise InvoiceError("cannot close a void invoice")
        self.status = InvoiceStatus.PAID


class InvoiceNumberGenerator:
    """Fatura numarası üretici.

    Numara biçimi: ``<KİRACI>-<YIL>-<6 haneli sıra>``. Sıra her kiracı ve her
    yıl için ayrı tutulur ve yıl değişince 1'den yeniden başlar.
    """

    def __init__(self, width: int = 6) -> None:
        self._width = width
        self._counters: Dict[tuple, int] = {}
        self._lock = threading.Lock()

    def next_number(self, tenant: str, on: date) -> str:
        """Kiracı ve yıl için bir sonraki fatura numarasını üretir."""
        key = (tenant.upper(), on.year)
        with self._lock:
            seq = self._counters.get(key, 0) + 1
            self._counters[key] = seq
        return INVOICE_PREFIX_SEPARATOR.join(
            [tenant.upper(), str(on.year), str(seq).zfill(self._width)]
        )

    def peek(self, tenant: str, year: int) -> int:
        return self._counters.get((tenant.upper(), year), 0)

    def reset(self, tenant: str, year: int) -> None:
        with self._lock:
            self._counters.pop((tenant.upper(), year), None)


class InvoiceLedger:
    """Bir kiracının tüm faturalarını tutan defter.

    The ledger is the in-memory source of truth used by the API handlers and
    by the nightly reconciliation job. It is deliberately a large class.
    """

    def __init__(self, tenant: str, numbers: Optional[InvoiceNumberGenerator] = None) -> None:
        self.tenant = tenant
        self._numbers = numbers or InvoiceNumberGenerator()
        self._invoices: Dict[str, Invoice] = {}
        self._payments: Dict[str, List[Decimal]] = {}
        self._closed = False

    def __len__(self) -> int:
        return len(self._invoices)

    def __iter__(self) -> Iterator[Invoice]:
        return iter(self._invoices.values())

    def __contains__(self, number: object) -> bool:
        return number in self._invoices

    def create(self, customer_id: str, items: Iterable[LineItem], on: Optional[date] = None) -> Invoice:
        """Yeni bir taslak fatura oluşturur ve numara atar."""
        self._ensure_open()
        issued_on = on or date.today()
        number = self._numbers.next_number(self.tenant, issued_on)
        invoice = Invoice(number=number, tenant=self.tenant, customer_id=customer_id,
                          issued_on=issued_on, items=list(items))
        self._invoices[number] = invoice
        return invoice

    def get(self, number: str) -> Invoice:
        try:
            return self._invoices[number]
        except KeyError:
            raise InvoiceError(f"unknown invoice {number}") from None

    def issue(self, number: str) -> Invoice:
        """Taslak faturayı doğrular ve 'issued' durumuna geçirir."""
        invoice = self.get(number)
        if invoice.status is not InvoiceStatus.DRAFT:
            raise InvoiceError(f"invoice {number} is already {invoice.status.value}")
        invoice.validate()
        invoice.status = InvoiceStatus.ISSUED
        return invoice

    def void(self, number: str, reason: str) -> Invoice:
        """İptal: ödenmiş bir fatura iptal edilemez, önce iade gerekir."""
        invoice = self.get(number)
        if invoice.status is InvoiceStatus.PAID:
            raise InvoiceError("paid invoices must be refunded, not voided")
        invoice.status = InvoiceStatus.VOID
        invoice.notes = f"void: {reason}"
        return invoice

    def record_payment(self, number: str, amount: Decimal) -> Decimal:
        """Records a (possibly partial) payment and returns the remaining balance."""
        invoice = self.get(number)
        if invoice.status not in (InvoiceStatus.ISSUED, InvoiceStatus.PAID):
            raise InvoiceError(f"cannot pay invoice in state {invoice.status.value}")
        self._payments.setdefault(number, []).append(amount.quantize(CENT))
        remaining = self.balance(number)
        if remaining <= 0:
            invoice.close()
        return remaining

    def balance(self, number: str) -> Decimal:
        invoice = self.get(number)
        paid = sum(self._payments.get(number, []), Decimal("0"))
        return invoice.gross_total - paid

    def outstanding(self) -> List[Invoice]:
        return [inv for inv in self._invoices.values()
                if inv.status is InvoiceStatus.ISSUED and self.balance(inv.number) > 0]

    def overdue(self, today: Optional[date] = None) -> List[Invoice]:
        """Vadesi geçmiş ve hâlâ ödenmemiş faturalar."""
        today = today or date.today()
        return [inv for inv in self.outstanding() if inv.due_date < today]

    def totals_by_customer(self) -> Dict[str, Decimal]:
        totals: Dict[str, Decimal] = {}
        for inv in self._invoices.values():
            if inv.status is InvoiceStatus.VOID:
                continue
            totals[inv.customer_id] = totals.get(inv.customer_id, Decimal("0")) + inv.gross_total
        return totals

    def fingerprint(self) -> str:
        """Defterin içeriğinden kararlı bir SHA-256 özeti üretir (mutabakat için)."""
        digest = hashlib.sha256()
        for number in sorted(self._invoices):
            inv = self._invoices[number]
            digest.update(f"{number}|{inv.status.value}|{inv.gross_total}".encode())
        return digest.hexdigest()

    def export_rows(self) -> List[dict]:
        return [
            {
                "number": inv.number,
                "customer": inv.customer_id,
                "issued_on": inv.issued_on.isoformat(),
                "status": inv.status.value,
                "net": str(inv.net_total),
                "vat": str(inv.vat_total),
                "gross": str(inv.gross_total),
            }
            for inv in self._invoices.values()
        ]

    def validate(self) -> None:
        """Defterdeki tüm kesilmiş faturaları yeniden doğrular."""
        for inv in self._invoices.values():
            if inv.status is not InvoiceStatus.DRAFT:
                inv.validate()

    def close(self) -> None:
        """Closes the ledger for the period; further invoices are refused."""
        self._closed = True

    def _ensure_open(self) -> None:
        if self._closed:
            raise InvoiceError(f"ledger for {self.tenant} is closed")


def apply_discount(items: Iterable[LineItem], percent: Decimal) -> List[LineItem]:
    """İndirim uygular: her satırın birim fiyatı yüzde olarak düşürülür."""
    if not Decimal("0") <= percent <= Decimal("100"):
        raise InvoiceError("discount percent must be between 0 and 100")
    factor = (Decimal("100") - percent) / Decimal("100")
    return [
        LineItem(item.sku, item.description, item.quantity,
                 (item.unit_price * factor).quantize(CENT, ROUND_HALF_UP), item.vat_rate)
        for item in items
    ]


def format_amount(amount: Decimal, currency: str = "TRY") -> str:
    """Tutarı Türkçe biçimde yazar: 1.234,56 TL."""
    quantized = amount.quantize(CENT, ROUND_HALF_UP)
    whole, _, frac = f"{quantized:,.2f}".partition(".")
    whole = whole.replace(",", ".")
    suffix = "TL" if currency == "TRY" else currency
    return f"{whole},{frac} {suffix}"


def parse_invoice_number(number: str) -> tuple:
    """Splits ``ACME-2024-000123`` into ("ACME", 2024, 123)."""
    parts = number.split(INVOICE_PREFIX_SEPARATOR)
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        raise InvoiceError(f"malformed invoice number {number!r}")
    return parts[0], int(parts[1]), int(parts[2])


def issued_at_timestamp(invoice: Invoice) -> datetime:
    return datetime(invoice.issued_on.year, invoice.issued_on.month, invoice.issued_on.day)
