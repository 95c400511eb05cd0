/**
 * Download links are served with the valves in force (blocked_patterns, allowed_extensions), read
 * from the server's config file at every request: a blocked file is 404, hidden from folder pages
 * and left out of folder zips (also under another name: a symbolic or hard link), and a link made
 * before a file became blocked stops working (and works again once the admin lifts the rule).
 * Real `fileshed serve` (dist/cli.mjs) over HTTP on loopback.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, tempBase, type Served } from '../hosts/helpers.js';

const SECRET = `SECRET-${crypto.randomBytes(6).toString('hex')}`;
let served: Served;
let base: string;
const links: Record<string, string> = {};

const call = async (fn: string, body: unknown) => (await (await served.post(fn, body)).json()) as { success: boolean; data?: any; error?: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads fields
const storage = (rel: string) => path.join(base, 'users', 'local', 'Storage', 'data', rel);

/** Sets the valves in the config file the server re-reads (as the admin page does: one atomic replace). */
function setValves(valves: Record<string, unknown>): void {
  const file = path.join(base, 'fileshed.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { valves?: Record<string, unknown> };
  config.valves = { ...config.valves, ...valves };
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(config), { mode: 0o600 });
  fs.renameSync(tmp, file);
}

async function get(url: string): Promise<{ status: number; body: Buffer }> {
  const r = await fetch(url, { redirect: 'manual' });
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
}

beforeAll(async () => {
  base = tempBase();
  served = await serve([], { base });
  for (const [rel, text] of Object.entries({
    'notes.txt': 'hello\n',
    '.env': `TOKEN=${SECRET}\n`,
    'keys/server.pem': `${SECRET}\n`,
    'keys/readme.md': '# keys\n',
    'proj/.git/config': `url=${SECRET}\n`,
    'proj/app.txt': 'code\n',
    'data.bin': 'binary-ish\n',
  })) {
    expect((await call('shed_create_file', { zone: 'storage', path: rel, content: text })).success).toBe(true);
  }
  for (const [name, rel] of Object.entries({ env: '.env', pem: 'keys/server.pem', notes: 'notes.txt', bin: 'data.bin', root: '.', keys: 'keys', proj: 'proj' })) {
    const made = await call('shed_link_create', { zone: 'storage', path: rel });
    expect(made.success, JSON.stringify(made.error)).toBe(true);
    links[name] = made.data.url as string;
  }
  // Other names of the secret, made behind Fileshed's back: a symbolic and a hard link.
  fs.symlinkSync('.env', storage('sym.txt'));
  fs.linkSync(storage('.env'), storage('keys/alias.txt'));
  // Before the rules: everything is served (a control for what follows).
  expect((await get(links.env!)).body.toString()).toContain(SECRET);
  setValves({ blocked_patterns: '.env, *.pem, .git/config', allowed_extensions: 'txt, md' });
});

afterAll(async () => {
  await served.stop();
  fs.rmSync(base, { recursive: true, force: true });
});

describe('links honour blocked_patterns and allowed_extensions', () => {
  it('a file link to a file blocked since it was made stops working (404)', async () => {
    for (const name of ['env', 'pem', 'bin']) {
      const r = await get(links[name]!);
      expect(r.status, name).toBe(404);
      expect(r.body.toString()).not.toContain(SECRET);
    }
    expect((await get(links.notes!)).status).toBe(200);
  });

  it.each(['.env', 'keys/server.pem', 'sym.txt', 'keys/alias.txt', 'proj/.git/config', 'data.bin'])('/files/{folder}/%s is 404', async (rel) => {
    const r = await get(`${links.root}${rel.split('/').map(encodeURIComponent).join('/')}`);
    expect(r.status).toBe(404);
    expect(r.body.toString()).not.toContain(SECRET);
  });

  it('folder pages hide blocked entries (by name, extension, link target and hard link)', async () => {
    const root = (await get(links.root!)).body.toString();
    expect(root).toContain('notes.txt');
    for (const hidden of ['.env', 'sym.txt', 'data.bin']) expect(root).not.toContain(hidden);
    const keys = (await get(links.keys!)).body.toString();
    expect(keys).toContain('readme.md');
    for (const hidden of ['server.pem', 'alias.txt']) expect(keys).not.toContain(hidden);
    const proj = (await get(`${links.proj}.git/`)).body.toString();
    expect(proj).not.toContain('config');
  });

  it('folder zips leave blocked files out', async () => {
    const zip = await get(`${links.root}?zip=1`);
    expect(zip.status).toBe(200);
    expect(zip.body.includes(Buffer.from('notes.txt'))).toBe(true);
    expect(zip.body.includes(Buffer.from('proj/app.txt'))).toBe(true);
    expect(zip.body.includes(Buffer.from(SECRET))).toBe(false);
    for (const name of ['.env', 'server.pem', 'alias.txt', 'sym.txt', 'data.bin', '.git/config']) expect(zip.body.includes(Buffer.from(name)), name).toBe(false);
  });

  it('the rules are read at every request: lifting them serves the file again', async () => {
    setValves({ blocked_patterns: '', allowed_extensions: '' });
    const r = await get(links.env!);
    expect(r.status).toBe(200);
    expect(r.body.toString()).toContain(SECRET);
    setValves({ blocked_patterns: '.env' });
    expect((await get(links.env!)).status).toBe(404);
  });
});
