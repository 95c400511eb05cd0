/**
 * `fileshed serve`: node:http, a declarative route table (route.ts), the DNS-rebinding check on
 * loopback binds, in-flight tracking and graceful shutdown (stop accepting, let running calls
 * finish up to a deadline, then close what is left).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { admin, hostApi, linkServing, serving, version } from '../../index.js';
import { mcpRoutes } from '../mcp/http.js';
import { adminRoutes } from './admin/index.js';
import { MaintenanceSchedule, type ScheduleTimes } from './admin/schedule.js';
import { valvesSource } from '../valves.js';
import { createScheduler, serverBusyEnvelope } from './fairness.js';
import { identityResolver } from './identity/index.js';
import { createLogger, type Logger } from './log.js';
import { sendDetail } from './respond.js';
import type { Route, ServerContext } from './route.js';
import { basicRoutes } from './routes/basic.js';
import { fileRoutes } from './routes/files.js';
import { functionRoutes } from './routes/functions.js';
import { isLoopback, type ServerSettings } from './settings.js';
import { Health, type HealthInfo } from './health.js';
import { Metrics } from './metrics.js';

export interface RunningServer {
  url: string;
  port: number;
  /** Port of the health thread (--health-port), when started. */
  healthPort: number | undefined;
  ctx: ServerContext;
  /** Graceful stop; resolves once every connection is closed. */
  close(): Promise<void>;
}

export interface ServeOptions {
  /** Extra route modules (download links, admin page): consulted before the function catch-all. */
  extraRoutes?: (ctx: ServerContext) => Route[];
  fetchImpl?: typeof fetch;
  logger?: Logger;
  /** Scheduled maintenance timing (tests shorten it). */
  maintenance?: ScheduleTimes;
  /** The coordination service in use (readiness pings it). */
  coordination?: { ping(): Promise<number> };
}

