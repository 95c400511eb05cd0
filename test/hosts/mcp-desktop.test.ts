/**
 * `fileshed mcp` for a desktop user, through the official MCP SDK client over stdio (a real child
 * process): files come in from the folder the user names (--import-dir) and nothing else, and
 * download links are served on loopback by the same process, started only once a link is asked for.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, tempBase } from './helpers.js';

type Envelope = { success: boolean; data?: Record<string, any>; message?: string; error?: { code: string; message: string; hint?: string } }; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary fields

interface Desktop {
  client: Client;
  base: string;
  stderr(): string;
  call(name: string, args: Record<string, unknown>): Promise<Envelope>;
}

/** `fileshed mcp` under the SDK client; `base: null` leaves --base out (the default data folder). */
async function desktop(extra: string[], opts: { base?: string | null; env?: Record<string, string>; cwd?: string } = {}): Promise<Desktop> {
  const base = opts.base === undefined ? tempBase() : (opts.base ?? '');
  const args = [CLI, 'mcp', ...(opts.base === null ? [] : ['--base', base]), ...extra];
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe', ...(opts.env ? { env: opts.env } : {}), ...(opts.cwd ? { cwd: opts.cwd } : {}) });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'desktop-test', version: '1' });
  await client.connect(transport);
  return {
    client,
    base,
    stderr: () => err,
    call: async (name, args) => (await client.callTool({ name, arguments: args })).structuredContent as Envelope,
  };
}

