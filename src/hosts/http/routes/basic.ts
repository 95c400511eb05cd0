/** GET /healthz (no auth) and GET /openapi.json (no auth: Open WebUI fetches it without user context). */
import { openApiDocument } from '../openapi.js';
import { sendJson } from '../respond.js';
import type { Route, ServerContext } from '../route.js';

export function basicRoutes(ctx: ServerContext): Route[] {
  // Built once and served from memory: Open WebUI re-fetches it at every chat request (10 s timeout).
  const openapi = JSON.stringify(openApiDocument(ctx.api.functions, { version: ctx.version, serverUrl: ctx.settings.publicUrl, auth: ctx.settings.auth }));
  let sandbox: Promise<{ active: string }> | undefined;
  return [
    {
      methods: ['GET', 'HEAD'],
      path: '/healthz',
      handler: async (_req, res) => {
        const valves = ctx.valves();
        sandbox ??= ctx.api.sandbox((valves.sandbox as 'auto' | 'bwrap' | 'validated' | undefined) ?? 'auto');
        sendJson(res, 200, { status: 'ok', version: ctx.version, sandbox: (await sandbox).active, auth: ctx.settings.auth });
      },
    },
    { methods: ['GET', 'HEAD'], path: '/openapi.json', handler: (_req, res) => sendJson(res, 200, openapi, { 'Access-Control-Allow-Origin': '*' }) },
  ];
}
