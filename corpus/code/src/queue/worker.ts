// Job queue worker: pulls jobs from a Redis list, runs the registered handler,
// retries failures with exponential backoff and moves dead jobs aside.
import { createClient } from "redis";
import pino from "pino";
import { EventEmitter } from "events";

export type JobId = string;
export type JobStatus = "queued" | "running" | "done" | "failed" | "dead";
export type Handler<T = unknown> = (payload: T, job: Job<T>) => Promise<void>;
type RedisClient = ReturnType<typeof createClient>;

export const DEFAULT_QUEUE = "jobs:default";
export const DEAD_LETTER_SUFFIX = ":dead";
const LOG_TEMPLATE = "job {id} failed after {attempts} attempts: {error}";

export interface Job<T = unknown> {
  id: JobId;
  type: string;
  payload: T;
  attempts: number;
  maxAttempts: number;
  enqueuedAt: number;
  lastError?: string;
}

export interface WorkerOptions {
  queue?: string;
  concurrency?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  pollIntervalMs?: number;
}

export interface WorkerStats {
  processed: number;
  failed: number;
  retried: number;
  dead: number;
}

const logger = pino({ name: "queue-worker" });

/** Renders "{id}"-style placeholders; unknown keys are left as "{key}". */
export function renderTemplate(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (match, key: string) =>
    key in values ? String(values[key]) : match,
  );
}

/** Exponential backoff with full jitter, capped at maxDelayMs. */
export function computeBackoff(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  const exp = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(Math.random() * exp);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class QueueWorker extends EventEmitter {
  private readonly client: RedisClient;
  private readonly handlers = new Map<string, Handler<any>>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly options: Required<WorkerOptions>;
  private stopping = false;
  private stats: WorkerStats = { processed: 0, failed: 0, retried: 0, dead: 0 };

  constructor(url: string, options: WorkerOptions = {}) {
    super();
    this.client = createClient({ url });
    this.options = {
      queue: options.queue ?? DEFAULT_QUEUE,
      concurrency: options.concurrency ?? 4,
      baseDelayMs: options.baseDelayMs ?? 500,
      maxDelayMs: options.maxDelayMs ?? 60_000,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
    };
  }

  register<T>(type: string, handler: Handler<T>): this {
    if (this.handlers.has(type)) {
      throw new Error(`handler for "${type}" already registered`);
    }
    this.handlers.set(type, handler as Handler<any>);
    return this;
  }

  /** Main loop: keeps up to `concurrency` jobs in flight until close() is called. */
  async run(): Promise<void> {
    await this.client.connect();
    logger.info({ queue: this.options.queue }, "worker started");
    while (!this.stopping) {
      if (this.inFlight.size >= this.options.concurrency) {
        await Promise.race(this.inFlight);
        continue;
      }
      const raw = await this.client.lPop(this.options.queue);
      if (raw === null) {
        await sleep(this.options.pollIntervalMs);
        continue;
      }
      const job = JSON.parse(raw) as Job;
      const task = this.handle(job).finally(() => this.inFlight.delete(task));
      this.inFlight.add(task);
    }
  }

  /** Runs a single job through its registered handler and records the outcome. */
  async handle(job: Job): Promise<void> {
    const handler = this.handlers.get(job.type);
    if (!handler) {
      logger.warn({ job: job.id, type: job.type }, "no handler registered");
      await this.bury(job, `no handler for type ${job.type}`);
      return;
    }
    job.attempts += 1;
    try {
      await handler(job.payload, job);
      this.stats.processed += 1;
      this.emit("done", job);
    } catch (err) {
      this.stats.failed += 1;
      job.lastError = err instanceof Error ? err.message : String(err);
      await this.retry(job);
    }
  }

  /** Re-enqueues a failed job after an exponential backoff, or buries it when out of attempts. */
  async retry(job: Job): Promise<void> {
    if (job.attempts >= job.maxAttempts) {
      logger.error(renderTemplate(LOG_TEMPLATE, {
        id: job.id,
        attempts: job.attempts,
        error: job.lastError ?? "unknown",
      }));
      await this.bury(job, job.lastError ?? "max attempts reached");
      return;
    }
    const delay = computeBackoff(job.attempts, this.options.baseDelayMs, this.options.maxDelayMs);
    this.stats.retried += 1;
    this.emit("retry", job, delay);
    await sleep(delay);
    await this.client.rPush(this.options.queue, JSON.stringify(job));
  }

  /** Waits for in-flight jobs to finish, giving up after timeoutMs. */
  async drain(timeoutMs: number): Promise<void> {
    this.stopping = true;
    const deadline = sleep(timeoutMs).then(() => {
      throw new Error(`drain timed out with ${this.inFlight.size} jobs in flight`);
    });
    await Promise.race([Promise.all(this.inFlight), deadline]);
    logger.info({ stats: this.stats }, "worker drained");
  }

  /** Stops accepting jobs, drains and disconnects from Redis. */
  async close(): Promise<void> {
    try {
      await this.drain(10_000);
    } finally {
      await this.client.quit();
    }
  }

  getStats(): WorkerStats {
    return { ...this.stats };
  }

  private async bury(job: Job, reason: string): Promise<void> {
    this.stats.dead += 1;
    const record = JSON.stringify({ ...job, lastError: reason, buriedAt: Date.now() });
    await this.client.rPush(this.options.queue + DEAD_LETTER_SUFFIX, record);
    this.emit("dead", job, reason);
  }
}

/** Enqueues a job; callers never build the Job object by hand. */
export async function enqueue<T>(
  client: RedisClient,
  type: string,
  payload: T,
  queue: string = DEFAULT_QUEUE,
  maxAttempts = 5,
): Promise<JobId> {
  const id = `${type}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const job: Job<T> = { id, type, payload, attempts: 0, maxAttempts, enqueuedAt: Date.now() };
  await client.rPush(queue, JSON.stringify(job));
  return id;
}
