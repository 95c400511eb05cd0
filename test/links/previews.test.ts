/**
 * Folder pages preview what they serve, checked in headless Chromium at 390 and 1280 px: pictures
 * inline in the listing and on their preview page, a PDF in the browser's viewer, CSV as a table,
 * Markdown rendered, other text with line numbers; no script runs on any of them (the content is
 * escaped, the pages allow no script), and no page scrolls sideways on a phone. Screenshots of
 * every preview are written to $FILESHED_SCREENSHOTS (default: a temp folder) for a human to look at.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleFilesRequest } from '../../src/hosts/http/files/index.js';
import * as D from '../helpers/documents.mjs';
import { CHROMIUM, launchChromium, type Chromium } from '../helpers/chromium.js';
import { makeShed, type Shed } from '../helpers/shed.js';

const haveChromium = fs.existsSync(CHROMIUM);
const SHOTS = process.env.FILESHED_SCREENSHOTS ?? path.join(os.tmpdir(), 'fileshed-previews');

let s: Shed;
let server: http.Server;
let origin: string;
let chromium: Chromium | undefined;
let browser: Browser;
let folder: string;
const ran: string[] = [];

beforeAll(async () => {
  s = makeShed();
  const put = (rel: string, c: string | Buffer) => {
    const p = s.zonePath('storage', `share/${rel}`);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, c);
  };
  put('chart.png', D.makePng(900, 500));
  put('photo.jpg', D.convertImage(1200, 800, 'jpg'));
  put('report.pdf', D.makePdf(['Quarterly report', 'Page two']));
  put('sales.csv', `region,total,note\nNorth,10,"said ""hi"", left"\nSouth,20,<img src=x onerror="fetch('/beacon?csv')">\n${Array.from({ length: 60 }, (_v, i) => `R${i},${i},${'wide '.repeat(12)}`).join('\n')}\n`);
  put('README.md', '# Project\n\nSome **bold** text and a [link](javascript:fetch("/beacon?md")).\n\n<script>fetch("/beacon?md-script")</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n');
  put('app.py', `import os\n\ndef main():\n    print("<script>fetch('/beacon?py')</script>")\n${'# a long comment line that goes on and on and on and on and on and on and on\n'.repeat(5)}`);
  server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0]!;
    if (p.startsWith('/files/')) return void handleFilesRequest(req, res, { storageBase: s.base });
    ran.push(req.url ?? '');
    res.statusCode = 204;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const link = await s.call('shed_link_create', { zone: 'storage', path: 'share' });
  folder = link.data!.url.replace('http://localhost:8765', origin);
  fs.mkdirSync(SHOTS, { recursive: true });
  if (haveChromium) {
    chromium = await launchChromium();
    browser = chromium.browser;
  }
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  s.cleanup();
});

describe('preview responses', () => {
  it('are the server\'s own pages under the no-script CSP (the PDF page may frame this origin only)', async () => {
    for (const file of ['chart.png', 'sales.csv', 'README.md', 'app.py', 'report.pdf']) {
      const res = await fetch(`${folder}${file}?view=1`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain('script-src');
      expect(csp.includes("frame-src 'self'")).toBe(file === 'report.pdf');
    }
    const table = await (await fetch(`${folder}sales.csv?view=1`)).text();
    expect(table).toContain('&lt;img src=x onerror=');
    expect(table).toContain('said &quot;hi&quot;, left');
    const code = await (await fetch(`${folder}app.py?view=1`)).text();
    expect(code).toContain('&lt;script&gt;');
    const pdf = await fetch(`${folder}report.pdf`);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toMatch(/^inline;/);
  });
});

describe.skipIf(!haveChromium)('headless Chromium, 390 and 1280 px', () => {
  for (const width of [390, 1280]) {
    it(`renders the folder page and every preview at ${width} px`, async () => {
      const page = await browser.newPage();
      await page.setViewport({ width, height: 900 });
      const shot = async (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
      const noSideScroll = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

      await page.goto(folder, { waitUntil: 'networkidle0' });
      const thumbs = await page.$$eval('img.thumb', (imgs) => (imgs as HTMLImageElement[]).map((i) => i.naturalWidth));
      expect(thumbs).toHaveLength(2);
      expect(thumbs.every((w) => w > 0)).toBe(true);
      expect(await noSideScroll()).toBe(true);
      await shot('folder');

      await page.goto(`${folder}photo.jpg?view=1`, { waitUntil: 'networkidle0' });
      const img = await page.$eval('figure.preview img', (i) => [(i as HTMLImageElement).naturalWidth, (i as HTMLImageElement).getBoundingClientRect().width]);
      expect(img[0]).toBe(1200);
      expect(img[1]).toBeLessThanOrEqual(width);
      await shot('image');

      await page.goto(`${folder}sales.csv?view=1`, { waitUntil: 'networkidle0' });
      expect(await page.$$eval('table.grid thead th', (th) => th.map((t) => t.textContent))).toEqual(['#', 'region', 'total', 'note']);
      expect(await page.$$eval('table.grid tbody tr', (tr) => tr.length)).toBe(62);
      expect(await page.$eval('table.grid tbody tr:nth-child(2) td:nth-child(4)', (td) => td.textContent)).toBe(`<img src=x onerror="fetch('/beacon?csv')">`);
      expect(await noSideScroll()).toBe(true);
      await shot('csv');

      await page.goto(`${folder}README.md?view=1`, { waitUntil: 'networkidle0' });
      expect(await page.$eval('article h1', (h) => h.textContent)).toBe('Project');
      expect(await page.$$eval('article table td', (td) => td.map((t) => t.textContent))).toEqual(['1', '2']);
      expect(await page.$$eval('script', (sc) => sc.length)).toBe(0);
      await shot('markdown');

      await page.goto(`${folder}app.py?view=1`, { waitUntil: 'networkidle0' });
      expect(await page.$$eval('td.ln', (td) => td.map((t) => t.textContent))).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
      expect(await page.$eval('tr:nth-child(4) td.code', (td) => td.textContent)).toBe(`    print("<script>fetch('/beacon?py')</script>")`);
      expect(await noSideScroll()).toBe(true);
      await shot('text');

      await page.goto(`${folder}report.pdf?view=1`, { waitUntil: 'networkidle0' });
      expect(await page.$eval('iframe.pdf', (f) => (f as HTMLIFrameElement).getAttribute('src'))).toBe('report.pdf');
      await shot('pdf');
      await page.close();
      expect(ran.filter((u) => u.startsWith('/beacon')), 'no script ran on any preview').toEqual([]);
    }, 60_000);
  }
});
