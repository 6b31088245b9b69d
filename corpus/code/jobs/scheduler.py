"""Zamanlanmış işler (cron benzeri) ve yeniden deneme politikası.

The scheduler keeps a table of periodic jobs, decides which are due, runs them
in a worker pool and records their outcome. Failed jobs are retried with an
exponential backoff plus jitter.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable, Dict, List, Optional

from billing.invoices import InvoiceLedger, format_amount

log = logging.getLogger("jobs.scheduler")

MAX_ATTEMPTS = 5
BASE_DELAY_SECONDS = 2.0
MAX_DELAY_SECONDS = 300.0

JobFn = Callable[["JobContext"], None]

_REGISTRY: Dict[str, "JobSpec"] = {}


@dataclass
class JobSpec:
    """Bir periyodik işin tanımı: adı, aralığı ve çalıştırılacak fonksiyon."""

    name: str
    interval: timedelta
    fn: JobFn
    max_attempts: int = MAX_ATTEMPTS
    enabled: bool = True


@dataclass
class JobContext:
    name: str
    attempt: int
    scheduled_for: datetime
    params: Dict[str, str] = field(default_factory=dict)


@dataclass
class JobRun:
    """Bir işin tek bir çalıştırılmasının kaydı."""

    name: str
    started_at: datetime
    finished_at: Optional[datetime] = None
    attempts: int = 0
    error: Optional[str] = None

    @property
    def succeeded(self) -> bool:
        return self.finished_at is not None and self.error is None


def periodic(name: str, every: timedelta, max_attempts: int = MAX_ATTEMPTS):
    """Dekoratör: fonksiyonu periyodik iş olarak kayıt defterine ekler.

    Kullanım::

        @periodic("fatura-hatirlatma", every=timedelta(hours=1))
        def remind(ctx): ...
    """

    def decorator(fn: JobFn) -> JobFn:
        if name in _REGISTRY:
            raise ValueError(f"job {name!r} registered twice")
        _REGISTRY[name] = JobSpec(name=name, interval=every, fn=fn, max_attempts=max_attempts)
        return fn

    return decorator


def timed(fn):
    """Decorator that logs how long a job function took."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            log.info("%s took %.3fs", fn.__name__, time.monotonic() - start)

    return wrapper


def backoff_delay(attempt: int, base: float = BASE_DELAY_SECONDS, cap: float = MAX_DELAY_SECONDS) -> float:
    """Üstel geri çekilme: base * 2^(attempt-1), üst sınırla kırpılır, 'full jitter' eklenir."""
    exp = min(cap, base * (2 ** max(0, attempt - 1)))
    return random.uniform(0, exp)


class Scheduler:
    """Periyodik işleri zamanı gelince çalıştıran zamanlayıcı."""

    def __init__(self, workers: int = 4, clock: Callable[[], datetime] = datetime.utcnow) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="job")
        self._clock = clock
        self._next_due: Dict[str, datetime] = {}
        self._history: List[JobRun] = []
        self._running: Dict[str, Future] = {}
        self._stopped = False

    def validate(self) -> None:
        """Kayıtlı işlerin aralıklarının ve deneme sayılarının geçerli olduğunu denetler."""
        for spec in _REGISTRY.values():
            if spec.interval <= timedelta(0):
                raise ValueError(f"job {spec.name}: interval must be positive")
            if spec.max_attempts < 1:
                raise ValueError(f"job {spec.name}: max_attempts must be >= 1")

    def due_jobs(self, now: datetime) -> List[JobSpec]:
        """Zamanı gelmiş, etkin ve şu anda çalışmayan işleri döndürür."""
        due = []
        for spec in _REGISTRY.values():
            if not spec.enabled or spec.name in self._running:
                continue
            if self._next_due.get(spec.name, now) <= now:
                due.append(spec)
        return due

    def handle(self, spec: JobSpec, now: datetime) -> JobRun:
        """Runs one job with retries; each failure waits backoff_delay(attempt) seconds."""
        run = JobRun(name=spec.name, started_at=now)
        for attempt in range(1, spec.max_attempts + 1):
            run.attempts = attempt
            ctx = JobContext(name=spec.name, attempt=attempt, scheduled_for=now)
            try:
                spec.fn(ctx)
                run.error = None
                break
            except Exception as exc:  # noqa: BLE001 - işin hatası kaydedilir
                run.error = f"{type(exc).__name__}: {exc}"
                log.warning("job %s attempt %d failed: %s", spec.name, attempt, exc)
                if attempt < spec.max_attempts:
                    time.sleep(backoff_delay(attempt))
        run.finished_at = self._clock()
        self._history.append(run)
        return run

    def tick(self) -> int:
        """Submits every due job to the pool; returns how many were started."""
        now = self._clock()
        started = 0
        for spec in self.due_jobs(now):
            self._next_due[spec.name] = now + spec.interval
            future = self._pool.submit(self.handle, spec, now)
            self._running[spec.name] = future
            future.add_done_callback(lambda _f, n=spec.name: self._running.pop(n, None))
            started += 1
        return started

    def run(self, poll_seconds: float = 1.0) -> None:
        """Ana döngü: close() çağrılana kadar her saniye tick() çalıştırır."""
        self.validate()
        while not self._stopped:
            self.tick()
            time.sleep(poll_seconds)

    def close(self, wait: bool = True) -> None:
        """Stops the loop and shuts the worker pool down."""
        self._stopped = True
        self._pool.shutdown(wait=wait)

    def history(self, name: Optional[str] = None) -> List[JobRun]:
        return [r for r in self._history if name is None or r.name == name]


