/**
 * Folder pages show pictures as thumbnails made for them, not as the photos themselves shrunk by the
 * browser (issue 32: a page of photos downloaded every photo whole to draw 40 px images). Checked in
 * headless Chromium on the network: the page's images are `?thumb=1` answers of at most 80 px and a
 * few KiB, the photos themselves are never fetched by the page, and the entry's link still downloads
 * the real file. A file that only claims to be a picture gets a 404 thumbnail and changes nothing.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleFilesRequest } from '../../src/hosts/http/files/index.js';
import * as D from '../helpers/documents.mjs';
import { CHROMIUM, launchChromium, type Chromium } from '../helpers/chromium.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { thumbnailsMade } from '../../src/core/services/links/thumbnail.js';

const haveChromium = fs.existsSync(CHROMIUM);
let s: Shed;
let server: http.Server;
let folder: string;
let chromium: Chromium | undefined;
const photoBytes: Record<string, number> = {};

beforeAll(async () => {
  s = makeShed();
  const put = (rel: string, c: string | Buffer) => {
    const p = s.zonePath('storage', `photos/${rel}`);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, c);
    photoBytes[rel] = Buffer.byteLength(c);
  };
  put('beach.jpg', D.convertImage(3000, 2000, 'jpg'));
  put('chart.png', D.makePng(1600, 900));
  put('fake.png', 'not a picture at all');
  put('bomb.png', D.pngHeaderOnly(60_000, 60_000));
  put('notes.txt', 'hello');
  server = http.createServer((req, res) => void handleFilesRequest(req, res, { storageBase: s.base }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const link = await s.call('shed_link_create', { zone: 'storage', path: 'photos' });
  folder = link.data!.url.replace('http://localhost:8765', origin);
  if (haveChromium) chromium = await launchChromium();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  s.cleanup();
});

describe('thumbnails', () => {
  it('?thumb=1 answers a small image of the picture; the file itself is untouched by it', async () => {
    const res = await fetch(`${folder}beach.jpg?thumb=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBeLessThan(20 * 1024);
    expect(photoBytes['beach.jpg']!).toBeGreaterThan(bytes.length * 5);
    const png = await fetch(`${folder}chart.png?thumb=1`);
    const made = thumbnailsMade();
    expect(png.headers.get('content-type')).toBe('image/png');
    const head = Buffer.from(await png.arrayBuffer());
    expect([head.readUInt32BE(16), head.readUInt32BE(20)]).toEqual([80, 45]);
    expect((await fetch(`${folder}fake.png?thumb=1`)).status).toBe(404);
    // A header declaring 3.6 gigapixels is refused before any decoder sees it.
    const started = Date.now();
    expect((await fetch(`${folder}bomb.png?thumb=1`)).status).toBe(404);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await fetch(`${folder}notes.txt?thumb=1`)).status).toBe(404);
    // Made once: a second ask is answered from memory, and a changed file gets a new thumbnail.
    const again = Buffer.from(await (await fetch(`${folder}chart.png?thumb=1`)).arrayBuffer());
    expect(again.equals(head)).toBe(true);
    expect(thumbnailsMade()).toBe(made);
    fs.writeFileSync(s.zonePath('storage', 'photos/chart.png'), D.makePng(900, 900));
    const changed = Buffer.from(await (await fetch(`${folder}chart.png?thumb=1`)).arrayBuffer());
    expect([changed.readUInt32BE(16), changed.readUInt32BE(20)]).toEqual([80, 80]);
    fs.writeFileSync(s.zonePath('storage', 'photos/chart.png'), D.makePng(1600, 900));
    const real = await fetch(`${folder}beach.jpg`);
    expect(Buffer.from(await real.arrayBuffer()).length).toBe(photoBytes['beach.jpg']);
  });

  it.skipIf(!haveChromium)('in Chromium the folder page fetches thumbnails only, and the entry link downloads the real photo', async () => {
    const page = await chromium!.browser.newPage();
    const fetched: Array<{ url: string; bytes: number }> = [];
    page.on('response', (r) => {
      void r.buffer().then(
        (b) => fetched.push({ url: r.url(), bytes: b.length }),
        () => fetched.push({ url: r.url(), bytes: -1 }),
      );
    });
    await page.goto(folder, { waitUntil: 'networkidle0' });
    const thumbs = await page.$$eval('img.thumb', (imgs) => (imgs as HTMLImageElement[]).map((i) => ({ src: i.getAttribute('src'), w: i.naturalWidth, h: i.naturalHeight })));
    expect(thumbs.map((t) => t.src).sort()).toEqual(['beach.jpg?thumb=1', 'bomb.png?thumb=1', 'chart.png?thumb=1', 'fake.png?thumb=1']);
    const beach = thumbs.find((t) => t.src === 'beach.jpg?thumb=1')!;
    expect(Math.max(beach.w, beach.h)).toBe(80);
    await new Promise((r) => setTimeout(r, 200)); // response bodies are read asynchronously
    const images = fetched.filter((f) => /\.(jpg|png)/.test(f.url));
    expect(images.length).toBeGreaterThan(0);
    for (const f of images) expect(f.url, 'the page fetched a picture itself').toMatch(/\?thumb=1$/);
    expect(images.reduce((n, f) => n + Math.max(0, f.bytes), 0)).toBeLessThan(40 * 1024);
    // The entry's link is the file: following it gives the photo at full size.
    const href = await page.$eval('a[href="beach.jpg"]', (a) => (a as HTMLAnchorElement).href);
    const [nav] = await Promise.all([page.waitForNavigation(), page.click('a[href="beach.jpg"]')]);
    expect(nav?.url()).toBe(href);
    const size = await page.evaluate(() => {
      const img = document.querySelector('img');
      return img ? [img.naturalWidth, img.naturalHeight] : [0, 0];
    });
    expect(size).toEqual([3000, 2000]);
    await page.close();
  });
});
