/**
 * GET /healthz and /readyz (no auth: balancers and probes), GET /metrics (Prometheus; admin by
 * default) and GET /openapi.json (no auth: Open WebUI fetches it without user context), with
 * /openapi-client.json, its form for generated clients.
 */
import { openApiDocument } from '../openapi.js';
import { AdminGuard } from '../admin/guard.js';
import { sendDetail, sendJson } from '../respond.js';
import type { Route, ServerContext } from '../route.js';

export function basicRoutes(ctx: ServerContext): Route[] {
  const guard = new AdminGuard(ctx);
  // Served from memory: Open WebUI re-fetches it at every chat request (10 s timeout). It lists the
  // functions the `functions` valves enable (for users or admins: the document is read without a
  // user), and is rebuilt only when that set changes (the admin page changes valves at run time).
  const cached = new Map<string, { key: string; text: string }>();
  const openapi = (headers: boolean): string => {
    const valves = ctx.valves();
    const enabled = new Set([...ctx.api.enabled(valves, 'user'), ...ctx.api.enabled(valves, 'admin')]);
    const key = [...enabled].join(',');
    const form = headers ? 'client' : 'host';
    if (cached.get(form)?.key !== key) {
      const functions = ctx.api.functions.filter((f) => enabled.has(f.name));
      cached.set(form, { key, text: JSON.stringify(openApiDocument(functions, { version: ctx.version, serverUrl: ctx.settings.publicUrl, auth: ctx.settings.auth, headers })) });
    }
    return cached.get(form)!.text;
  };
  return [
    // Liveness: from memory only, never the storage (health.ts).
    {
      methods: ['GET', 'HEAD'],
      path: '/healthz',
      handler: async (_req, res) => {
        // Right after start the sandbox report may still be running (it starts bwrap once, never the storage).
        await Promise.race([ctx.health.known, new Promise((r) => setTimeout(r, 2000))]);
        sendJson(res, 200, ctx.health.healthz());
      },
    },
    {
      methods: ['GET', 'HEAD'],
      path: '/readyz',
      handler: (_req, res) => {
        const r = ctx.health.readyz();
        sendJson(res, r.ready ? 200 : 503, r);
      },
    },
    {
      methods: ['GET'],
      path: '/metrics',
      handler: async (req, res) => {
        if (ctx.settings.metrics === 'off') return sendDetail(res, 404, 'Metrics are off on this server (--metrics off).');
        if (ctx.settings.metrics === 'admin') {
          const who = await guard.check(req, false);
          if (who.kind !== 'admin') {
            return sendDetail(res, who.kind === 'signin' ? 401 : 403, 'GET /metrics needs admin credentials (the API key as a Bearer token, an admin Open WebUI session, or local mode); or run the server with --metrics public.', who.kind === 'signin' ? { 'WWW-Authenticate': 'Bearer realm="fileshed"' } : {});
          }
        }
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end(ctx.metrics.render(ctx.gauges()));
      },
    },
    { methods: ['GET', 'HEAD'], path: '/openapi.json', handler: (_req, res) => sendJson(res, 200, openapi(false), { 'Access-Control-Allow-Origin': '*' }) },
    // For generated clients: the request headers declared as parameters (see openapi.ts).
    { methods: ['GET', 'HEAD'], path: '/openapi-client.json', handler: (_req, res) => sendJson(res, 200, openapi(true), { 'Access-Control-Allow-Origin': '*' }) },
  ];
}
