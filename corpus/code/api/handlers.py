"""HTTP API işleyicileri: sipariş oluşturma, iade ve sağlık kontrolü.

Each handler is a small class with the same shape: ``validate`` checks the
request body, ``handle`` does the work and returns a ``Response``, ``close``
releases resources. The router dispatches by method and path.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Dict, List, Optional, Tuple

from billing.invoices import InvoiceError, InvoiceLedger, LineItem, apply_discount

Headers = Dict[str, str]
MAX_ITEMS_PER_ORDER = 50
IDEMPOTENCY_HEADER = "Idempotency-Key"


@dataclass
class Request:
    method: str
    path: str
    headers: Headers = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Dict[str, Any]:
        try:
            return json.loads(self.body or b"{}")
        except json.JSONDecodeError as exc:
            raise ValidationError(f"invalid JSON body: {exc.msg}") from None


@dataclass
class Response:
    status: int
    payload: Dict[str, Any]
    headers: Headers = field(default_factory=dict)

    def encode(self) -> bytes:
        return json.dumps(self.payload, ensure_ascii=False, default=str).encode("utf-8")


class ValidationError(Exception):
    """İstek gövdesi geçersiz olduğunda fırlatılır; 422 yanıtına dönüşür."""


def require_auth(handler_method: Callable) -> Callable:
    """Dekoratör: Authorization başlığı yoksa 401 döndürür."""

    def wrapper(self, request: Request) -> Response:
        token = request.headers.get("Authorization", "")
        if not token.startswith("Bearer "):
            return Response(401, {"error": "missing bearer token"})
        return handler_method(self, request)

    wrapper.__name__ = handler_method.__name__
    wrapper.__doc__ = handler_method.__doc__
    return wrapper


def error_response(exc: Exception) -> Response:
    """Maps domain exceptions to HTTP status codes."""
    if isinstance(exc, ValidationError):
        return Response(422, {"error": str(exc)})
    if isinstance(exc, InvoiceError):
        return Response(409, {"error": str(exc)})
    return Response(500, {"error": "internal error", "detail": type(exc).__name__})


def parse_money(raw: Any, field_name: str) -> Decimal:
    """Parses a decimal amount; accepts Turkish comma decimals like ``"12,50"``."""
    if isinstance(raw, (int, float)):
        raw = str(raw)
    if not isinstance(raw, str):
        raise ValidationError(f"{field_name}: expected a number")
    try:
        return Decimal(raw.replace(",", "."))
    except InvalidOperation:
        raise ValidationError(f"{field_name}: {raw!r} is not a valid amount") from None


class IdempotencyCache:
    """Aynı Idempotency-Key ile gelen tekrar istekleri için önceki yanıtı saklar."""

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._entries: Dict[str, Response] = {}
        self._order: List[str] = []

    def get(self, key: str) -> Optional[Response]:
        return self._entries.get(key)

    def put(self, key: str, response: Response) -> None:
        if key not in self._entries:
            self._order.append(key)
        self._entries[key] = response
        while len(self._order) > self._capacity:
            oldest = self._order.pop(0)
            self._entries.pop(oldest, None)

    def close(self) -> None:
        self._entries.clear()
        self._order.clear()


class CreateOrderHandler:
    """POST /orders — sipariş oluşturur ve taslak fatura keser."""

    def __init__(self, ledger: InvoiceLedger, cache: IdempotencyCache) -> None:
        self.ledger = ledger
        self.cache = cache

    def validate(self, body: Dict[str, Any]) -> Tuple[str, List[LineItem], Decimal]:
        """Sipariş gövdesini denetler: müşteri, en az bir satır, en fazla 50 satır."""
        customer = body.get("customer_id")
        if not isinstance(customer, str) or not customer:
            raise ValidationError("customer_id is required")
        raw_items = body.get("items") or []
        if not raw_items:
            raise ValidationError("an order needs at least one item")
        if len(raw_items) > MAX_ITEMS_PER_ORDER:
            raise ValidationError(f"at most {MAX_ITEMS_PER_ORDER} items per order")
        items = []
        for index, raw in enumerate(raw_items):
            qty = raw.get("quantity")
            if not isinstance(qty, int) or qty <= 0:
                raise ValidationError(f"items[{index}].quantity must be a positive integer")
            items.append(LineItem(
                sku=str(raw.get("sku", "")),
                description=str(raw.get("description", "")),
                quantity=qty,
                unit_price=parse_money(raw.get("unit_price"), f"items[{index}].unit_price"),
            ))
        discount = parse_money(body.get("discount_percent", "0"), "discount_percent")
        return customer, items, discount

    @require_auth
    def handle(self, request: Request) -> Response:
        """Creates the order; a repeated Idempotency-Key returns the first response."""
        key = request.headers.get(IDEMPOTENCY_HEADER)
        if key:
            cached = self.cache.get(key)
            if cached is not None:
                return cached
        try:
            customer, items, discount = self.validate(request.json())
            if discount:
                items = apply_discount(items, discount)
            invoice = self.ledger.create(customer, items)
            response = Response(201, {
                "order_id": str(uuid.uuid4()),
                "invoice": invoice.number,
                "total": str(invoice.gross_total),
            })
        except Exception as exc:  # noqa: BLE001
            response = error_response(exc)
        if key and response.status < 500:
            self.cache.put(key, response)
        return response

    def close(self) -> None:
        self.cache.close()


class RefundHandler:
    """POST /orders/{id}/refund — ödenmiş bir fatura için iade kaydı."""

    def __init__(self, ledger: InvoiceLedger) -> None:
        self.ledger = ledger
        self.refunds: List[Dict[str, Any]] = []

    def validate(self, body: Dict[str, Any]) -> Tuple[str, Decimal, str]:
        """İade tutarı pozitif olmalı ve bir gerekçe verilmeli."""
        number = body.get("invoice")
        if not isinstance(number, str):
            raise ValidationError("invoice is required")
        amount = parse_money(body.get("amount"), "amount")
        if amount <= 0:
            raise ValidationError("refund amount must be positive")
        reason = str(body.get("reason", "")).strip()
        if not reason:
            raise ValidationError("a refund needs a reason")
        return number, amount, reason

    @require_auth
    def handle(self, req: Request) -> Response:
        """İadeyi kaydeder; iade tutarı fatura toplamını aşamaz."""
        try:
            number, amount, reason = self.validate(req.json())
            invoice = self.ledger.get(number)
            already = sum((Decimal(r["amount"]) for r in self.refunds if r["invoice"] == number),
                          Decimal("0"))
            if already + amount > invoice.gross_total:
                raise ValidationError("refund exceeds invoice total")
            record = {"invoice": number, "amount": str(amount), "reason": reason}
            self.refunds.append(record)
            return Response(200, {"refund": record, "refunded_total": str(already + amount)})
        except Exception as exc:  # noqa: BLE001
            return error_response(exc)

    def close(self) -> None:
        self.refunds.clear()


class HealthHandler:
    """GET /healthz — liveness probe used by the load balancer."""

    def __init__(self, checks: Optional[Dict[str, Callable[[], bool]]] = None) -> None:
        self.checks = checks or {}

    def handle(self, _request: Request) -> Response:
        results = {name: bool(check()) for name, check in self.checks.items()}
        status = 200 if all(results.values()) else 503
        return Response(status, {"status": "ok" if status == 200 else "degraded", "checks": results})

    def close(self) -> None:
        self.checks = {}


def route(handlers: Dict[Tuple[str, str], Any], request: Request) -> Response:
    """Dispatches by (method, path prefix); unknown routes get 404."""
    for (method, prefix), handler in handlers.items():
        if request.method == method and request.path.startswith(prefix):
            return handler.handle(request)
    return Response(404, {"error": f"no route for {request.method} {request.path}"})


def snapshot(response: Response) -> Dict[str, Any]:
    return asdict(response)
