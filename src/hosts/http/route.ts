/**
 * The server's route table is a plain list of routes; each feature (functions, MCP, download links,
 * admin page) is one module exporting its routes, so features are added without touching the
 * router. A route receives the request, the response, the path match and the server context.
 *
 * Contract for route modules:
 * - answer every request (the router does not add a fallback once a handler was chosen);
 * - identify the caller with `ctx.identify(req.headers)` (never trust body fields for identity);
 * - call functions only through `ctx.api` (the plugin's hostApi: the one dispatcher);
 * - read `ctx.valves()` per request (the admin page changes the config file at run time);
 * - never log arguments, tokens or keys (ctx.log.access records only the call's outline).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { hostApi as HostApi } from '../../index.js';
import type { IdentityResolver } from './identity/index.js';
import type { Logger } from './log.js';
import type { ServerSettings } from './settings.js';
import type { Health } from './health.js';
import type { Gauges, Metrics } from './metrics.js';

export interface ServerContext {
  settings: ServerSettings;
  /** Valves in effect now: defaults < config file < --valve flags, with storage_base_path = the base. */
  valves(): Record<string, unknown>;
  /** Absolute storage base. */
  storageBase: string;
  identify: IdentityResolver;
  log: Logger;
  api: typeof HostApi;
  /** Base URL users reach the server at (for links), without trailing slash. */
  publicUrl(): string;
  /** Plugin version, for /healthz and the OpenAPI document. */
  version: string;
  /** Valve defaults this server applies above the plugin's (audit log on, Open WebUI URL); the admin form shows them. */
  valveDefaults: Record<string, unknown>;
  /**
   * Where Open WebUI is reached now, without trailing slash: the valve openwebui_api_url, whose
   * default is --openwebui-url (FILESHED_OPENWEBUI_URL, server.openwebui_url); the admin page overrides it.
   */
  openwebuiUrl(): string;
  /** Liveness and readiness (answered from memory). */
  health: Health;
  /** Calls, errors and latency per function (GET /metrics). */
  metrics: Metrics;
  /** Queue, pool and status figures for /metrics. */
  gauges(): Gauges;
}

export interface Route {
  /** Methods this route answers; another method on a matching path gets 405. */
  methods: readonly string[];
  /** Exact path, or a pattern whose groups reach the handler as `match`. */
  path: string | RegExp;
  handler(req: IncomingMessage, res: ServerResponse, match: RegExpExecArray | null, ctx: ServerContext): Promise<void> | void;
}
