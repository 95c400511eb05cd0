/**
 * The admin page's routes (SPEC 13.5), mounted in the server's route table before the function
 * catch-all: GET /admin (settings), /admin/{usage,groups,links,sandbox,audit,maintenance},
 * sign-in and sign-out, and the stylesheet. Every page checks the admin first (guard.ts); every
 * POST passes the origin and CSRF checks before its form is read for anything else.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { admin as pluginAdmin } from '../../../index.js';
import { BodyTooLarge, readBody } from '../body.js';
import { header } from '../identity/types.js';
import type { Route, ServerContext } from '../route.js';
import { ADMIN_CSS } from './assets.js';
import { auditPage } from './audit-page.js';
import { AdminGuard, crossSite, type Admin } from './guard.js';
import { groupAction, groupsPage } from './groups.js';
import { linksPage } from './links.js';
import { maintenancePage } from './maintenance.js';
import { accountOf, esc, layout, redirect, sendHtml, type PageOptions } from './page.js';
import { sandboxPage } from './sandbox.js';
import { openwebuiDownHelp } from './signin-help.js';
import type { MaintenanceSchedule } from './schedule.js';
import { usagePage } from './usage.js';
import { renderValves, saveValves } from './valves.js';

const FORM_LIMIT = 256 * 1024;

type Handler = (req: IncomingMessage, res: ServerResponse, admin: Admin, form: URLSearchParams | undefined) => Promise<void> | void;

export function adminRoutes(ctx: ServerContext, schedule: MaintenanceSchedule): Route[] {
  const guard = new AdminGuard(ctx);
  const audit = (user: string, action: string, code: string, extra: { flagged?: boolean; paths?: string[] } = {}) => {
    try {
      pluginAdmin.auditEvent(ctx.valves(), { user, action, code, ...extra });
    } catch {
      // invalid valves: the page reports them; auditing must not break the answer
    }
  };
  const page = (res: ServerResponse, admin: Admin, section: string, title: string, body: string, notice: PageOptions['notice'] = [], status = 200) =>
    sendHtml(res, status, layout(body, { title, section, ...accountOf(admin, ctx.settings.auth), notice }), admin.setCookie ? { 'Set-Cookie': admin.setCookie } : {});

  /** Admin check, then (POST) origin + CSRF; then the handler with the parsed form. */
  const admin = (handler: Handler) => async (req: IncomingMessage, res: ServerResponse) => {
    const post = req.method === 'POST';
    if (post) {
      // Cross-site first: such a request is refused whoever it claims to be, before anything else.
      const cross = crossSite(req, ctx.publicUrl());
      if (cross) return refuse(req, res, '-', cross);
    }
    const who = await guard.check(req, !post);
    if (who.kind === 'signin') return signIn(res, 401, who.error, who.openwebuiDown);
    if (who.kind === 'forbidden') {
      audit(who.user, `admin:${pathOf(req)}`, 'FORBIDDEN', { flagged: true });
      return sendHtml(res, 403, layout(`<p>${esc(who.why)}</p><p><a href="/admin/login">Sign in as someone else</a></p>`, { title: 'Not an admin' }));
    }
    let form: URLSearchParams | undefined;
    if (post) {
      try {
        form = await readForm(req);
      } catch (err) {
        if (err instanceof BodyTooLarge) {
          res.setHeader('Connection', 'close');
          sendHtml(res, 413, layout('<p>The form is too large.</p>', { title: 'Too large' }));
          req.destroy();
          return;
        }
        throw err;
      }
      const why = guard.refusal(req, who.admin, form.get('_csrf') ?? undefined);
      if (why) return refuse(req, res, who.admin.user, why);
    }
    await handler(req, res, who.admin, form);
  };

  function refuse(req: IncomingMessage, res: ServerResponse, user: string, why: string): void {
    audit(user, `admin:${pathOf(req)}`, 'CSRF_REFUSED', { flagged: true });
    ctx.log.info(`admin: refused POST ${pathOf(req)}: ${why}`);
    sendHtml(res, 403, layout(`<p>Refused: ${esc(why)}. Nothing was changed.</p><p><a href="/admin">Back to the admin page</a></p>`, { title: 'Request refused' }));
  }

  function signIn(res: ServerResponse, status: number, error?: string, openwebuiDown = false): void {
    const modes = ctx.settings.auth;
    const key = modes.includes('api-key') || ctx.settings.apiKeys.length > 0;
    const token = modes.includes('openwebui-session');
    const label = key && token ? 'API key or Open WebUI token' : key ? 'API key' : 'Open WebUI token';
    const help = [key ? 'the server\'s API key' : '', token ? 'the Open WebUI token of an admin (Settings → Account → API keys, or the session token)' : ''].filter(Boolean).join(', or ');
    const body = key || token
      ? `<form method="post" action="/admin/login" class="signin"><label for="key">${label}</label><input type="password" id="key" name="key" autocomplete="current-password" aria-describedby="key-help" required><p id="key-help" class="muted">Enter ${esc(help)}.</p><button type="submit" class="primary">Sign in</button></form>`
      : '<p>This server has no way to sign in to the admin page (no API key and no Open WebUI session mode). Start it with <code>--auth api-key</code> or use local mode on a loopback address.</p>';
    sendHtml(res, status, layout(body + (openwebuiDown ? openwebuiDownHelp(ctx) : ''), { title: 'Sign in', notice: error ? [{ kind: 'error', text: error }] : [] }));
  }

  /** One route per path (the router answers 405 for a second route on the same path): GET renders, POST acts. */
  const section = (path: string, title: string, render: (req: IncomingMessage, admin: Admin) => Promise<string> | string, act?: Handler): Route => ({
    methods: act ? ['GET', 'HEAD', 'POST'] : ['GET', 'HEAD'],
    path,
    handler: admin(async (req, res, a, form) => (req.method === 'POST' && act ? act(req, res, a, form) : page(res, a, path, title, await render(req, a), noticeFromQuery(req)))),
  });

  return [
    { methods: ['GET', 'HEAD'], path: '/admin/assets/admin.css', handler: (_req, res) => sendCss(res) },
    {
      methods: ['GET', 'HEAD'],
      path: '/admin',
      handler: admin((req, res, a) => sendHtml(res, 200, renderValves(ctx, a, { notice: noticeFromQuery(req) }), a.setCookie ? { 'Set-Cookie': a.setCookie } : {})),
    },
    { methods: ['GET', 'HEAD'], path: '/admin/', handler: (_req, res) => redirect(res, '/admin') },
    { methods: ['POST'], path: '/admin/valves', handler: admin((req, res, a, form) => saveValves(req, res, form!, ctx, a, (action, code, paths) => audit(a.user, action, code, paths ? { paths } : {}))) },
    {
      methods: ['GET', 'HEAD', 'POST'],
      path: '/admin/login',
      handler: async (req, res) => {
        if (req.method !== 'POST') {
          const who = await guard.check(req, false);
          if (who.kind === 'admin' && who.admin.via !== 'local') return redirect(res, '/admin');
          return signIn(res, 200);
        }
        const cross = crossSite(req, ctx.publicUrl());
        if (cross) return refuse(req, res, '-', cross);
        const form = await readForm(req).catch(() => new URLSearchParams());
        const key = (form.get('key') ?? '').trim();
        const who = key ? await guard.credential(key) : { kind: 'signin' as const, error: 'Enter the key or token.' };
        if (who.kind === 'signin') {
          audit('-', 'admin:login', 'SIGNIN_FAILED', { flagged: true });
          return signIn(res, 401, who.error, who.openwebuiDown);
        }
        if (who.kind === 'forbidden') {
          audit(who.user, 'admin:login', 'FORBIDDEN', { flagged: true });
          return sendHtml(res, 403, layout(`<p>${esc(who.why)}</p>`, { title: 'Not an admin' }));
        }
        const session = guard.open(req, who.admin.user, who.admin.via);
        audit(who.admin.user, 'admin:login', 'OK');
        redirect(res, '/admin', { 'Set-Cookie': session.setCookie! });
      },
    },
    {
      methods: ['POST'],
      path: '/admin/logout',
      handler: admin((req, res) => redirect(res, ctx.settings.auth.includes('local') ? '/admin' : '/admin/login', { 'Set-Cookie': guard.close(req) })),
    },
    section('/admin/usage', 'Usage', (req, a) => usagePage(ctx.storageBase, query(req), a.csrf), async (_req, res, a, form) => {
      const r = await pluginAdmin.usage.measure(ctx.valves(), form!.get('what') === 'all');
      audit(a.user, 'admin:usage-measure', 'OK');
      redirect(res, `/admin/usage?done=${encodeURIComponent(`Measured ${r.measured} users and groups in ${r.ms} ms.`)}`);
    }),
    section('/admin/groups', 'Groups', (_req, a) => groupsPage(ctx, a.csrf), async (_req, res, a, form) => {
      const r = await groupAction(ctx, form!);
      audit(a.user, `admin:groups-${(form!.get('action') ?? '').slice(0, 20)}`, r.ok ? 'OK' : 'REFUSED', { paths: [form!.get('group') ?? '', form!.get('user') ?? ''].filter(Boolean).map((s) => s.slice(0, 128)) });
      redirect(res, `/admin/groups?${r.ok ? 'done' : 'error'}=${encodeURIComponent(r.text)}`);
    }),
    section('/admin/links', 'Links', (_req, a) => linksPage(ctx.storageBase, a.csrf), async (_req, res, a, form) => {
      const id = form!.get('link_id') ?? '';
      let text = `Link ${id} revoked.`;
      let ok = true;
      try {
        if (!(await pluginAdmin.links.revoke(ctx.storageBase, id))) {
          ok = false;
          text = `No active link has the id ${id}.`;
        }
      } catch (err) {
        ok = false;
        text = `Nothing was revoked: ${(err as Error).message}`;
      }
      audit(a.user, 'admin:link-revoke', ok ? 'OK' : 'REFUSED', { paths: [id.slice(0, 128)] });
      redirect(res, `/admin/links?${ok ? 'done' : 'error'}=${encodeURIComponent(text)}`);
    }),
    section('/admin/sandbox', 'Sandbox', (_req, a) => sandboxPage(ctx, a.user)),
    section('/admin/audit', 'Audit log', (req) => auditPage(ctx.storageBase, query(req), ctx.valves().audit_log === true || ctx.valves().audit_log === 'true')),
    section('/admin/maintenance', 'Maintenance', (_req, a) => maintenancePage(schedule, a.csrf, ctx.valves().uploads_retention_days), async (_req, res, a) => {
      const run = await schedule.run('admin');
      audit(a.user, 'admin:maintenance', run ? (run.error ? 'FAILED' : 'OK') : 'BUSY');
      const notice: PageOptions['notice'] = run ? [] : [{ kind: 'warn', text: 'A maintenance run is already in progress; its report appears here when it ends.' }];
      page(res, a, '/admin/maintenance', 'Maintenance', maintenancePage(schedule, a.csrf, ctx.valves().uploads_retention_days, run), notice);
    }),
    {
      methods: ['*'],
      path: /^\/admin\/.+$/,
      handler: (_req, res) => sendHtml(res, 404, layout('<p><a href="/admin">Back to the admin page</a></p>', { title: 'Not found' })),
    },
  ];
}

