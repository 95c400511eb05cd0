/** GET /healthz (no auth) and GET /openapi.json (no auth: Open WebUI fetches it without user context). */
import type { SandboxReport, SandboxSetting } from '../../../core/exec/sandbox.js';
import { openApiDocument } from '../openapi.js';
import { sendJson } from '../respond.js';
import type { Route, ServerContext } from '../route.js';

export function basicRoutes(ctx: ServerContext): Route[] {
  // Served from memory: Open WebUI re-fetches it at every chat request (10 s timeout). It lists the
  // functions the `functions` valves enable (for users or admins: the document is read without a
  // user), and is rebuilt only when that set changes (the admin page changes valves at run time).
  let cached = { key: '', text: '' };
  const openapi = (): string => {
    const valves = ctx.valves();
    const enabled = new Set([...ctx.api.enabled(valves, 'user'), ...ctx.api.enabled(valves, 'admin')]);
    const key = [...enabled].join(',');
    if (key !== cached.key) {
      const functions = ctx.api.functions.filter((f) => enabled.has(f.name));
      cached = { key, text: JSON.stringify(openApiDocument(functions, { version: ctx.version, serverUrl: ctx.settings.publicUrl, auth: ctx.settings.auth })) };
    }
    return cached.text;
  };
  let sandbox: Promise<SandboxReport> | undefined;
  return [
    {
      methods: ['GET', 'HEAD'],
      path: '/healthz',
      handler: async (_req, res) => {
        const valves = ctx.valves();
        sandbox ??= ctx.api.sandbox((valves.sandbox as SandboxSetting | undefined) ?? 'auto');
        const { active, landlock_abi } = await sandbox;
        sendJson(res, 200, { status: 'ok', version: ctx.version, sandbox: active, landlock_abi, auth: ctx.settings.auth });
      },
    },
    { methods: ['GET', 'HEAD'], path: '/openapi.json', handler: (_req, res) => sendJson(res, 200, openapi(), { 'Access-Control-Allow-Origin': '*' }) },
  ];
}
