/**
 * Links through the real `fileshed serve` (dist/cli.mjs as a child process): links made over HTTP
 * and by the in-process plugin on the same storage are served at /files/; the Open WebUI backend
 * with a session token.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { mod } from '../helpers/shed.js';
import { serve, tempBase, type Served } from '../hosts/helpers.js';
import { fakeFilesApi } from './fake-openwebui.js';

let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  if (served) fs.rmSync(served.base, { recursive: true, force: true });
  served = undefined;
});

const call = async (s: Served, fn: string, body: unknown, headers: Record<string, string> = {}) => (await (await s.post(fn, body, headers)).json()) as { success: boolean; data?: any; error?: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads fields

describe('fileshed serve /files', () => {
  it('serves links made over HTTP and by the plugin on the same storage (one secret)', async () => {
    const base = tempBase();
    // The plugin makes a link before any server ran: it generates the storage's first secret.
    const tools = new mod.Tools();
    tools.valves = { ...tools.valves, storage_base_path: base };
    const u = { __user__: { id: 'local', name: 'local' } };
    const fn = (name: string) => (tools as unknown as Record<string, (a: unknown) => Promise<string>>)[name]!.bind(tools);
    await fn('shed_create_file')({ zone: 'storage', path: 'early.txt', content: 'EARLY', ...u });
    const early = JSON.parse(await fn('shed_link_create')({ zone: 'storage', path: 'early.txt', ...u })).data;

    served = await serve([], { base });
    expect((await call(served, 'shed_create_file', { zone: 'storage', path: 'docs/a.md', content: '# A' })).success).toBe(true);
    const made = await call(served, 'shed_link_create', { zone: 'storage', path: 'docs/a.md' });
    expect(made.data.url.startsWith(`${served.url}/files/`)).toBe(true);
    const r = await fetch(made.data.url);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('# A');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    const folder = await call(served, 'shed_link_create', { zone: 'storage', path: 'docs' });
    const page = await fetch(folder.data.url);
    expect(await page.text()).toContain('href="a.md"');
    const view = await (await fetch(`${folder.data.url}a.md?view=1`)).text();
    expect(view).toContain('<h1>A</h1>');
    // The plugin's earlier link: its secret is now the previous one, still accepted.
    expect(await (await fetch(early.url.replace('http://localhost:8765', served.url))).text()).toBe('EARLY');
    // The server's own 404 for nonsense under /files stays a short HTML page.
    const bad = await fetch(`${served.url}/files/nope/../../x`);
    expect(bad.status).toBe(404);
    expect((await fetch(`${served.url}/files/`)).status).toBe(404);
    expect((await fetch(made.data.url, { method: 'DELETE' })).status).toBe(405);
    expect(await call(served, 'shed_link_delete', { link_id: made.data.link_id })).toMatchObject({ success: true });
    expect((await fetch(made.data.url)).status).toBe(410);
  });

  it('--public-url decides the links\' base', async () => {
    served = await serve(['--public-url', 'https://files.example.org/']);
    await call(served, 'shed_create_file', { zone: 'storage', path: 'a.txt', content: 'A' });
    const made = await call(served, 'shed_link_create', { zone: 'storage', path: 'a.txt' });
    expect(made.data.url).toMatch(/^https:\/\/files\.example\.org\/files\//);
    expect(await (await fetch(made.data.url.replace('https://files.example.org', served.url))).text()).toBe('A');
  });

  it('link_backend=openwebui uploads with the caller\'s session token', async () => {
    const owui = await fakeFilesApi();
    owui.tokens.set('tok-ann', { id: 'ann', name: 'Ann' });
    try {
      served = await serve(['--auth', 'openwebui-session', '--host', '127.0.0.1', '--openwebui-url', owui.url, '--valve', 'link_backend=openwebui']);
      const auth = { Authorization: 'Bearer tok-ann' };
      expect((await call(served, 'shed_create_file', { zone: 'storage', path: 'x.csv', content: 'a,b' }, auth)).success).toBe(true);
      const made = await call(served, 'shed_link_create', { zone: 'storage', path: 'x.csv' }, auth);
      expect(made.success).toBe(true);
      expect(owui.files.get(made.data.link_id)?.bytes.toString()).toBe('a,b');
      expect((await call(served, 'shed_link_list', {}, auth)).data.links).toHaveLength(1);
    } finally {
      await owui.close();
    }
  });
});

