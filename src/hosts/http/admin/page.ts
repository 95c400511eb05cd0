/**
 * HTML of the admin page: one layout (navigation, banners), escaping, and the answer with the
 * security headers every admin response carries. No framework, no script, no external request:
 * the only other resource is the same-origin stylesheet, so the CSP can be `default-src 'none'`.
 */
import type { ServerResponse } from 'node:http';

export const CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const HEADERS = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on the page's own form posts.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export const SECTIONS = [
  ['/admin', 'Settings'],
  ['/admin/usage', 'Usage'],
  ['/admin/groups', 'Groups'],
  ['/admin/links', 'Links'],
  ['/admin/sandbox', 'Sandbox'],
  ['/admin/audit', 'Audit log'],
  ['/admin/maintenance', 'Maintenance'],
] as const;

export interface PageOptions {
  title: string;
  /** Current section path (highlighted in the navigation); omitted on sign-in and error pages. */
  section?: string;
  /** Who is signed in. */
  user?: string;
  /** The CSRF token of the sign-out form; absent, no sign-out is offered (local mode has no sign-in). */
  signOut?: string;
  /** Banners above the content (saved, errors, warnings). */
  notice?: { kind: 'ok' | 'error' | 'warn'; text: string }[];
}

/** The account part of the header for an admin: sign-out only where signing in exists (not in local mode). */
export function accountOf(admin: { user: string; csrf: string }, auth: readonly string[]): Pick<PageOptions, 'user' | 'signOut'> {
  return auth.includes('local') ? { user: admin.user } : { user: admin.user, signOut: admin.csrf };
}

export function layout(body: string, o: PageOptions): string {
  const nav = o.section === undefined
    ? ''
    : `<nav aria-label="Sections">${SECTIONS
        .map(([p, label]) => `<a href="${p}"${p === o.section ? ' aria-current="page"' : ''}>${esc(label)}</a>`)
        .join('')}</nav>`;
  const account = o.user === undefined
    ? ''
    : o.signOut === undefined
      ? `<span class="account">Local mode (${esc(o.user)}): no sign-in</span>`
      : `<form method="post" action="/admin/logout" class="account"><input type="hidden" name="_csrf" value="${esc(o.signOut)}"><span>${esc(o.user)}</span> <button type="submit">Sign out</button></form>`;
  const notices = (o.notice ?? []).map((n) => `<p class="notice ${n.kind}" role="${n.kind === 'ok' ? 'status' : 'alert'}">${esc(n.text)}</p>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>${esc(o.title)} · Fileshed admin</title>
<link rel="stylesheet" href="/admin/assets/admin.css"></head>
<body><header><strong class="brand">Fileshed admin</strong>${account}</header>${nav}
<main><h1>${esc(o.title)}</h1>${notices}${body}</main></body></html>`;
}

export function sendHtml(res: ServerResponse, status: number, html: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(html), ...HEADERS, ...headers });
  res.end(html);
}

/** Post/redirect/get: a saved form answers 303 so reloading the page does not send it again. */
export function redirect(res: ServerResponse, to: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(303, { Location: to, 'Content-Length': 0, ...HEADERS, ...headers });
  res.end();
}

export function csrfField(token: string): string {
  return `<input type="hidden" name="_csrf" value="${esc(token)}">`;
}

/**
 * A time as people read it, on this server's clock with its zone ("27 Nov 2026, 14:05 CET"); the
 * exact ISO form is the title (shown on hover) and the machine-readable datetime.
 */
export function timeText(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return esc(iso);
  const text = d.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
  return `<time datetime="${esc(d.toISOString())}" title="${esc(d.toISOString())}">${esc(text)}</time>`;
}
