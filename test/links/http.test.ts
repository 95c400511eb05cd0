/**
 * The /files handler over real HTTP on loopback: bytes, HEAD, ranges, ETag, headers, folder pages
 * and sub-URLs, zip, Markdown view, expiry, revocation, group membership, files that vanish or are
 * swapped for links, and the signing-secret rotation.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adoptSecret, rotateSecret, ROTATION_GRACE_MS } from '../../src/core/services/links/secret.js';
import { groupAdmin } from '../../src/core/services/groups/directory.js';
import { groupShed } from '../groups/setup.js';
import { get, onServer, rawGet, startFilesServer, type FilesServer } from './server.js';

let s: Awaited<ReturnType<typeof groupShed>>;
let server: FilesServer;
let clock: number | undefined;
beforeEach(async () => {
  s = await groupShed();
  clock = undefined;
  server = await startFilesServer({ storageBase: s.base, now: () => clock ?? Date.now() });
});
afterEach(async () => {
  await server.close();
  s.cleanup();
});

function put(rel: string, content: string | Buffer = 'hello', user = 'alice'): string {
  const p = s.zonePath('storage', rel, user);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  return p;
}

async function link(p: string, extra: Record<string, unknown> = {}, user = 'alice'): Promise<string> {
  const r = await s.call('shed_link_create', { zone: 'storage', path: p, ...extra }, { user });
  if (!r.success) throw new Error(JSON.stringify(r.error));
  return onServer(server, r.data!.url);
}

describe('files', () => {
  it('downloads byte-exact with the documented headers; HEAD has headers and no body', async () => {
    const bytes = crypto.randomBytes(300_000);
    put('data/ré sumé "x".bin', bytes);
    const url = await link('data/ré sumé "x".bin');
    const r = await get(url);
    expect(r.status).toBe(200);
    expect(Buffer.from(await r.arrayBuffer()).equals(bytes)).toBe(true);
    expect(r.headers.get('content-type')).toBe('application/octet-stream');
    expect(r.headers.get('content-length')).toBe('300000');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('cache-control')).toContain('private');
    expect(r.headers.get('accept-ranges')).toBe('bytes');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect(r.headers.get('content-disposition')).toBe(`inline; filename="r_ sum_ _x_.bin"; filename*=UTF-8''r%C3%A9%20sum%C3%A9%20%22x%22.bin`);
    const h = await get(url, { method: 'HEAD' });
    expect(h.status).toBe(200);
    expect(h.headers.get('content-length')).toBe('300000');
    expect((await h.arrayBuffer()).byteLength).toBe(0);
    expect((await get(`${url}?download=1`)).headers.get('content-disposition')).toMatch(/^attachment;/);
    expect((await get(url, { method: 'POST' })).status).toBe(405);
  });

  it('several 1 MiB chunks: the whole file and a range across chunk boundaries are byte-exact', async () => {
    const bytes = crypto.randomBytes(3.5 * 1024 * 1024);
    put('big.bin', bytes);
    const url = await link('big.bin');
    expect(Buffer.from(await (await get(url)).arrayBuffer()).equals(bytes)).toBe(true);
    const r = await get(url, { headers: { Range: 'bytes=1000000-2600000' } });
    expect(r.status).toBe(206);
    expect(Buffer.from(await r.arrayBuffer()).equals(bytes.subarray(1000000, 2600001))).toBe(true);
  });

  it('a client that goes away mid-download leaves no open descriptor and the server keeps serving', async () => {
    put('big.bin', crypto.randomBytes(8 * 1024 * 1024));
    const url = await link('big.bin');
    // Descriptors of this process open on the served file (the test is client and server at once).
    const fds = () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`).endsWith(`${path.sep}big.bin`);
        } catch {
          return false;
        }
      }).length;
    const before = fds();
    expect(before).toBe(0);
    for (let i = 0; i < 5; i++) {
      const ac = new AbortController();
      const r = await get(url, { signal: ac.signal });
      const reader = r.body!.getReader();
      await reader.read();
      ac.abort();
      await reader.read().catch(() => undefined);
    }
    for (let i = 0; i < 50 && fds() > before; i++) await new Promise((res) => setTimeout(res, 50));
    expect(fds()).toBeLessThanOrEqual(before);
    expect((await (await get(url)).arrayBuffer()).byteLength).toBe(8 * 1024 * 1024);
  });

  it('Range → 206 with Content-Range, suffix and open ranges; past the end → 416', async () => {
    const bytes = crypto.randomBytes(1000);
    put('r.bin', bytes);
    const url = await link('r.bin');
    const cases: [string, number, number][] = [['bytes=0-9', 0, 9], ['bytes=990-', 990, 999], ['bytes=-5', 995, 999], ['bytes=500-5000', 500, 999]];
    for (const [range, a, b] of cases) {
      const r = await get(url, { headers: { Range: range } });
      expect(r.status, range).toBe(206);
      expect(r.headers.get('content-range')).toBe(`bytes ${a}-${b}/1000`);
      expect(Buffer.from(await r.arrayBuffer()).equals(bytes.subarray(a, b + 1))).toBe(true);
    }
    for (const range of ['bytes=1000-', 'bytes=2000-3000', 'bytes=-0', 'bytes=5-2']) {
      const r = await get(url, { headers: { Range: range } });
      expect(r.status, range).toBe(416);
      expect(r.headers.get('content-range')).toBe('bytes */1000');
      expect(await r.text()).toContain('<h1>416');
    }
    // Malformed or multiple ranges: the whole file (a server may ignore Range).
    expect((await get(url, { headers: { Range: 'bytes=0-1,5-6' } })).status).toBe(200);
  });

  it('ETag + If-None-Match → 304; a changed file gets a new ETag; If-Range with a stale ETag sends everything', async () => {
    const p = put('e.txt', 'one');
    const url = await link('e.txt');
    const first = await get(url);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await get(url, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    fs.writeFileSync(p, 'two!');
    fs.utimesSync(p, new Date(), new Date(Date.now() + 5000));
    const changed = await get(url, { headers: { 'If-None-Match': etag } });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toBe('two!');
    expect((await get(url, { headers: { Range: 'bytes=0-0', 'If-Range': etag } })).status).toBe(200);
  });

  it('content types by name; HTML, SVG and XML only under CSP sandbox; nothing is sniffed', async () => {
    put('p.html', '<script>alert(1)</script>');
    put('i.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    put('d.xml', '<a/>');
    put('t.txt', '<script>alert(1)</script>');
    put('noext', '<html><script>alert(1)</script>');
    const expectations: [string, string, boolean][] = [
      ['p.html', 'text/html; charset=utf-8', true], ['i.svg', 'image/svg+xml; charset=utf-8', true], ['d.xml', 'application/xml; charset=utf-8', true],
      ['t.txt', 'text/plain; charset=utf-8', false], ['noext', 'application/octet-stream', false],
    ];
    for (const [name, type, sandboxed] of expectations) {
      const r = await get(await link(name));
      expect(r.headers.get('content-type'), name).toBe(type);
      expect(r.headers.get('content-security-policy') === 'sandbox', name).toBe(sandboxed);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});

describe('folders', () => {
  beforeEach(() => {
    put('share/a.txt', 'A');
    put('share/big.bin', Buffer.alloc(5000, 1));
    put('share/sub dir/deep.txt', 'DEEP');
    put('share/notes.md', '# Title\n\n<script>alert("x")</script>\n\n[bad](javascript:alert(1)) **bold**\n');
    put('secret.txt', 'OUTSIDE-THE-FOLDER');
  });

  it('lists entries with working sub-URLs, breadcrumbs, sizes, dates; a strict CSP and no script', async () => {
    const url = await link('share');
    expect(url.endsWith('/')).toBe(true);
    const r = await get(url);
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('href="a.txt"');
    expect(html).toContain('href="sub%20dir/"');
    expect(html).toContain('4.9 KiB');
    expect(html).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d/);
    expect(await (await get(new URL('a.txt', url).href)).text()).toBe('A');
    const sub = await get(new URL('sub%20dir/', url).href);
    const subHtml = await sub.text();
    expect(subHtml).toContain('<a href="../">share</a>');
    expect(await (await get(new URL('sub%20dir/deep.txt', url).href)).text()).toBe('DEEP');
    const head = await get(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(html));
    expect(await head.text()).toBe('');
    const zipHead = await get(`${url}?zip=1`, { method: 'HEAD' });
    expect([zipHead.status, zipHead.headers.get('content-type'), await zipHead.text()]).toEqual([200, 'application/zip', '']);
    const post = await get(url, { method: 'POST' });
    expect([post.status, post.headers.get('content-type'), post.headers.get('allow')]).toEqual([405, 'text/html; charset=utf-8', 'GET, HEAD']);
    // Without the trailing slash a folder redirects to it.
    const moved = await get(new URL('sub%20dir', url).href);
    expect(moved.status).toBe(301);
    expect(moved.headers.get('location')).toMatch(/\/sub%20dir\/$/);
  });

  it('sorts by name, size and date', async () => {
    const url = await link('share');
    const order = async (q: string) => [...(await (await get(`${url}?${q}`)).text()).matchAll(/<td class="n"><a href="([^"]+)"/g)].map((m) => m[1]);
    expect(await order('sort=name')).toEqual(['sub%20dir/', 'a.txt', 'big.bin', 'notes.md']);
    expect(await order('sort=size&order=desc')).toEqual(['sub%20dir/', 'big.bin', 'notes.md', 'a.txt']);
    fs.utimesSync(s.zonePath('storage', 'share/a.txt'), new Date(), new Date(Date.now() + 60_000));
    expect((await order('sort=date&order=desc'))[1]).toBe('a.txt');
  });

  it('"download all" streams a zip that unzip -t accepts, with exactly the folder\'s files', async () => {
    const url = await link('share');
    fs.symlinkSync(s.zonePath('storage', 'secret.txt'), s.zonePath('storage', 'share/link-to-secret'));
    const r = await get(`${url}?zip=1`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/zip');
    expect(r.headers.get('content-disposition')).toContain('share.zip');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'links-zip-'));
    const zip = path.join(dir, 'all.zip');
    fs.writeFileSync(zip, Buffer.from(await r.arrayBuffer()));
    expect(execFileSync('unzip', ['-t', zip]).toString()).toContain('No errors detected');
    const names = execFileSync('unzip', ['-Z1', zip]).toString().trim().split('\n').sort();
    expect(names).toEqual(['a.txt', 'big.bin', 'notes.md', 'sub dir/deep.txt']);
    expect(execFileSync('unzip', ['-p', zip, 'sub dir/deep.txt']).toString()).toBe('DEEP');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('Markdown: raw by default, rendered with ?view=1 with HTML escaped and javascript: links dropped', async () => {
    const url = await link('share');
    const raw = await get(`${url}notes.md`);
    expect(raw.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(await raw.text()).toContain('<script>');
    const view = await get(`${url}notes.md?view=1`);
    const html = await view.text();
    expect(view.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(view.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('&lt;script&gt;');
    expect(html).not.toContain('href="javascript:');
  });

  it('a link to the Documents root never reaches its history (it lives outside the zone); a .git folder there is the user\'s data', async () => {
    await s.call('shed_create_file', { zone: 'documents', path: 'doc.md', content: 'D' });
    const r = await s.call('shed_link_create', { zone: 'documents', path: '.' });
    const url = onServer(server, r.data!.url);
    let html = await (await get(url)).text();
    expect(html).toContain('doc.md');
    expect(html).not.toContain('.git');
    for (const p of ['.git/HEAD', '.git/', '../git/HEAD', '%2e%2e/git/HEAD', '..%2fgit/HEAD']) expect((await get(`${url}${p}`)).status, p).toBe(404);
    fs.mkdirSync(s.zonePath('documents', '.git'));
    fs.writeFileSync(s.zonePath('documents', '.git/notes.txt'), 'mine');
    html = await (await get(url)).text();
    expect(html).toContain('.git/');
    expect(await (await get(`${url}.git/notes.txt`)).text()).toBe('mine');
  });
});

describe('lifetime and revocation', () => {
  it('expired → 410 page saying how to get a new link (short expires_hours, then a clock past it)', async () => {
    put('x.txt', 'X');
    const url = await link('x.txt', { expires_hours: 0.0003 });
    expect((await get(url)).status).toBe(200);
    clock = Date.now() + 2000;
    const r = await get(url);
    expect(r.status).toBe(410);
    const text = await r.text();
    expect(text).toContain('expired');
    expect(text).toContain('shed_link_create');
  });

  it('revoked → 410; unknown and tampered tokens → 404 with the same page', async () => {
    put('x.txt', 'X');
    const url = await link('x.txt');
    const id = url.split('/files/')[1]!.split('.')[0]!;
    const flipped = url.slice(0, -1) + (url.endsWith('A') ? 'B' : 'A');
    const other = url.replace(id, crypto.randomBytes(16).toString('base64url'));
    const a = await get(flipped);
    const b = await get(other);
    expect([a.status, b.status]).toEqual([404, 404]);
    expect(await a.text()).toBe(await b.text());
    await s.call('shed_link_delete', { link_id: id });
    expect((await get(url)).status).toBe(410);
  });

  it('a file deleted after creation → 404 page; a folder link whose folder became a file → 404', async () => {
    const p = put('gone.txt', 'G');
    const url = await link('gone.txt');
    fs.unlinkSync(p);
    const r = await get(url);
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    put('d/x.txt');
    const f = await link('d');
    fs.rmSync(s.zonePath('storage', 'd'), { recursive: true });
    put('d', 'now a file');
    expect((await get(f)).status).toBe(404);
  });

  it('a link swapped in after creation that leads outside → 404, nothing served', async () => {
    const outside = path.join(s.base, 'canary-outside.txt');
    fs.writeFileSync(outside, 'CANARY');
    const p = put('swap.txt', 'fine');
    const url = await link('swap.txt');
    put('dir/in.txt', 'in');
    const folder = await link('dir');
    fs.unlinkSync(p);
    fs.symlinkSync(outside, p);
    const r = await get(url);
    expect(r.status).toBe(404);
    expect(await r.text()).not.toContain('CANARY');
    fs.symlinkSync(path.dirname(outside), s.zonePath('storage', 'dir/up'));
    fs.symlinkSync(outside, s.zonePath('storage', 'dir/canary'));
    for (const sub of ['up/canary-outside.txt', 'canary', 'up/']) {
      const res = await get(folder + sub);
      expect(res.status, sub).toBe(404);
      expect(await res.text()).not.toContain('CANARY');
    }
    expect(await (await get(folder)).text()).not.toContain('canary');
    // A link inside the zone but outside the linked folder is refused too.
    fs.symlinkSync(s.zonePath('storage', 'swap.txt'), s.zonePath('storage', 'dir/sibling'));
    put('other.txt', 'OTHER');
    fs.symlinkSync(s.zonePath('storage', 'other.txt'), s.zonePath('storage', 'dir/other'));
    expect((await get(folder + 'other')).status).toBe(404);
  });

  it('group links stop serving when their creator leaves the group', async () => {
    await s.call('shed_create_file', { zone: 'group', group: 'team', path: 'plan.md', content: 'PLAN' });
    const r = await s.call('shed_link_create', { zone: 'group', group: 'team', path: 'plan.md' }, { user: 'bob' });
    const url = onServer(server, r.data!.url);
    expect(await (await get(url)).text()).toBe('PLAN');
    await groupAdmin.removeMember(s.base, 'team', 'bob');
    expect((await get(url)).status).toBe(404);
    await groupAdmin.addMember(s.base, 'team', 'bob');
    expect((await get(url)).status).toBe(200);
    await groupAdmin.remove(s.base, 'team');
    expect((await get(url)).status).toBe(404);
  });

  it('secret rotation: the previous secret works during the grace period, then not; new URLs use the new secret', async () => {
    put('x.txt', 'X');
    const old = await link('x.txt');
    await rotateSecret(s.base);
    expect((await get(old)).status).toBe(200);
    const listed = onServer(server, (await s.call('shed_link_list')).data!.links[0].url);
    expect(listed).not.toBe(old);
    expect((await get(listed)).status).toBe(200);
    await adoptSecret(s.base, 'a server-given secret of enough length', Date.now() + ROTATION_GRACE_MS + 1000);
    // Two rotations later the first secret is gone; the one before the server's is still in grace.
    expect((await get(old)).status).toBe(404);
    expect((await get(listed)).status).toBe(200);
  });
});

describe('subpath attacks', () => {
  let folder: string;
  it('.., %2e%2e, %2f, backslash, NUL, control characters → 404', async () => {
    put('dir/in.txt', 'in');
    put('top.txt', 'TOP');
    folder = await link('dir');
    const bad = ['../top.txt', '%2e%2e/top.txt', '%2E%2E%2Ftop.txt', '..%2ftop.txt', '..%5ctop.txt', 'in.txt%00', '%00', 'in.txt%0a', '.%2e/top.txt', './in.txt', '%2e/in.txt', 'x/../in.txt', '%', '%zz', 'a//in.txt', '..\\top.txt'];
    const prefix = new URL(folder).pathname;
    for (const sub of bad) {
      const r = await rawGet(server.url, prefix + sub);
      expect(r.status, sub).toBe(404);
      expect(r.body.toString()).not.toContain('TOP');
    }
    expect((await rawGet(server.url, `${prefix}in.txt`)).body.toString()).toBe('in');
  });
});