/** A GET with a chosen Host header (fetch does not let a caller set it). */
function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: host ? { Host: host } : {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
const secret = path.join(outside, 'secret.txt');
fs.writeFileSync(secret, 'SECRET-OUTSIDE');

describe('--import-dir: the folder the user names is the way in', () => {
  let d: Desktop;
  let inbox: string;
  beforeAll(async () => {
    inbox = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-inbox-'));
    fs.writeFileSync(path.join(inbox, 'report.csv'), 'a,b\n1,2\n');
    fs.writeFileSync(path.join(inbox, 'notes.txt'), 'notes');
    fs.symlinkSync(secret, path.join(inbox, 'leak.txt')); // a link leading outside
    fs.mkdirSync(path.join(inbox, 'sub'));
    fs.writeFileSync(path.join(inbox, 'sub', 'deep.txt'), 'deep');
    d = await desktop(['--user', 'desk', '--import-dir', inbox]);
  });
  afterAll(async () => {
    await d.client.close();
  });

  it('imports the regular files of the folder into Uploads, byte for byte', async () => {
    const r = await d.call('shed_import', { import_all: true });
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(r.data!.imported.map((f: { name: string }) => f.name).sort()).toEqual(['notes.txt', 'report.csv']);
    const uploads = path.join(d.base, 'users', 'desk', 'Uploads');
    const [conv] = fs.readdirSync(uploads);
    expect(fs.readFileSync(path.join(uploads, conv!, 'report.csv'), 'utf8')).toBe('a,b\n1,2\n');
    expect(fs.existsSync(path.join(inbox, 'report.csv'))).toBe(true); // copied, not taken
  });

  it('offers nothing else: not a link leading outside, not a subfolder, not a path the model names', async () => {
    const link = await d.call('shed_import', { filename: 'leak.txt' });
    expect(link.error?.code).toBe('FILE_NOT_FOUND');
    expect(link.error?.message).toMatch(/'leak\.txt' is not offered for import: a symbolic link/);
    expect(await d.call('shed_import', { filename: secret })).toMatchObject({ success: false, error: { code: 'FILE_NOT_FOUND' } });
    // Host arguments in the call are dropped: the model cannot attach a path of its own.
    const injected = await d.call('shed_import', { import_all: true, __files__: [secret], __metadata__: { files: [secret] } });
    expect(JSON.stringify(injected)).not.toContain('secret.txt');
    const all = fs.readdirSync(path.join(d.base, 'users', 'desk', 'Uploads'), { recursive: true }).map(String);
    expect(all.some((f) => f.includes('secret') || f.includes('leak') || f.includes('deep'))).toBe(false);
  });

  it('says what it did not offer, and why: links and subfolders', async () => {
    const r = await d.call('shed_import', { import_all: true });
    expect(r.success).toBe(true);
    expect(r.data!.not_offered).toEqual([
      { name: 'leak.txt', reason: expect.stringMatching(/^a symbolic link: links in the import folder are never followed/) },
      { name: 'sub/', reason: expect.stringMatching(/^a folder: only the files directly in the import folder are offered/) },
    ]);
    expect(r.message).toMatch(/Not offered: leak\.txt \(a symbolic link.*sub\/ \(a folder/);
    const folder = await d.call('shed_import', { filename: 'sub' });
    expect(folder.error?.message).toMatch(/'sub' is not offered for import: a folder/);
  });

  it('a file replaced by a link leading outside is no longer offered', async () => {
    fs.rmSync(path.join(inbox, 'notes.txt'));
    fs.symlinkSync(secret, path.join(inbox, 'notes.txt'));
    const r = await d.call('shed_import', { filename: 'notes.txt' });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r)).not.toContain('SECRET-OUTSIDE');
  });
});

describe('no --import-dir', () => {
  it('says how to give files instead of asking for a chat attachment', async () => {
    const d = await desktop([]);
    try {
      const r = await d.call('shed_import', { import_all: true });
      expect(r.error?.code).toBe('FILE_NOT_FOUND');
      expect(r.error?.hint).toContain('--import-dir');
    } finally {
      await d.client.close();
    }
  });
});

describe('download links are served by the stdio process itself', () => {
  let d: Desktop;
  beforeAll(async () => {
    d = await desktop([]);
  });
  afterAll(async () => {
    await d.client.close();
  });

  it('listens only once a link is asked for, on loopback, and the link downloads the file', async () => {
    expect(await d.call('shed_create_file', { zone: 'storage', path: 'out/result.md', content: '# Result\n' })).toMatchObject({ success: true });
    expect(d.stderr()).not.toContain('download links served');
    const link = await d.call('shed_link_create', { zone: 'storage', path: 'out/result.md' });
    expect(link.success, JSON.stringify(link)).toBe(true);
    const url = new URL(link.data!.url as string);
    expect(url.hostname).toBe('127.0.0.1');
    expect(d.stderr()).toContain(`download links served at ${url.origin}/files/`);
    const got = await get(url.href);
    expect(got).toEqual({ status: 200, body: '# Result\n' });
    const listed = await d.call('shed_link_list', {});
    expect(listed.data!.links[0].url).toBe(url.href);
  });

  it('answers download links and nothing else (no functions, no admin page, no other Host)', async () => {
    const link = await d.call('shed_link_create', { zone: 'storage', path: 'out' });
    const url = new URL(link.data!.url as string);
    expect((await get(`${url.origin}/admin`)).status).toBe(404);
    expect((await get(`${url.origin}/shed_read`)).status).toBe(404);
    expect((await get(`${url.origin}/files/not-a-token`)).status).toBe(404);
    expect((await get(url.href, 'evil.example:80')).status).toBe(403); // DNS rebinding
    const revoked = await d.call('shed_link_delete', { link_id: link.data!.link_id });
    expect(revoked.success).toBe(true);
    expect((await get(url.href)).status).toBe(410);
  });
});

describe('a public_url set in the valves', () => {
  it('is used for links, and no listener is started', async () => {
    const d = await desktop(['--valve', 'public_url=http://files.example.test:8765']);
    try {
      await d.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a' });
      const link = await d.call('shed_link_create', { zone: 'storage', path: 'a.txt' });
      expect(link.data!.url).toMatch(/^http:\/\/files\.example\.test:8765\/files\//);
      expect(d.stderr()).not.toContain('download links served');
    } finally {
      await d.client.close();
    }
  });
});

describe('where the files live, and failures the client shows', () => {
  it('without --base: the per-user data folder (said on stderr), never the folder the client started it in', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-home-'));
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-cwd-'));
    const env = { PATH: process.env.PATH ?? '', HOME: home };
    const d = await desktop([], { base: null, env, cwd });
    try {
      expect((await d.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'A' })).success).toBe(true);
      const data = path.join(home, '.local', 'share', 'fileshed');
      expect(fs.readFileSync(path.join(data, 'users', 'local', 'Storage', 'data', 'a.txt'), 'utf8')).toBe('A');
      expect(fs.readdirSync(cwd)).toEqual([]);
      expect(d.stderr()).toContain(`files of user local in ${data}`);
    } finally {
      await d.client.close();
    }
    // XDG_DATA_HOME wins when set.
    const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-xdg-'));
    const e = await desktop([], { base: null, env: { ...env, XDG_DATA_HOME: xdg }, cwd });
    try {
      await e.call('shed_create_file', { zone: 'storage', path: 'b.txt', content: 'B' });
      expect(fs.existsSync(path.join(xdg, 'fileshed', 'users', 'local', 'Storage', 'data', 'b.txt'))).toBe(true);
    } finally {
      await e.client.close();
    }
  });

  it('a failure to start reaches the client as an error naming the cause, not only "connection closed"', async () => {
    const missing = path.join(os.tmpdir(), 'shed-no-such-inbox-folder');
    for (const [args, cause] of [
      [['--import-dir', missing], /--import-dir .*no such folder/],
      [['--bogus', 'x'], /unknown option --bogus.*Usage: fileshed mcp/],
      [['--base', '/proc/fileshed-cannot-be-here'], /cannot keep files in \/proc\/fileshed-cannot-be-here/],
    ] as const) {
      const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], stderr: 'pipe' });
      let err = '';
      transport.stderr?.on('data', (b: Buffer) => (err += b.toString()));
      const client = new Client({ name: 'desktop-test', version: '1' });
      const failed = await client.connect(transport).then(() => undefined, (e: Error) => e);
      await client.close().catch(() => undefined);
      expect(failed?.message, args.join(' ')).toMatch(/fileshed mcp could not start/);
      expect(failed?.message).toMatch(cause);
      expect(err).toMatch(cause);
    }
  });
});

