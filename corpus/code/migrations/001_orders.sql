-- 001_orders.sql: sipariş, fatura ve iş kuyruğu tabloları.
-- Orders, invoices, refunds and the durable job table used when Redis is down.

BEGIN;

CREATE TABLE tenants (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE customers (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id),
    email       TEXT NOT NULL,
    tax_number  TEXT,                    -- vergi kimlik numarası (VKN) veya TCKN
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, email)
);

CREATE TABLE orders (
    id              UUID PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants(id),
    customer_id     TEXT NOT NULL REFERENCES customers(id),
    idempotency_key TEXT,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'paid', 'cancelled', 'refunded')),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, idempotency_key)
);

CREATE TABLE order_items (
    order_id        UUID NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
    line_no         INTEGER NOT NULL,
    sku             TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    quantity        INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 99),
    unit_price      NUMERIC(12, 2) NOT NULL CHECK (unit_price >= 0),
    vat_rate        NUMERIC(4, 2) NOT NULL DEFAULT 0.20,
    PRIMARY KEY (order_id, line_no)
);

-- Fatura numaraları kiracı ve yıl başına ardışık: ACME-2024-000123.
CREATE TABLE invoice_counters (
    tenant_id   TEXT NOT NULL REFERENCES tenants(id),
    year        INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, year)
);

CREATE TABLE invoices (
    number      TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id),
    order_id    UUID NOT NULL REFERENCES orders(id),
    issued_on   DATE NOT NULL,
    due_on      DATE NOT NULL,
    status      TEXT NOT NULL DEFAULT 'draft'
                CHECK (status IN ('draft', 'issued', 'paid', 'void')),
    net_total   NUMERIC(12, 2) NOT NULL,
    vat_total   NUMERIC(12, 2) NOT NULL,
    gross_total NUMERIC(12, 2) GENERATED ALWAYS AS (net_total + vat_total) STORED,
    notes       TEXT
);

CREATE INDEX invoices_overdue_idx ON invoices (tenant_id, due_on) WHERE status = 'issued';

CREATE TABLE refunds (
    id          BIGSERIAL PRIMARY KEY,
    invoice     TEXT NOT NULL REFERENCES invoices(number),
    amount      NUMERIC(12, 2) NOT NULL CHECK (amount > 0),
    reason      TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Durable fallback for the Redis queue; the worker polls with SKIP LOCKED.
CREATE TABLE jobs (
    id            TEXT PRIMARY KEY,
    queue         TEXT NOT NULL DEFAULT 'jobs:default',
    type          TEXT NOT NULL,
    payload       JSONB NOT NULL DEFAULT '{}'::jsonb,
    attempts      INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL DEFAULT 5,
    run_after     TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_error    TEXT,
    dead          BOOLEAN NOT NULL DEFAULT false
);

CREATE INDEX jobs_ready_idx ON jobs (queue, run_after) WHERE NOT dead;

-- Bir sonraki fatura numarasını atomik olarak ayırır.
CREATE OR REPLACE FUNCTION next_invoice_seq(p_tenant TEXT, p_year INTEGER)
RETURNS INTEGER AS $$
DECLARE
    v_seq INTEGER;
BEGIN
    INSERT INTO invoice_counters (tenant_id, year, last_seq)
    VALUES (p_tenant, p_year, 1)
    ON CONFLICT (tenant_id, year)
    DO UPDATE SET last_seq = invoice_counters.last_seq + 1
    RETURNING last_seq INTO v_seq;
    RETURN v_seq;
END;
$$ LANGUAGE plpgsql;

-- Claims the next ready job for a worker; failed jobs come back after run_after.
CREATE OR REPLACE FUNCTION claim_job(p_queue TEXT)
RETURNS SETOF jobs AS $$
    UPDATE jobs
       SET attempts = attempts + 1
     WHERE id = (
            SELECT id FROM jobs
             WHERE queue = p_queue AND NOT dead AND run_after <= now()
             ORDER BY run_after
             LIMIT 1
             FOR UPDATE SKIP LOCKED)
    RETURNING *;
$$ LANGUAGE sql;

COMMIT;
