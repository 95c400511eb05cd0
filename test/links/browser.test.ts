/**
 * Headless Chromium against the /files handler: a folder page opens, navigation follows its
 * sub-URLs, a file and the "download all" zip download; an uploaded HTML file's script cannot run,
 * and even code evaluated in that page cannot read the server's cookies or another page of its
 * origin (CSP sandbox gives it an opaque origin). A control page without the sandbox, served by the
 * same origin, does read both: the test can fail.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleFilesRequest } from '../../src/hosts/http/files/index.js';
import type { Browser } from 'puppeteer-core';
import { CHROMIUM, launchChromium, type Chromium } from '../helpers/chromium.js';
import { makeShed, type Shed } from '../helpers/shed.js';

const haveChromium = fs.existsSync(CHROMIUM);
if (!haveChromium) console.warn(`browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);

const EVIL = `<!doctype html><title>evil</title><body><p id="p">static</p><script>
document.body.dataset.ran = '1';
new Image().src = '/beacon?cookie=' + encodeURIComponent(document.cookie);
fetch('/admin').then(r => r.text()).then(t => { new Image().src = '/beacon?admin=' + encodeURIComponent(t.slice(0, 80)); });
</script></body>`;

let s: Shed;
let server: http.Server;
let origin: string;
const beacons: string[] = [];
let chromium: Chromium | undefined;
let downloads: string;
let browser: Browser;

beforeAll(async () => {
  if (!haveChromium) return;
  s = makeShed();
  const put = (rel: string, c: string | Buffer) => {
    const p = s.zonePath('storage', rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, c);
  };
  put('share/hello.txt', 'HELLO from Fileshed');
  put('share/sub/deep.txt', 'DEEP');
  put('share/evil.html', EVIL);
  put('share/evil.svg', `<svg xmlns="http://www.w3.org/2000/svg"><script>new Image().src='/beacon?svg='+document.cookie</script></svg>`);
  server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0]!;
    if (p.startsWith('/files/')) return void handleFilesRequest(req, res, { storageBase: s.base });
    if (p === '/beacon') {
      beacons.push(req.url!);
      res.statusCode = 204;
      return res.end();
    }
    // Stand-ins for the server's own pages: an admin page that sets a session cookie, and a
    // control page that runs the same script with no sandbox.
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (p === '/control.html') return res.end(EVIL);
    res.setHeader('Set-Cookie', 'fileshed_admin=secret-session; Path=/');
    res.end('<!doctype html><title>admin</title><p>ADMIN-SECRET-CONTENT</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'links-dl-'));
  chromium = await launchChromium();
  browser = chromium.browser;
}, 60_000);

afterAll(async () => {
  if (!haveChromium) return;
  await chromium?.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  s.cleanup();
  fs.rmSync(downloads, { recursive: true, force: true });
});

async function folderUrl(): Promise<string> {
  const r = await s.call('shed_link_create', { zone: 'storage', path: 'share' });
  return r.data!.url.replace('http://localhost:8765', origin);
}

async function waitForFile(dir: string, name: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const p = path.join(dir, name);
    if (fs.existsSync(p) && !fs.readdirSync(dir).some((f) => f.endsWith('.crdownload'))) return p;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no download ${name}: ${fs.readdirSync(dir).join(', ')}`);
}

describe.skipIf(!haveChromium)('headless Chromium', () => {
  it('opens a folder page, navigates into a sub-folder and back, downloads a file and the zip', async () => {
    const page = await browser.newPage();
    const cdp = await page.createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });
    const url = await folderUrl();
    await page.goto(url);
    expect(await page.$eval('h1', (e: Element) => e.textContent)).toBe('share');
    const names = await page.$$eval('td.n a', (as: Element[]) => as.map((a) => a.textContent));
    expect(names).toEqual(expect.arrayContaining(['📁 sub/', 'hello.txt', 'evil.html']));
    // The listing fits a phone: no horizontal scrolling at 360 px.
    await page.setViewport({ width: 360, height: 640 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await Promise.all([page.waitForNavigation(), page.click('a[href="sub/"]')]);
    expect(page.url()).toBe(`${url}sub/`);
    expect(await page.$$eval('td.n a', (as: Element[]) => as.map((a) => a.textContent))).toEqual(['deep.txt']);
    await Promise.all([page.waitForNavigation(), page.click('nav.crumbs a')]);
    expect(page.url()).toBe(url);
    // A file opens inline; with ?download=1 the browser saves it.
    await page.goto(`${url}hello.txt`);
    expect(await page.evaluate(() => document.body.innerText)).toBe('HELLO from Fileshed');
    await page.goto(url);
    await page.evaluate(() => {
      const a = document.createElement('a');
      a.href = 'hello.txt?download=1';
      document.body.append(a);
      a.click();
    });
    expect(fs.readFileSync(await waitForFile(downloads, 'hello.txt'), 'utf8')).toBe('HELLO from Fileshed');
    await page.click('a[href="?zip=1"]');
    const zip = await waitForFile(downloads, 'share.zip');
    expect(execFileSync('unzip', ['-t', zip]).toString()).toContain('No errors detected');
    await page.close();
  });

  it('an uploaded HTML file cannot run script, read the server\'s cookies or fetch another page of its origin', async () => {
    const page = await browser.newPage();
    await page.goto(`${origin}/admin`); // the admin page sets its session cookie for the origin
    expect((await page.cookies()).map((c: { name: string }) => c.name)).toContain('fileshed_admin');

    // Control: the same markup from a page of the origin without the sandbox reads both.
    beacons.length = 0;
    await page.goto(`${origin}/control.html`);
    await page.waitForFunction(() => document.body.dataset.ran === '1');
    await new Promise((r) => setTimeout(r, 500));
    expect(beacons.some((b) => b.includes('secret-session'))).toBe(true);
    expect(beacons.some((b) => b.includes('ADMIN-SECRET'))).toBe(true);

    beacons.length = 0;
    const url = await folderUrl();
    for (const file of ['evil.html', 'evil.svg']) {
      const res = await page.goto(`${url}${file}`);
      expect(res!.headers()['content-security-policy']).toBe('sandbox');
      await new Promise((r) => setTimeout(r, 500));
    }
    await page.goto(`${url}evil.html`);
    expect(await page.evaluate(() => document.body.dataset.ran ?? 'not run')).toBe('not run');
    expect(await page.$eval('#p', (e: Element) => e.textContent)).toBe('static');
    // Even code that does run in this document (DevTools evaluation) has an opaque origin.
    const probe = await page.evaluate(async () => {
      let cookie: string;
      try {
        cookie = document.cookie;
      } catch (e) {
        cookie = `blocked: ${(e as Error).name}`;
      }
      let admin: string;
      try {
        admin = await (await fetch('/admin')).text();
      } catch (e) {
        admin = `blocked: ${(e as Error).name}`;
      }
      return { origin: window.origin, cookie, admin };
    });
    console.log('sandboxed page probe', JSON.stringify(probe));
    expect(probe.origin).toBe('null');
    expect(probe.cookie).toMatch(/^blocked: SecurityError$|^$/);
    expect(probe.admin).toMatch(/^blocked:/);
    expect(beacons).toEqual([]);
    await page.close();
  });
});