function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://x').pathname.slice(0, 64);
}

function query(req: IncomingMessage): URLSearchParams {
  return new URL(req.url ?? '/', 'http://x').searchParams;
}

/** Messages carried by a redirect after a POST (?done=..., ?error=..., ?saved=...). */
function noticeFromQuery(req: IncomingMessage): PageOptions['notice'] {
  const q = query(req);
  const out: NonNullable<PageOptions['notice']> = [];
  const done = q.get('done');
  const error = q.get('error');
  const saved = q.get('saved');
  if (done) out.push({ kind: 'ok', text: done.slice(0, 300) });
  if (error) out.push({ kind: 'error', text: error.slice(0, 300) });
  if (saved) out.push({ kind: 'ok', text: saved === '-' ? 'Saved (no value changed).' : `Saved: ${saved.slice(0, 300)}. In effect for the next call.` });
  return out;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = header(req.headers, 'content-type') ?? '';
  const body = await readBody(req, FORM_LIMIT);
  if (!/^application\/x-www-form-urlencoded/i.test(type)) return new URLSearchParams();
  return new URLSearchParams(body.toString('utf8'));
}

function sendCss(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'text/css; charset=utf-8', 'Content-Length': Buffer.byteLength(ADMIN_CSS), 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' });
  res.end(ADMIN_CSS);
}
