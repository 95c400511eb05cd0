/**
 * The admin page in a real headless Chromium (Debian `chromium` + puppeteer-core), against
 * `fileshed serve` as a child process: sign in with the API key; every valve of
 * valves.schema.json is on the form by name; an invalid value is rejected at its field with
 * nothing saved; one valve of each type is changed and saved, and its effect is observed through
 * tool calls; after a restart the values are still there; a form posted from another origin is
 * refused and changes nothing; a user-role Open WebUI session is refused; audit entries appear
 * for calls and for the refused attack; "run now" applies Uploads retention and removes nothing
 * else. Screenshots at desktop and phone widths go to /tmp/admin-shots/.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { launchChromium, type Chromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeOpenWebUI, serve, tempBase, type FakeOpenWebUI, type Served } from '../hosts/helpers.js';
import { auditLines, configValves } from './admin-helpers.js';
import { putAged } from '../helpers/aged.js';

const SHOTS = '/tmp/admin-shots';
const KEY = 'fs_browser-admin-key-0123456789';
const schema = JSON.parse(fs.readFileSync(path.resolve('valves.schema.json'), 'utf8')) as { properties: Record<string, { type?: string; enum?: unknown[]; format?: string }> };

let base: string;
let srv: Served;
let owui: FakeOpenWebUI;
let browser: Browser;
let page: Page;
let chromium: Chromium | undefined;

const args = () => ['--auth', 'api-key,openwebui-session', '--api-key', KEY, '--openwebui-url', owui.url, '--allow-unconfined'];
const call = async (fn: string, body: Record<string, unknown>) =>
  (await (await srv.post(fn, body, { Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': 'alice' })).json()) as { success: boolean; data?: Record<string, unknown>; error?: { code: string } };

async function shot(name: string, width: number): Promise<void> {
  await page.setViewport({ width, height: width < 500 ? 844 : 900 });
  await page.screenshot({ path: path.join(SHOTS, `${name}-${width < 500 ? 'phone' : 'desktop'}.png`), fullPage: width < 500 ? false : true });
}

async function signIn(key: string): Promise<number> {
  await page.goto(`${srv.url}/admin`);
  await page.type('#key', key);
  const [nav] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  return nav?.status() ?? 0;
}

async function setValue(name: string, value: string): Promise<void> {
  await page.$eval(`form[action="/admin/valves"] [name="${name}"]:not([type=hidden])`, (el, v) => ((el as HTMLInputElement).value = v), value);
}

async function save(): Promise<number> {
  const [nav] = await Promise.all([page.waitForNavigation(), page.click('button[name=_save]')]);
  return nav?.status() ?? 0;
}

beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  owui = await fakeOpenWebUI();
  owui.tokens.set('tok-user', { id: 'joe', name: 'Joe', role: 'user' });
  base = tempBase();
  srv = await serve(args(), { base });
  chromium = await launchChromium();
  browser = chromium.browser;
  page = await browser.newPage();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await srv?.stop();
  await owui?.close();
  fs.rmSync(base, { recursive: true, force: true });
});

describe('admin page in Chromium', () => {
  it('a user-role Open WebUI session is refused with the 403 page', async () => {
    expect(await signIn('tok-user')).toBe(403);
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Not an admin');
    await shot('forbidden', 390);
  });

  it('signs in with the API key; every valve of valves.schema.json is on the form by name', async () => {
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(`${srv.url}/admin`);
    expect(await page.$('#key')).not.toBeNull();
    await shot('signin', 1280);
    expect(await signIn(KEY)).toBe(200);
    const names = await page.$$eval('form[action="/admin/valves"] [name]', (els) => els.map((e) => (e as HTMLInputElement).name));
    for (const key of Object.keys(schema.properties)) expect(names, key).toContain(key);
    // Types as the schema says: enums are selects, booleans switches, secrets masked and empty.
    for (const [key, p] of Object.entries(schema.properties)) {
      const tag = await page.$eval(`[name="${key}"]:not([type=hidden])`, (e) => `${e.tagName}:${(e as HTMLInputElement).type}:${(e as HTMLInputElement).value}`);
      if (p.enum) expect(tag, key).toMatch(/^SELECT:/);
      else if (p.type === 'boolean') expect(tag, key).toMatch(/^INPUT:checkbox:/);
      else if (p.format === 'password') expect(tag, key).toBe('INPUT:password:');
      else if (p.type === 'integer' || p.type === 'number') expect(tag, key).toMatch(/^INPUT:number:/);
    }
    await shot('settings', 1280);
    await shot('settings', 390);
  });

  it('an invalid value is rejected at its field and nothing is saved', async () => {
    await setValue('quota_per_user_mb', '-1');
    await setValue('max_output_default', '200');
    expect(await save()).toBe(400);
    const error = await page.$eval('#err-quota_per_user_mb', (e) => e.textContent);
    expect(error).toMatch(/>=0.*-1/);
    expect(await page.$eval('[name=quota_per_user_mb]', (e) => e.getAttribute('aria-invalid'))).toBe('true');
    expect(configValves(base)).not.toHaveProperty('max_output_default');
    await page.$eval('[data-valve=quota_per_user_mb]', (e) => e.scrollIntoView());
    await shot('field-error', 390);
  });

  it('one valve of each type is saved and takes effect at the next tool call', async () => {
    await setValue('quota_per_user_mb', '500'); // integer
    await setValue('max_output_default', '200'); // integer (observable in shed_read)
    await page.click('[name=sqlite_readonly][type=checkbox]'); // boolean
    await page.select('[name=sandbox]', 'validated'); // enum
    await setValue('openwebui_api_url', 'http://owui.example:3000'); // string
    await setValue('uploads_retention_days', '30');
    expect(await save()).toBe(200);
    expect(await page.$eval('.notice.ok', (e) => e.textContent)).toContain('quota_per_user_mb');
    expect(configValves(base)).toMatchObject({ quota_per_user_mb: 500, max_output_default: 200, sqlite_readonly: true, sandbox: 'validated', openwebui_api_url: 'http://owui.example:3000', uploads_retention_days: 30 });
    const secrets = Object.entries(schema.properties).filter(([, p]) => p.format === 'password');
    // No admin valve is a secret in this plugin version; were one added, it must render masked (checked above).
    expect(secrets.length).toBeGreaterThanOrEqual(0);

    await call('shed_create_file', { zone: 'storage', path: 'long.txt', content: 'x'.repeat(2000) });
    const read = await call('shed_read', { zone: 'storage', path: 'long.txt' });
    expect(JSON.stringify(read.data).match(/x+/)![0].length).toBeLessThanOrEqual(200);
    const sql = await call('shed_sqlite', { zone: 'storage', path: 'd.db', query: 'CREATE TABLE t (a)' });
    expect(sql.success).toBe(false);
    const cmds = await call('shed_allowed_commands', {});
    expect(cmds.data!.sandbox).toMatchObject({ active: 'validated', unconfined: true }); // allowed: this server runs with --allow-unconfined
    await page.goto(`${srv.url}/admin/sandbox`);
    expect(await page.$eval('main', (e) => e.textContent)).toContain('validated (UNCONFINED)');
    await page.goto(`${srv.url}/admin`);
    const params = await call('shed_parameters', {});
    expect(params.data).toMatchObject({ quota_per_user_mb: 500, openwebui_api_url: 'http://owui.example:3000', sqlite_readonly: true });
  });

  it('a form posted from another origin is refused and changes nothing; the refusal is audited', async () => {
    const before = fs.readFileSync(path.join(base, 'fileshed.json'), 'utf8');
    const attacker = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<form id=f method=post action="${srv.url}/admin/valves"><input name=quota_per_user_mb value=1><input name=_csrf value=guess></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
    try {
      const evil = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
      const nav = page.waitForNavigation({ waitUntil: 'load' });
      await page.goto(evil);
      const res = await nav;
      expect(res?.url()).toBe(`${srv.url}/admin/valves`);
      expect(res?.status()).toBe(403);
      expect(await page.$eval('main', (m) => m.textContent)).toContain('another');
      await shot('csrf-refused', 1280);
    } finally {
      attacker.close();
    }
    expect(fs.readFileSync(path.join(base, 'fileshed.json'), 'utf8')).toBe(before);
    const audit = auditLines(base);
    expect(audit.some((e) => e.code === 'CSRF_REFUSED' && e.flagged)).toBe(true);
    expect(audit.some((e) => e.user === 'alice' && e.function === 'shed_read' && e.code === 'OK')).toBe(true);
    await page.goto(`${srv.url}/admin/audit?flagged=1`);
    expect(await page.$eval('tbody', (t) => t.textContent)).toContain('CSRF_REFUSED');
    await page.goto(`${srv.url}/admin/audit`);
    await shot('audit', 1280);
    await shot('audit', 390);
  });

  it('run now: Uploads retention removes old conversation folders and nothing else', async () => {
    const home = path.join(base, 'users', 'alice');
    const put = (rel: string, days: number) => putAged(home, rel, days);
    put('Uploads/old-chat/a.csv', 45);
    put('Uploads/recent-chat/b.csv', 3);
    put('Storage/data/old.txt', 400);
    await page.goto(`${srv.url}/admin/maintenance`);
    await Promise.all([page.waitForNavigation(), page.click('form[action="/admin/maintenance"] button')]);
    expect(await page.$eval('#maintenance-summary', (e) => e.textContent)).toMatch(/^\d+ users? and \d+ groups? checked; [1-9]\d* items? cleaned/);
    expect(await page.$eval('.report', (e) => e.textContent)).toContain('Uploads/old-chat');
    expect(fs.existsSync(path.join(home, 'Uploads/old-chat'))).toBe(false);
    for (const kept of ['Uploads/recent-chat/b.csv', 'Storage/data/old.txt', 'Storage/data/long.txt']) expect(fs.existsSync(path.join(home, kept)), kept).toBe(true);
    await shot('maintenance', 1280);
    await page.goto(`${srv.url}/admin/usage`);
    expect(await page.$eval('tbody', (t) => t.textContent)).toContain('alice');
    await shot('usage', 1280);
    await shot('usage', 390);
    await page.goto(`${srv.url}/admin/sandbox`);
    await shot('sandbox', 1280);
    await page.goto(`${srv.url}/admin/groups`);
    await shot('groups', 390);
  });

  it('after a restart the saved values are still there (form and tool calls)', async () => {
    await srv.stop();
    srv = await serve(args(), { base });
    expect(await signIn(KEY)).toBe(200);
    expect(await page.$eval('[name=quota_per_user_mb]', (e) => (e as HTMLInputElement).value)).toBe('500');
    expect(await page.$eval('[name=sqlite_readonly][type=checkbox]', (e) => (e as HTMLInputElement).checked)).toBe(true);
    expect(await page.$eval('[name=sandbox]', (e) => (e as HTMLSelectElement).value)).toBe('validated');
    expect(await page.$eval('[name=openwebui_api_url]', (e) => (e as HTMLInputElement).value)).toBe('http://owui.example:3000');
    const params = await call('shed_parameters', {});
    expect(params.data).toMatchObject({ quota_per_user_mb: 500, sqlite_readonly: true });
  });
});
