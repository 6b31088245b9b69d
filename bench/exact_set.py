"""`exact`: lookups — codes, identifiers, symbols, numbers, versions, file names and quoted
phrases — typed the way people type them into a search box, over the bundled corpora
(Turkish policies, English SaaS docs, the code sample) and one real repository,
pycodestyle (PyPI sdist: `pycodestyle.py` with its error codes, its tests and README),
downloaded at bench time (hash pinned), never committed.

Each question is tagged with its kind (`code`, `symbol`, `number`, `version`, `file`,
`phrase`) and its source (`tr`, `en`, `code`, `repo`). The target is the definition
(`symbol`), the line that holds the thing looked up (`answer`), or, for a file name, the
file (any chunk of it). The questions were written before measuring, and not changed
after.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from bench.common import (
    CORPUS,
    DOWNLOADS,
    SetError,
    sha256_file,
    verify_set,
    write_jsonl,
    write_text,
)

PYCODESTYLE = "2.15.0"
PYCODESTYLE_SDIST = f"pycodestyle-{PYCODESTYLE}.tar.gz"
PYCODESTYLE_SHA256 = "318f5db083869b4c4dad922d0b11124fb27ab181b6730b93371da671e31bd50e"
VERSION = f"exact-1-pycodestyle{PYCODESTYLE}"
DESCRIPTION = f"lookups over the bundled corpora and pycodestyle {PYCODESTYLE}"

R = "pycodestyle/pycodestyle.py"
TESTS = "pycodestyle/tests/"
EN, TR, CODE = "bundled/en/", "bundled/tr/", "bundled/code/"

# (question, doc_id, target kind, target, kind, source): target kind `symbol`, `answer` or `doc`
QUESTIONS = [
    ("E711", R, "symbol", "comparison_to_singleton", "code", "repo"),
    ("W605", R, "symbol", "python_3000_invalid_escape_sequence", "code", "repo"),
    ("E741 ambiguous variable name", R, "symbol", "ambiguous_identifier", "code", "repo"),
    ("W291", R, "symbol", "trailing_whitespace", "code", "repo"),
    ("what does E722 mean", R, "symbol", "bare_except", "code", "repo"),
    ("E501 line too long", R, "symbol", "maximum_line_length", "code", "repo"),
    ("W191 tabs", R, "symbol", "tabs_obsolete", "code", "repo"),
    ("E731 lambda", R, "symbol", "compound_statements", "code", "repo"),
    ("W391", R, "symbol", "trailing_blank_lines", "code", "repo"),
    ("E402", R, "symbol", "module_imports_on_top_of_file", "code", "repo"),
    ("E128 continuation line", R, "symbol", "continued_indentation", "code", "repo"),
    ("maximum_line_length", R, "symbol", "maximum_line_length", "symbol", "repo"),
    ("StyleGuide", R, "symbol", "StyleGuide", "symbol", "repo"),
    ("Checker.check_all", R, "symbol", "Checker.check_all", "symbol", "repo"),
    ("init_report", R, "symbol", "StyleGuide.init_report", "symbol", "repo"),
    ("check_files", R, "symbol", "StyleGuide.check_files", "symbol", "repo"),
    ("def register_check", R, "symbol", "register_check", "symbol", "repo"),
    ("BaseReport.get_statistics", R, "symbol", "BaseReport.get_statistics", "symbol", "repo"),
    ("normalize_paths", R, "symbol", "normalize_paths", "symbol", "repo"),
    ("expand_indent()", R, "symbol", "expand_indent", "symbol", "repo"),
    ("DEFAULT_IGNORE", R, "answer", "DEFAULT_IGNORE = 'E121,E123,E126,E226,E24,E704,W503,W504'", "symbol", "repo"),
    ("MAX_DOC_LENGTH", R, "answer", "MAX_DOC_LENGTH = 72", "symbol", "repo"),
    ("pycodestyle 2.15.0", R, "answer", "__version__ = '2.15.0'", "version", "repo"),
    ("test_E101.py", TESTS + "test_E101.py", "doc", "", "file", "repo"),
    ("test_shell.py", TESTS + "test_shell.py", "doc", "", "file", "repo"),
    ("test_styleguide_init_report", TESTS + "test_api.py", "symbol", "APITestCase.test_styleguide_init_report",
     "symbol", "repo"),
    ("ws_4821", EN + "cli-agent-getting-started.md", "doc", "", "code", "en"),
    ("dev_8f3k2 trips", EN + "api-rate-limits-and-errors.md", "answer",
     'curl -H "Authorization: Bearer $RELAYMARK_API_KEY"', "code", "en"),
    ("trp_0192", EN + "api-rate-limits-and-errors.md", "answer", '"id": "trp_0192"', "code", "en"),
    ("SEV2", EN + "incident-response-and-sla.md", "answer", "| SEV2 | Major feature degraded", "code", "en"),
    ("HTTP 409", EN + "api-rate-limits-and-errors.md", "answer", "| 409 | Conflicting update", "number", "en"),
    ("429 Retry-After", EN + "api-rate-limits-and-errors.md", "answer", "| 429 | Quota exceeded", "number", "en"),
    ('"x509: certificate signed by unknown authority"', EN + "cli-agent-getting-started.md", "answer",
     "x509: certificate signed by unknown authority", "phrase", "en"),
    ("X-RateLimit-Reset", EN + "api-rate-limits-and-errors.md", "answer", "`X-RateLimit-Reset` is the Unix timestamp",
     "code", "en"),
    ("Idempotency-Key", EN + "api-rate-limits-and-errors.md", "answer", "`Idempotency-Key` header", "code", "en"),
    ("$0.40", EN + "billing-and-plans.md", "answer", "$0.40 per additional million data points", "number", "en"),
    ("/etc/relay/agent.yaml", EN + "cli-agent-getting-started.md", "answer", "`/etc/relay/agent.yaml`", "file", "en"),
    ("AES-256 backups", EN + "data-retention-and-deletion.md", "answer", "encrypted with AES-256", "code", "en"),
    ("buffer.max_size_mb", EN + "cli-agent-getting-started.md", "answer", "lower `buffer.max_size_mb`", "code", "en"),
    ("support@relaymark.io", EN + "incident-response-and-sla.md", "answer", "email support@relaymark.io", "phrase", "en"),
    ("CRS-2026-0001842", TR + "satici-webhook-api.md", "answer", '"order_id": "CRS-2026-0001842"', "code", "tr"),
    ("evt_01JH8Z6Q4N2M", TR + "satici-webhook-api.md", "answer", '"id": "evt_01JH8Z6Q4N2M"', "code", "tr"),
    ("X-Carsim-Signature imza doğrulama", TR + "satici-webhook-api.md", "answer",
     "Her isteğin `X-Carsim-Signature` başlığında", "code", "tr"),
    ("order.created olayı ne zaman gelir", TR + "satici-webhook-api.md", "answer",
     "`order.created`: yeni sipariş oluşturuldu", "code", "tr"),
    ("kvkk@carsim.com.tr", TR + "kisisel-verilerin-korunmasi.md", "answer", "kvkk@carsim.com.tr", "phrase", "tr"),
    ("149,90 TL", TR + "kargo-ve-teslimat.md", "answer", "149,90 TL sabit kargo ücreti", "number", "tr"),
    ("KKTC 5-7 iş günü", TR + "kargo-ve-teslimat.md", "answer", "| KKTC | 5-7 iş günü | Yok |", "number", "tr"),
    ("39,90 TL", TR + "kargo-ve-teslimat.md", "answer", "standart kargo ücreti 39,90 TL", "number", "tr"),
    ("20.000 TL hediye kartı", TR + "hediye-kartlari.md", "answer", "en fazla 20.000 TL tutarında", "number", "tr"),
    ('"3D Secure"', TR + "odeme-ve-taksit.md", "answer", "3D Secure ile doğrulanır", "phrase", "tr"),
    ("001_orders.sql", CODE + "migrations/001_orders.sql", "doc", "", "file", "code"),
    ("limiter.go", CODE + "internal/ratelimit/limiter.go", "doc", "", "file", "code"),
    ("cart.js", CODE + "web/static/cart.js", "doc", "", "file", "code"),
    ("IdempotencyCache", CODE + "api/handlers.py", "symbol", "IdempotencyCache", "symbol", "code"),
    ("InvoiceLedger.void", CODE + "billing/invoices.py", "symbol", "InvoiceLedger.void", "symbol", "code"),
    ("backoff_delay", CODE + "jobs/scheduler.py", "symbol", "backoff_delay", "symbol", "code"),
]


def _fetch_pycodestyle() -> Path:
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    sdist = DOWNLOADS / PYCODESTYLE_SDIST
    if not sdist.is_file():
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"pycodestyle=={PYCODESTYLE}", "--no-deps", "--no-binary",
             ":all:", "-d", str(DOWNLOADS), "-q"], capture_output=True, text=True)
        if proc.returncode != 0 or not sdist.is_file():
            raise SetError(f"pip download pycodestyle=={PYCODESTYLE} failed: {proc.stderr[-1500:]}")
    if sha256_file(sdist) != PYCODESTYLE_SHA256:
        raise SetError(f"{sdist}: sha256 differs from the pinned one")
    return sdist


def build(out: Path) -> dict:
    sdist = _fetch_pycodestyle()
    corpus = out / "corpus"
    for folder, pattern, target in ((CORPUS, "*.md", TR), (CORPUS / "en", "*.md", EN), (CORPUS / "code", "**/*", CODE)):
        for path in sorted(folder.glob(pattern)):
            if path.is_file() and path.name not in ("questions.jsonl", ".indexerignore"):
                dest = corpus / target / path.relative_to(folder)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
    root = f"pycodestyle-{PYCODESTYLE}/"
    with tarfile.open(sdist) as tf:
        for member in tf.getmembers():
            name = member.name[len(root):]
            if member.isfile() and (name in ("pycodestyle.py", "README.rst") or
                                    (name.startswith("tests/") and name.endswith(".py"))):
                write_text(corpus / "pycodestyle" / name, tf.extractfile(member).read().decode("utf-8"))
        write_text(out / "LICENSE-pycodestyle.txt", tf.extractfile(root + "LICENSE").read().decode("utf-8"))
    rows = []
    for i, (question, doc_id, target_kind, target, kind, source) in enumerate(QUESTIONS, start=1):
        row = {"id": f"x{i:02d}", "question": question, "doc_id": doc_id, "tags": [kind, source]}
        if target_kind != "doc":
            row[target_kind] = target
        rows.append(row)
    write_jsonl(out / "questions.jsonl", rows)
    write_text(out / "NOTICE.md", (
        "# exact\n\n- `corpus/bundled/`: this project's bundled corpora (corpus/, corpus/en, corpus/code), MIT.\n"
        f"- `corpus/pycodestyle/`: pycodestyle {PYCODESTYLE} (PyPI sdist {PYCODESTYLE_SDIST}, sha256 "
        f"{PYCODESTYLE_SHA256}), Expat licence (LICENSE-pycodestyle.txt): pycodestyle.py, README.rst, tests/.\n\n"
        "Questions: written for this set (bench/exact_set.py). Not for redistribution from this repository.\n"))
    verify_set(out)
    return {"questions": len(rows), "kinds": {k: sum(1 for q in QUESTIONS if q[4] == k) for k in
                                              sorted({q[4] for q in QUESTIONS})}}