describe('the link message tells how long a link works and what serves it', () => {
  it('without --link-port: only while this client session runs', async () => {
    const d = await desktop([]);
    try {
      await d.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'A' });
      const link = await d.call('shed_link_create', { zone: 'storage', path: 'a.txt' });
      expect(link.message).toMatch(/by this desktop Fileshed \(fileshed mcp\) at http:\/\/127\.0\.0\.1:\d+ only while this MCP client session runs/);
      expect(link.message).not.toContain('fileshed serve');
    } finally {
      await d.client.close();
    }
  });

  it('with --link-port: a link made before a restart works after it, with no link function called first', async () => {
    const probe = http.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => probe.once('listening', r));
    const port = String((probe.address() as { port: number }).port);
    await new Promise((r) => probe.close(r));
    const base = tempBase();
    const first = await desktop(['--link-port', port], { base });
    await first.call('shed_create_file', { zone: 'storage', path: 'kept.txt', content: 'KEPT' });
    const link = await first.call('shed_link_create', { zone: 'storage', path: 'kept.txt' });
    expect(link.message).toMatch(/whenever the MCP client runs/);
    await first.client.close();
    await new Promise((r) => setTimeout(r, 200));
    await expect(get(link.data!.url as string)).rejects.toThrow(); // nothing serves it while the client is closed
    const second = await desktop(['--link-port', port], { base });
    try {
      await second.call('shed_tree', { zone: 'storage' }); // any call but a link function
      expect(await get(link.data!.url as string)).toEqual({ status: 200, body: 'KEPT' });
    } finally {
      await second.client.close();
    }
  });
});

describe('Python on the desktop, as the README says', () => {
  it('"--valve", "allow_python=true" in args lists shed_run_python and runs it; without it the tool is absent', async () => {
    const off = await desktop([]);
    try {
      expect((await off.client.listTools()).tools.map((t) => t.name)).not.toContain('shed_run_python');
    } finally {
      await off.client.close();
      fs.rmSync(off.base, { recursive: true, force: true });
    }
    const on = await desktop(['--valve', 'allow_python=true']);
    try {
      expect((await on.client.listTools()).tools.map((t) => t.name)).toContain('shed_run_python');
      const r = await on.call('shed_run_python', { zone: 'storage', code: 'print(6 * 7)' });
      expect(r.data?.stdout, JSON.stringify(r)).toBe('42\n');
    } finally {
      await on.client.close();
      fs.rmSync(on.base, { recursive: true, force: true });
    }
  });
});
