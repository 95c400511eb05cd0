/**
 * What a newcomer hit on the admin page (issue 32, the last list), in headless Chromium against
 * `fileshed serve` child processes:
 * - saving the form untouched wrote public_url (a value derived from the listening address, which
 *   the admin never typed) into the config file, pinning it for good;
 * - the Sandbox page said nothing of code execution (allow_python, allow_shell and their state);
 * - a wrong Open WebUI URL in session mode locked the admin out of the page that edits it: the
 *   sign-in page now says which address failed, where it was set and how to fix it without the page,
 *   and the fix (the config file edited by hand, or the API key) lets the admin in without a restart.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type Chromium } from '../helpers/chromium.js';
import { fakeOpenWebUI, serve, tempBase, type FakeOpenWebUI, type Served } from '../hosts/helpers.js';
import { configValves } from './admin-helpers.js';

const KEY = 'fs_newcomer-admin-key-0123456789';
/** A loopback port nothing listens on (the discard service): connections are refused at once. */
const NOBODY = 'http://127.0.0.1:9';

let owui: FakeOpenWebUI;
let chromium: Chromium;
let page: Page;
const servers: Served[] = [];

async function start(args: string[], config?: Record<string, unknown>): Promise<Served> {
  const base = tempBase();
  if (config) fs.writeFileSync(path.join(base, 'fileshed.json'), JSON.stringify(config), { mode: 0o600 });
  const srv = await serve(args, { base });
  servers.push(srv);
  return srv;
}

/** Types a key or token into the sign-in form; the status of the page it leads to. */
async function signIn(srv: Served, secret: string): Promise<number> {
  await page.goto(`${srv.url}/admin`);
  await page.type('#key', secret);
  const [nav] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  return nav?.status() ?? 0;
}

async function signOut(srv: Served): Promise<void> {
  await page.deleteCookie(...(await page.cookies(srv.url)));
}

beforeAll(async () => {
  owui = await fakeOpenWebUI();
  owui.tokens.set('tok-admin', { id: 'boss', name: 'Boss', role: 'admin' });
  chromium = await launchChromium();
  page = await chromium.browser.newPage();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  for (const s of servers) {
    await s.stop();
    fs.rmSync(s.base, { recursive: true, force: true });
  }
  await owui?.close();
});

describe('settings form', () => {
  it('saving the form untouched writes nothing the admin did not type: public_url stays unset and links keep following the address', async () => {
    const srv = await start(['--auth', 'api-key', '--api-key', KEY]);
    expect(await signIn(srv, KEY)).toBe(200);
    const shown = await page.$eval('[name=public_url]', (e) => (e as HTMLInputElement).value);
    expect(shown).toBe(srv.url); // what links use now: the listening address, not the plugin default
    const note = await page.$eval('[data-valve=public_url]', (e) => e.textContent ?? '');
    expect(note).toContain(`Not set: links use ${srv.url}`);
    const [nav] = await Promise.all([page.waitForNavigation(), page.click('button[name=_save]')]);
    expect(nav?.status()).toBe(200);
    expect(configValves(srv.base)).not.toHaveProperty('public_url');
    // A value the admin does type is stored.
    await page.$eval('[name=public_url]', (e) => ((e as HTMLInputElement).value = 'https://files.example.com'));
    await Promise.all([page.waitForNavigation(), page.click('button[name=_save]')]);
    expect(configValves(srv.base).public_url).toBe('https://files.example.com');
    await signOut(srv);
  });
});

describe('sandbox page', () => {
  it('shows code execution: each valve, off by default, then on with the Python it runs', async () => {
    const srv = await start(['--auth', 'api-key', '--api-key', KEY]);
    expect(await signIn(srv, KEY)).toBe(200);
    await page.goto(`${srv.url}/admin/sandbox`);
    const off = await page.$eval('#code-execution', (e) => e.textContent ?? '');
    expect(off).toContain('Python (shed_run_python, valve allow_python): off');
    expect(off).toContain('Shell scripts (shed_run_shell, valve allow_shell): off');
    expect(off).toContain('Linux 6.12+');
    await page.goto(`${srv.url}/admin`);
    await page.$eval('input[type=checkbox][name=allow_python]', (e) => ((e as HTMLInputElement).checked = true));
    await Promise.all([page.waitForNavigation(), page.click('button[name=_save]')]);
    expect(configValves(srv.base).allow_python).toBe(true);
    await page.goto(`${srv.url}/admin/sandbox`);
    const on = await page.$eval('#code-execution', (e) => e.textContent ?? '');
    expect(on).toMatch(/valve allow_python\): on · python3 3\.\d+\.\d+/);
    expect(on).toContain('valve allow_shell): off');
    await signOut(srv);
  });
});

describe('a wrong Open WebUI URL in session mode', () => {
  it('the URL saved in the config file: the sign-in page names it and the file; editing the file by hand lets the admin in, no restart', async () => {
    const srv = await start(['--auth', 'openwebui-session', '--openwebui-url', owui.url], { valves: { openwebui_api_url: NOBODY } });
    expect(await signIn(srv, 'tok-admin')).toBe(401);
    const help = await page.$eval('#openwebui-help', (e) => e.textContent ?? '');
    expect(help).toContain(`asks Open WebUI at ${NOBODY} who a token belongs to`);
    expect(help).toContain(`the valve openwebui_api_url in ${path.join(srv.base, 'fileshed.json')}`);
    expect(help).toContain('The server reads the file again at the next request: no restart needed.');
    expect(help).toContain('restart the server with --auth api-key,openwebui-session');
    expect(await page.$eval('.notice.error', (e) => e.textContent ?? '')).toContain(`Open WebUI at ${NOBODY} is unreachable`);
    // The fix the page gives, done by hand: the valve removed, --openwebui-url applies again.
    const file = path.join(srv.base, 'fileshed.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { valves: Record<string, unknown> };
    delete config.valves.openwebui_api_url;
    fs.writeFileSync(file, JSON.stringify(config));
    expect(await signIn(srv, 'tok-admin')).toBe(200);
    expect(await page.$('form[action="/admin/valves"]')).not.toBeNull();
    await signOut(srv);
  });

  it('the --openwebui-url flag wrong: the page says to restart with the right one; a server with an API key still lets the admin in with it', async () => {
    const srv = await start(['--auth', 'api-key,openwebui-session', '--api-key', KEY, '--openwebui-url', NOBODY]);
    expect(await signIn(srv, 'tok-admin')).toBe(401);
    const help = await page.$eval('#openwebui-help', (e) => e.textContent ?? '');
    expect(help).toContain('that address was set by --openwebui-url');
    expect(help).toContain('Restart the server with --openwebui-url URL (or FILESHED_OPENWEBUI_URL=URL)');
    expect(help).toContain("Or sign in with the server's API key instead");
    expect(help).not.toContain(KEY);
    expect(await signIn(srv, KEY)).toBe(200);
    await signOut(srv);
  });

  it('an address that answers but is not Open WebUI (404): said so, not "try again later"', async () => {
    const srv = await start(['--auth', 'openwebui-session', '--openwebui-url', `${owui.url}/not-here`]);
    owui.tokens.set('tok-admin', { id: 'boss', name: 'Boss', role: 'admin' });
    expect(await signIn(srv, 'tok-admin')).toBe(401);
    const error = await page.$eval('.notice.error', (e) => e.textContent ?? '');
    expect(error).not.toContain('try again later');
    expect(error).toContain(`${owui.url}/not-here answered 404 to GET /api/v1/auths/: it does not look like Open WebUI's address`);
  });
});
