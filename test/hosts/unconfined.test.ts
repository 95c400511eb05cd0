/**
 * `validated` (argument checks only, no kernel confinement) is one local user's mode: `fileshed
 * serve` refuses to start in it unless the admin passes --allow-unconfined (or
 * FILESHED_ALLOW_UNCONFINED=1, or "allow_unconfined": true under "server" in the config file), and
 * then says "unconfined" on /healthz, in shed_parameters and on the admin page. Changed to
 * `validated` while running without the flag, it never unconfines silently: the admin page refuses
 * the save at the field, and a config file edited by hand (or a per-call valve override) makes
 * commands refuse (SANDBOX_UNAVAILABLE). `fileshed mcp` (one local user) runs in it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { post, signIn } from '../admin/admin-helpers.js';
import { CLI, json, serve, tempBase, type Served } from './helpers.js';

const KEY = 'fs_unconfined-test-key-0123456789';
const AUTH = ['--auth', 'api-key', '--api-key', KEY];
const as = { Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': 'alice' };
const running: Served[] = [];
afterAll(async () => {
  for (const s of running) await s.stop();
});

/** `fileshed serve` that must not start: its exit code and stderr. */
function refusedStart(args: string[], opts: { env?: Record<string, string>; base?: string } = {}): { status: number | null; stderr: string } {
  const base = opts.base ?? tempBase();
  const r = spawnSync(process.execPath, [CLI, 'serve', '--port', '0', '--base', base, ...AUTH, ...args], { env: { ...process.env, ...(opts.env ?? {}) }, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stderr: r.stderr };
}

describe('fileshed serve refuses to start unconfined', () => {
  it('--valve sandbox=validated: exit 1, the reason and the way out on stderr', () => {
    const r = refusedStart(['--valve', 'sandbox=validated']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('refusing to start: --valve sandbox=validated');
    expect(r.stderr).toContain('--allow-unconfined');
    expect(r.stderr).toContain('without kernel confinement');
  });

  it('"sandbox": "validated" in the config file: the same', () => {
    const base = tempBase();
    fs.writeFileSync(path.join(base, 'fileshed.json'), JSON.stringify({ valves: { sandbox: 'validated' } }));
    const r = refusedStart([], { base });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('"sandbox": "validated" in');
  });

  it('FILESHED_ALLOW_UNCONFINED=0 does not allow it', () => {
    expect(refusedStart(['--valve', 'sandbox=validated'], { env: { FILESHED_ALLOW_UNCONFINED: '0' } }).status).toBe(1);
  });
});

describe.each([
  ['the flag', ['--allow-unconfined'], {}, undefined],
  ['the environment', [], { FILESHED_ALLOW_UNCONFINED: '1' }, undefined],
  ['the config file', [], {}, { server: { allow_unconfined: true } }],
] as const)('allowed by %s, it starts and says "unconfined"', (_how, flags, env, config) => {
  let s: Served;
  it('/healthz, shed_parameters, shed_exec and the admin page', async () => {
    const base = tempBase();
    if (config) fs.writeFileSync(path.join(base, 'fileshed.json'), JSON.stringify(config));
    s = await serve([...AUTH, '--valve', 'sandbox=validated', ...flags], { base, env: { ...env } });
    running.push(s);
    for (let i = 0; i < 100; i++) {
      const h = await json(await fetch(`${s.url}/healthz`));
      if (h.sandbox !== 'starting') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const health = await json(await fetch(`${s.url}/healthz`));
    expect(health).toMatchObject({ sandbox: 'validated', unconfined: true });
    const params = await json(await s.post('shed_parameters', {}, as));
    expect(params.data.sandbox).toMatchObject({ active: 'validated', unconfined: true });
    expect(params.message).toContain('UNCONFINED');
    const ran = await json(await s.post('shed_exec', { zone: 'storage', cmd: 'echo', args: ['hi'] }, as));
    expect(ran.data).toMatchObject({ stdout: 'hi\n', sandbox: 'validated' });
    const admin = await signIn(s.url, KEY);
    const page = await (await fetch(`${s.url}/admin/sandbox`, { headers: { Cookie: admin.cookie } })).text();
    expect(page).toContain('validated <strong>(UNCONFINED)</strong>');
    expect(page).toContain('UNCONFINED: the valve sandbox is &quot;validated&quot;');
  }, 60_000);
});

describe('changed to "validated" while running without the flag', () => {
  let s: Served;
  it('the admin page refuses the save at the field; a hand-edited config file makes commands refuse', async () => {
    s = await serve([...AUTH]);
    running.push(s);
    const admin = await signIn(s.url, KEY);
    const version = /name="_version" value="([^"]*)"/.exec(admin.page)![1]!;
    const saved = await post(s.url, '/admin/valves', admin, { _csrf: admin.csrf, _version: version, _save: '1', sandbox: 'validated' });
    expect(saved.status).toBe(400);
    const html = await saved.text();
    expect(html).toMatch(/id="err-sandbox"[^>]*>[^<]*--allow-unconfined/);
    expect(fs.existsSync(path.join(s.base, 'fileshed.json')) ? JSON.parse(fs.readFileSync(path.join(s.base, 'fileshed.json'), 'utf8')).valves?.sandbox : undefined).toBeUndefined();

    // The config file edited by hand (the server re-reads it): commands refuse, nothing runs unconfined.
    const file = path.join(s.base, 'fileshed.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify({ ...config, valves: { ...(config.valves ?? {}), sandbox: 'validated' } }));
    const r = await json(await s.post('shed_exec', { zone: 'storage', cmd: 'echo', args: ['hi'] }, as));
    expect(r.success).toBe(false);
    expect(r.error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(r.error.message).toContain('--allow-unconfined');
    const params = await json(await s.post('shed_parameters', {}, as));
    expect(params.data.sandbox).toMatchObject({ configured: 'validated', active: 'none (commands refused)', unconfined: false });
    const page = await (await fetch(`${s.url}/admin/sandbox`, { headers: { Cookie: admin.cookie } })).text();
    expect(page).toContain('commands are refused until it is set back');
    // File functions still work.
    expect((await json(await s.post('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'x' }, as))).success).toBe(true);
    // Nor through a per-call valve override (the Open WebUI tool file's X-Fileshed-Valves).
    fs.writeFileSync(file, JSON.stringify(config));
    const override = Buffer.from(JSON.stringify({ sandbox: 'validated' })).toString('base64');
    const viaHeader = await json(await s.post('shed_exec', { zone: 'storage', cmd: 'echo', args: ['hi'] }, { ...as, 'X-Fileshed-Valves': override }));
    expect(viaHeader.error?.code).toBe('SANDBOX_UNAVAILABLE');
  }, 60_000);
});

describe('fileshed mcp (one local user) runs in validated mode', () => {
  it('shed_exec answers over stdio', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const base = tempBase();
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--base', base, '--valve', 'sandbox=validated'], stderr: 'ignore' });
    const client = new Client({ name: 'unconfined-test', version: '1' });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: 'shed_exec', arguments: { zone: 'storage', cmd: 'echo', args: ['one user'] } });
      const text = (r.content as { type: string; text: string }[])[0]!.text;
      expect(JSON.parse(text).data).toMatchObject({ stdout: 'one user\n', sandbox: 'validated' });
    } finally {
      await client.close();
    }
  }, 60_000);
});
