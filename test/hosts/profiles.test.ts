/**
 * Function profiles through every host: with `functions=core` (and a wider
 * `functions_admin`), the OpenAPI document, the MCP tool lists (per role) and the calls expose
 * only the enabled functions; a disabled one answers FUNCTION_DISABLED. The document follows a
 * change of the valves at run time (config file) without a restart.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, json, serve, tempBase, type Served } from './helpers.js';

const tools = JSON.parse(fs.readFileSync(path.resolve('dist/tools.json'), 'utf8')) as { function: { name: string } }[];
const ALL = tools.map((t) => t.function.name);

describe('fileshed serve with functions=core, functions_admin=core,data,groups', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off', '--valve', 'functions=core', '--valve', 'functions_admin=core,data,groups']);
  });
  afterAll(async () => {
    await s.stop();
  });
  const headers = (user: string, role = 'user') => ({ Authorization: 'Bearer k1', 'X-OpenWebUI-User-Id': user, 'X-OpenWebUI-User-Role': role });

  it('lists in /openapi.json the union of the user and admin profiles, nothing else', async () => {
    const doc = await json(await fetch(`${s.url}/openapi.json`));
    const ops = Object.values(doc.paths as Record<string, { post: { operationId: string } }>).map((p) => p.post.operationId);
    expect(ops).toContain('shed_exec');
    expect(ops).toContain('shed_group_list');
    expect(ops).toContain('shed_help');
    expect(ops).not.toContain('shed_hexdump');
    expect(ops).not.toContain('shed_lockedit_open');
    expect(ops.length).toBeLessThan(ALL.length);
  });

  it('answers FUNCTION_DISABLED (200) for a function the caller may not use, and runs the enabled ones', async () => {
    const off = await json(await s.post('shed_hexdump', { zone: 'storage', path: 'x' }, headers('u1')));
    expect(off.success).toBe(false);
    expect(off.error.code).toBe('FUNCTION_DISABLED');
    expect(off.error.hint).toContain('shed_exec');
    const groupsAsUser = await json(await s.post('shed_group_list', {}, headers('u1')));
    expect(groupsAsUser.error.code).toBe('FUNCTION_DISABLED');
    const groupsAsAdmin = await json(await s.post('shed_group_list', {}, headers('a1', 'admin')));
    expect(groupsAsAdmin.success).toBe(true);
    const on = await json(await s.post('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'x' }, headers('u1')));
    expect(on.success).toBe(true);
  });

  it('lists over MCP (HTTP) only the tools of the caller role', async () => {
    const listFor = async (role: string) => {
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: headers(`m-${role}`, role) } }));
      try {
        return (await client.listTools()).tools.map((t) => t.name);
      } finally {
        await client.close();
      }
    };
    const user = await listFor('user');
    const admin = await listFor('admin');
    expect(user).toContain('shed_read');
    expect(user).not.toContain('shed_group_info');
    expect(user).not.toContain('shed_hexdump');
    expect(user.length).toBeLessThanOrEqual(15);
    expect(admin).toContain('shed_read');
    expect(admin).toContain('shed_group_info');
    expect(admin.length).toBeGreaterThan(user.length);
  });
});

describe('valves changed at run time', () => {
  let s: Served;
  const base = tempBase();
  beforeAll(async () => {
    s = await serve(['--access-log', 'off'], { base });
  });
  afterAll(async () => {
    await s.stop();
  });

  it('rebuilds /openapi.json when the functions valve changes in the config file', async () => {
    const count = async () => Object.keys((await json(await fetch(`${s.url}/openapi.json`))).paths).length;
    expect(await count()).toBe(ALL.length);
    const file = path.join(base, 'fileshed.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;
    fs.writeFileSync(file, JSON.stringify({ ...config, valves: { ...(config.valves ?? {}), functions: 'read,help' } }), { mode: 0o600 });
    let n = ALL.length;
    for (let i = 0; i < 50 && n === ALL.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      n = await count();
    }
    expect(n).toBeLessThan(ALL.length);
    expect(n).toBeGreaterThan(1);
  });
});

describe('fileshed mcp (stdio) with functions=core', () => {
  it('lists only the core tools', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--base', tempBase(), '--valve', 'functions=core'], stderr: 'pipe' }));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('shed_exec');
      expect(names).not.toContain('shed_hexdump');
      expect(names.length).toBeLessThanOrEqual(15);
      const r = await client.callTool({ name: 'shed_hexdump', arguments: { zone: 'storage', path: 'x' } });
      expect(r.isError).toBe(true);
      expect((r.structuredContent as { error: { code: string } }).error.code).toBe('FUNCTION_DISABLED');
    } finally {
      await client.close();
    }
  });
});