export async function startServer(settings: ServerSettings, options: ServeOptions = {}): Promise<RunningServer> {
  const log = options.logger ?? createLogger(settings.accessLog, settings.base);
  let port = settings.port;
  // The server audits calls unless the config file or a flag turns audit_log off.
  const valveDefaults = { audit_log: true, openwebui_api_url: settings.openwebuiUrl };
  const source = valvesSource(settings.configFile, settings.base, settings.flagValves, valveDefaults);
  // Links point at this server: --public-url wins, then a public_url valve, then http://HOST:PORT.
  const linkBase = (v: Record<string, unknown>) => (settings.publicUrl ? { ...v, public_url: settings.publicUrl } : v.public_url === undefined ? { ...v, public_url: ctx.publicUrl() } : v);
  // Every call (POST /{name} and MCP tools/call) goes through the fair scheduler: one call at a
  // time per user, a global cap, a bounded queue per user (SERVER_BUSY beyond it).
  const scheduler = createScheduler(settings.limits);
  const metrics = new Metrics();
  const api: typeof hostApi = {
    ...hostApi,
    call: async (name, args, valves, host) => {
      const user = (args.__user__ as { id?: unknown } | undefined)?.id;
      const key = typeof user === 'string' ? user : '';
      const queued = performance.now();
      // A server for several users runs commands unconfined (sandbox="validated") only when its admin said so.
      const bridge = { name: 'standalone', ...host, allowsUnconfined: settings.allowUnconfined };
      const result = await (scheduler.run(key, () => hostApi.call(name, args, valves, bridge)) ?? Promise.resolve(serverBusyEnvelope(settings.limits)));
      metrics.recordEnvelope(name, (performance.now() - queued) / 1000, result);
      return result;
    },
  };
  const health = new Health(healthInfo(settings, 'starting'), settings.base, options.coordination);
  const ctx: ServerContext = {
    settings,
    storageBase: settings.base,
    valveDefaults,
    valves: () => linkBase(source()),
    identify: identityResolver(settings, options.fetchImpl, () => ctx.openwebuiUrl()),
    log,
    api,
    version,
    publicUrl: () => settings.publicUrl ?? `http://${hostForUrl(settings.host)}:${port}`,
    openwebuiUrl: () => String(source().openwebui_api_url ?? settings.openwebuiUrl).replace(/\/+$/, ''),
    health,
    metrics,
    gauges: () => ({
      scheduler: scheduler.stats(),
      pool: serving.poolStats(),
      sandbox: health.healthz().sandbox,
      storage: health.healthz().storage,
      coordination: health.healthz().coordination,
      mcpSessions: mcp.sessions(),
      ready: health.readyz().ready,
    }),
  };
  const mcp = mcpRoutes(ctx);
  let routes: Route[] = [];
  const loopback = isLoopback(settings.host);
  let inFlight = 0;
  let idle: (() => void) | undefined;

  const { limits } = settings;
  const server = http.createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      maxHeaderSize: limits.maxHeaderSize,
      // Node checks the two timeouts above on this interval (default 30 s): a slowloris client
      // would otherwise hold its connection up to 30 s past the deadline.
      connectionsCheckingInterval: Math.max(250, Math.min(5_000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    (req, res) => {
    inFlight++;
    res.on('close', () => {
      inFlight--;
      if (inFlight === 0) idle?.();
    });
    route(req, res).catch((err: unknown) => {
      log.info(`unexpected error on ${req.method} ${(req.url ?? '').split('?')[0]}: ${(err as Error)?.message ?? String(err)}`);
      if (!res.headersSent) sendDetail(res, 500, 'Internal server error; see the server log.');
      else res.end();
    });
    },
  );

  const allowed = new Set(settings.allowedHosts);
  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    // A balancer's check may send no Host at all (HAProxy's default HTTP/1.0 check): never a
    // browser, so no DNS rebinding; the health answers are public and change nothing.
    const probeWithoutHost = PROBES.has(pathname) && req.headers.host === undefined;
    if (loopback && !probeWithoutHost && !sameMachine(req, allowed)) {
      sendDetail(res, 403, 'Refused: this server listens on a loopback address and only answers requests whose Host and Origin are loopback names or names given with --allowed-hosts (DNS rebinding protection).');
      return;
    }
    for (const r of routes) {
      const match = typeof r.path === 'string' ? (r.path === pathname ? null : undefined) : (r.path.exec(pathname) ?? undefined);
      if (match === undefined) continue;
      if (!r.methods.includes('*') && !r.methods.includes(req.method ?? '')) {
        sendDetail(res, 405, `${pathname} answers ${r.methods.join(', ')}.`, { Allow: r.methods.join(', ') });
        return;
      }
      await r.handler(req, res, match, ctx);
      return;
    }
    sendDetail(res, 404, `Nothing at ${pathname.slice(0, 100)}. Functions are POST /{name} (see /openapi.json); MCP is at /mcp.`);
  }

  // Everything a request needs exists before the port opens: a request that arrives at the first
  // instant is answered by the routes, never by an empty table (404).
  // The sandbox report starts bwrap once: done in the background, /healthz says "starting" meanwhile.
  const refreshInfo = () =>
    void hostApi
      .sandbox((ctx.valves().sandbox as Parameters<typeof hostApi.sandbox>[0] | undefined) ?? 'auto', settings.allowUnconfined)
      .then((r) => health.update(healthInfo(settings, r.active, r.landlock_abi, r.unconfined, hostApi.separation(ctx.valves(), r.active).separation)))
      .catch(() => undefined);
  refreshInfo();
  const infoTimer = setInterval(refreshInfo, 30_000);
  infoTimer.unref();
  // The configured link-signing secret becomes the storage's current one (the one it replaces
  // keeps verifying for a grace period), so links made in-process and by this server agree.
  await linkServing.adoptSecret(settings.base, settings.linkSecret);
  const schedule = new MaintenanceSchedule(ctx, admin.maintainAll, options.maintenance);
  routes = [...basicRoutes(ctx), ...mcp.routes, ...fileRoutes(ctx), ...adminRoutes(ctx, schedule), ...(options.extraRoutes?.(ctx) ?? []), ...functionRoutes];

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(err.code === 'EADDRINUSE' ? new Error(`port ${settings.port} on ${settings.host} is already in use (another fileshed serve?): stop it, or choose another --port`) : err),
      );
      server.listen(settings.port, settings.host, () => resolve());
    });
  } catch (err) {
    clearInterval(infoTimer);
    throw err;
  }
  port = (server.address() as AddressInfo).port;
  schedule.start();
  health.start();
  const healthPort = settings.healthPort !== undefined ? await health.listen(settings.host, settings.healthPort) : undefined;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${hostForUrl(settings.host)}:${port}`,
    port,
    healthPort,
    ctx,
    close: () =>
      (closing ??= (async () => {
        schedule.stop();
        clearInterval(infoTimer);
        await health.close();
        const done = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (inFlight > 0) {
          await Promise.race([new Promise<void>((r) => (idle = r)), new Promise((r) => setTimeout(r, settings.shutdownMs).unref())]);
        }
        await mcp.closeAll();
        server.closeAllConnections();
        await done;
        log.close();
      })()),
  };
}

function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

const PROBES = new Set(['/healthz', '/readyz']);

/**
 * Host (and Origin when sent) must name this machine, or a name the admin allowed (the public name
 * a balancer on this host forwards): a rebinding page sends its own domain, never one of those.
 */
export function sameMachine(req: http.IncomingMessage, allowed: ReadonlySet<string> = new Set()): boolean {
  const ok = (name: string) => isLoopback(name) || allowed.has(name.toLowerCase());
  const host = req.headers.host;
  if (host === undefined || !ok(hostnameOf(host))) return false;
  const origin = req.headers.origin;
  if (origin === undefined || origin === 'null') return origin === undefined;
  try {
    return ok(new URL(origin).hostname);
  } catch {
    return false;
  }
}

function healthInfo(settings: ServerSettings, sandbox: string, landlockAbi: number | null = null, unconfined = false, separation = 'unknown'): HealthInfo {
  const kind = serving.storageKind(settings.base);
  return {
    status: 'ok',
    version,
    sandbox,
    landlock_abi: landlockAbi,
    unconfined,
    separation,
    auth: settings.auth,
    storage: { kind: kind.kind, type: kind.type, shared: kind.shared },
    coordination: settings.coordination !== undefined ? 'redis' : 'none',
  };
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  return hostHeader.split(':')[0] ?? '';
}
