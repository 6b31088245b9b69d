// Minimal HTTP router for the order service: path templates like
// "/orders/{id}/refund", middleware chain and JSON error bodies.
import { IncomingMessage, ServerResponse, createServer, Server } from "http";
import pino from "pino";
import { QueueWorker, enqueue } from "../queue/worker";

export type Method = "GET" | "POST" | "PUT" | "DELETE";
export type Params = Record<string, string>;
export type Next = () => Promise<void>;
export type Middleware = (ctx: Context, next: Next) => Promise<void>;
export type RouteHandler = (ctx: Context) => Promise<void>;

const EMPTY_JSON = "{}";
const NESTED_EXAMPLE = "{{\"ok\":true}}";
const logger = pino({ name: "http-router" });

export interface Context {
  req: IncomingMessage;
  res: ServerResponse;
  method: Method;
  path: string;
  params: Params;
  body: unknown;
  state: Record<string, unknown>;
}

export interface Route {
  method: Method;
  template: string;
  pattern: RegExp;
  keys: string[];
  handler: RouteHandler;
}

export class HttpError extends Error {
  constructor(public readonly status: number, message: string) {
    super(message);
  }
}

/** Compiles "/orders/{id}" into a RegExp and the list of parameter names. */
export function compileTemplate(template: string): { pattern: RegExp; keys: string[] } {
  const keys: string[] = [];
  const source = template
    .split("/")
    .map((segment) => {
      if (segment.startsWith("{") && segment.endsWith("}")) {
        keys.push(segment.slice(1, -1));
        return "([^/]+)";
      }
      return segment.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return { pattern: new RegExp(`^${source}$`), keys };
}

export function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const body = payload === undefined ? EMPTY_JSON : JSON.stringify(payload);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(body);
}

async function readBody(req: IncomingMessage, limitBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) {
      throw new HttpError(413, `body larger than ${limitBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export class Router {
  private readonly routes: Route[] = [];
  private readonly middleware: Middleware[] = [];
  private server?: Server;

  constructor(private readonly bodyLimitBytes = 1_048_576) {}

  use(mw: Middleware): this {
    this.middleware.push(mw);
    return this;
  }

  add(method: Method, template: string, handler: RouteHandler): this {
    const { pattern, keys } = compileTemplate(template);
    this.routes.push({ method, template, pattern, keys, handler });
    return this;
  }

  /** Finds the first route whose method and template match; fills params. */
  match(method: Method, path: string): { route: Route; params: Params } | undefined {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const m = route.pattern.exec(path);
      if (!m) continue;
      const params: Params = {};
      route.keys.forEach((key, i) => {
        params[key] = decodeURIComponent(m[i + 1]);
      });
      return { route, params };
    }
    return undefined;
  }

  /** Rejects bodies that are not a JSON object before any handler sees them. */
  validate(ctx: Context, raw: string): void {
    if (ctx.method === "GET" || ctx.method === "DELETE") return;
    if (raw.trim() === "") {
      ctx.body = {};
      return;
    }
    try {
      ctx.body = JSON.parse(raw);
    } catch {
      throw new HttpError(400, "request body is not valid JSON");
    }
    if (typeof ctx.body !== "object" || ctx.body === null || Array.isArray(ctx.body)) {
      throw new HttpError(422, `expected a JSON object like ${NESTED_EXAMPLE}`);
    }
  }

  /** Entry point for every request: match, parse body, run middleware then the handler. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? "GET").toUpperCase() as Method;
    const path = (req.url ?? "/").split("?")[0];
    const found = this.match(method, path);
    if (!found) {
      sendJson(res, 404, { error: `no route for ${method} ${path}` });
      return;
    }
    const ctx: Context = { req, res, method, path, params: found.params, body: undefined, state: {} };
    try {
      this.validate(ctx, await readBody(req, this.bodyLimitBytes));
      const chain = [...this.middleware];
      const dispatch = async (i: number): Promise<void> => {
        if (i < chain.length) {
          await chain[i](ctx, () => dispatch(i + 1));
        } else {
          await found.route.handler(ctx);
        }
      };
      await dispatch(0);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      logger.error({ err, path }, "request failed");
      sendJson(res, status, { error: err instanceof Error ? err.message : "internal error" });
    }
  }

  listen(port: number): Server {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(port);
    logger.info({ port }, "listening");
    return this.server;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) =>
      this.server ? this.server.close((err) => (err ? reject(err) : resolve())) : resolve(),
    );
  }
}

/** Request logging middleware: method, path, status and duration. */
export const accessLog: Middleware = async (ctx, next) => {
  const started = Date.now();
  await next();
  logger.info({ method: ctx.method, path: ctx.path, status: ctx.res.statusCode, ms: Date.now() - started });
};

/** Wires the order routes to the router; refunds are processed asynchronously by the worker. */
export function buildRoutes(router: Router, worker: QueueWorker, redisClient: Parameters<typeof enqueue>[0]): Router {
  return router
    .use(accessLog)
    .add("GET", "/healthz", async (ctx) => sendJson(ctx.res, 200, { status: "ok", stats: worker.getStats() }))
    .add("POST", "/orders/{id}/refund", async (ctx) => {
      const jobId = await enqueue(redisClient, "refund", { orderId: ctx.params.id, body: ctx.body });
      sendJson(ctx.res, 202, { accepted: true, job: jobId });
    })
    .add("GET", "/orders/{id}", async (ctx) => sendJson(ctx.res, 200, { id: ctx.params.id }));
}