@timed
def build_nightly_report(ledgers: List[InvoiceLedger], runs: List[JobRun], today: datetime) -> str:
    """Gece raporu: her kiracı için fatura özetleri ve işlerin başarı durumu.

    This function is intentionally long: it renders a plain-text report that
    operations reads every morning, section by section.
    """
    lines: List[str] = []
    lines.append("=" * 72)
    lines.append(f"NIGHTLY REPORT  {today:%Y-%m-%d %H:%M} UTC")
    lines.append("=" * 72)
    lines.append("")

    # 1. Faturalar: kiracı başına toplamlar
    lines.append("1. INVOICES PER TENANT")
    lines.append("-" * 72)
    grand_total = None
    overdue_count = 0
    for ledger in sorted(ledgers, key=lambda l: l.tenant):
        outstanding = ledger.outstanding()
        overdue = ledger.overdue(today.date())
        overdue_count += len(overdue)
        totals = ledger.totals_by_customer()
        tenant_total = sum(totals.values()) if totals else 0
        grand_total = tenant_total if grand_total is None else grand_total + tenant_total
        lines.append(f"  tenant {ledger.tenant:<12} invoices={len(ledger):>5} "
                     f"outstanding={len(outstanding):>4} overdue={len(overdue):>4}")
        lines.append(f"    billed total: {format_amount(tenant_total) if totals else '0,00 TL'}")
        top = sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:3]
        for customer, amount in top:
            lines.append(f"    top customer {customer:<20} {format_amount(amount)}")
        if overdue:
            oldest = min(overdue, key=lambda inv: inv.due_date)
            days = (today.date() - oldest.due_date).days
            lines.append(f"    oldest overdue: {oldest.number} ({days} days late)")
        lines.append(f"    ledger fingerprint: {ledger.fingerprint()[:16]}")
    lines.append("")
    if grand_total is not None:
        lines.append(f"  GRAND TOTAL: {format_amount(grand_total)}")
    lines.append(f"  OVERDUE INVOICES: {overdue_count}")
    lines.append("")

    # 2. İşler: başarı oranı ve hatalar
    lines.append("2. JOB RUNS (last 24h)")
    lines.append("-" * 72)
    window_start = today - timedelta(hours=24)
    recent = [r for r in runs if r.started_at >= window_start]
    by_name: Dict[str, List[JobRun]] = {}
    for run in recent:
        by_name.setdefault(run.name, []).append(run)
    if not by_name:
        lines.append("  no job runs recorded")
    for name in sorted(by_name):
        job_runs = by_name[name]
        ok = sum(1 for r in job_runs if r.succeeded)
        retried = sum(1 for r in job_runs if r.attempts > 1)
        durations = [
            (r.finished_at - r.started_at).total_seconds()
            for r in job_runs if r.finished_at is not None
        ]
        avg = sum(durations) / len(durations) if durations else 0.0
        worst = max(durations) if durations else 0.0
        rate = 100.0 * ok / len(job_runs)
        flag = "" if rate >= 99.0 else "  <-- ATTENTION"
        lines.append(f"  {name:<28} runs={len(job_runs):>4} ok={rate:5.1f}% "
                     f"retried={retried:>3} avg={avg:6.2f}s max={worst:6.2f}s{flag}")
        failures = [r for r in job_runs if not r.succeeded]
        for failed in failures[-3:]:
            lines.append(f"      {failed.started_at:%H:%M:%S} attempts={failed.attempts} "
                         f"error={failed.error}")
    lines.append("")

    # 3. Özet
    lines.append("3. SUMMARY")
    lines.append("-" * 72)
    total_runs = len(recent)
    failed_runs = sum(1 for r in recent if not r.succeeded)
    lines.append(f"  tenants: {len(ledgers)}  job runs: {total_runs}  failed: {failed_runs}")
    if failed_runs == 0 and overdue_count == 0:
        lines.append("  Her şey yolunda. All green.")
    else:
        lines.append("  Action needed: check failed jobs and overdue invoices above.")
    lines.append("=" * 72)
    return "\n".join(lines)


@periodic("invoice-reminders", every=timedelta(hours=6))
def send_invoice_reminders(ctx: JobContext) -> None:
    """Vadesi geçen faturalar için müşterilere hatırlatma e-postası gönderir."""
    log.info("reminders run #%d for %s", ctx.attempt, ctx.scheduled_for)


@periodic("ledger-reconcile", every=timedelta(days=1), max_attempts=3)
def reconcile_ledgers(ctx: JobContext) -> None:
    """Compares ledger fingerprints with the accounting export and logs drift."""
    log.info("reconcile attempt %d", ctx.attempt)
