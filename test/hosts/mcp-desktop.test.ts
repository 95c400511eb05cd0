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

async function desktop(extra: string[]): Promise<Desktop> {
  const base = tempBase();
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--base', base, ...extra], stderr: 'pipe' });
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
    expect(await d.call('shed_import', { filename: secret })).toMatchObject({ success: false, error: { code: 'FILE_NOT_FOUND' } });
    // Host arguments in the call are dropped: the model cannot attach a path of its own.
    const injected = await d.call('shed_import', { import_all: true, __files__: [secret], __metadata__: { files: [secret] } });
    expect(JSON.stringify(injected)).not.toContain('secret.txt');
    const all = fs.readdirSync(path.join(d.base, 'users', 'desk', 'Uploads'), { recursive: true }).map(String);
    expect(all.some((f) => f.includes('secret') || f.includes('leak') || f.includes('deep'))).toBe(false);
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
