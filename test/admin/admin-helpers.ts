/** Admin page test helpers: forms over real HTTP (cookies, CSRF token and version read from the page). */
import fs from 'node:fs';
import path from 'node:path';

export function cookieOf(res: Response): string | undefined {
  const set = res.headers.getSetCookie().find((c) => c.startsWith('fileshed_admin='));
  return set?.split(';')[0];
}

export function hiddenValue(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no hidden ${name} in page`);
  return m[1]!;
}

export interface AdminSession {
  cookie: string;
  csrf: string;
  page: string;
}

/** Signs in with the API key through the form; returns the session cookie and the settings page. */
export async function signIn(url: string, key: string): Promise<AdminSession> {
  const res = await fetch(`${url}/admin/login`, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: url }, body: new URLSearchParams({ key }) });
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
  const cookie = cookieOf(res)!;
  const page = await (await fetch(`${url}/admin`, { headers: { Cookie: cookie } })).text();
  return { cookie, csrf: hiddenValue(page, '_csrf'), page };
}

export function post(url: string, p: string, s: { cookie?: string }, form: Record<string, string> | URLSearchParams, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}${p}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: url, ...(s.cookie ? { Cookie: s.cookie } : {}), ...headers },
    body: form instanceof URLSearchParams ? form : new URLSearchParams(form),
  });
}

export function configValves(base: string): Record<string, unknown> {
  return (JSON.parse(fs.readFileSync(path.join(base, 'fileshed.json'), 'utf8')) as { valves?: Record<string, unknown> }).valves ?? {};
}

export function auditLines(base: string): { user: string; conversation: string; function: string; code: string; flagged?: boolean }[] {
  const file = path.join(base, 'audit', 'audit.jsonl');
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}
