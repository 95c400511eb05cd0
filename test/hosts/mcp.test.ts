/**
 * MCP with the official SDK client: over stdio (`fileshed mcp`, a real child process) and over
 * Streamable HTTP (`/mcp` of `fileshed serve`): tool list with annotations, calls with
 * structuredContent and isError, progress notifications, identity on HTTP, sessions bound to users.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, serve, tempBase, type Served } from './helpers.js';

const tools = JSON.parse(fs.readFileSync('dist/tools.json', 'utf8')) as { function: { name: string; parameters: unknown } }[];
type Envelope = { success: boolean; data?: Record<string, unknown>; error?: { code: string } };

async function exercise(client: Client) {
  const list = await client.listTools();
  expect(list.tools.map((t) => t.name)).toEqual(tools.map((t) => t.function.name));
  for (const t of list.tools) expect(t.inputSchema).toEqual(tools.find((x) => x.function.name === t.name)!.function.parameters);
  const read = list.tools.find((t) => t.name === 'shed_read')!;
  expect(read.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
  const del = list.tools.find((t) => t.name === 'shed_delete')!;
  expect(del.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  expect(list.tools.find((t) => t.name === 'shed_exec')!.annotations?.openWorldHint).toBe(true);

  const ok = await client.callTool({ name: 'shed_create_file', arguments: { zone: 'storage', path: 'm.txt', content: 'mcp\n' } });
  expect(ok.isError, `create_file: ${JSON.stringify(ok)}`).toBe(false);
  expect((ok.structuredContent as Envelope).success).toBe(true);
  const text = (ok.content as { type: string; text: string }[])[0]!;
  expect(text.type).toBe('text');
  expect(JSON.parse(text.text)).toEqual(ok.structuredContent);

  const bad = await client.callTool({ name: 'shed_read', arguments: { zone: 'storage', path: 'nope.txt' } });
  expect(bad.isError, `read missing: ${JSON.stringify(bad)}`).toBe(true);
  expect((bad.structuredContent as Envelope).error!.code).toBe('FILE_NOT_FOUND');

  const zip = await client.callTool({ name: 'shed_zip', arguments: { zone: 'storage', src: 'm.txt', dest: 'm.zip' } });
  expect(zip.isError, `zip: ${JSON.stringify(zip)}`).toBe(false);
  const progress: { progress: number; message?: string }[] = [];
  const unzip = await client.callTool({ name: 'shed_unzip', arguments: { zone: 'storage', src: 'm.zip', dest: 'mz' } }, undefined, { onprogress: (p) => progress.push(p) });
  expect(unzip.isError, `unzip: ${JSON.stringify(unzip)}`).toBe(false);
  expect(progress.length, 'progress notifications before the result').toBeGreaterThan(0);
  expect(progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress)).toBe(true);
  expect(typeof progress[0]!.message).toBe('string');

  await expect(client.callTool({ name: 'constructor', arguments: {} })).rejects.toThrow(/Unknown tool/);
}

describe('stdio (fileshed mcp)', () => {
  it('lists, calls, reports errors and progress', async () => {
    const base = tempBase();
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--base', base, '--user', 'desk'], stderr: 'pipe' }));
    try {
      await exercise(client);
      expect(fs.readFileSync(path.join(base, 'users', 'desk', 'Storage', 'data', 'm.txt'), 'utf8')).toBe('mcp\n');
    } finally {
      await client.close();
    }
  });
});

describe('Streamable HTTP (/mcp)', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off']);
  });
  afterAll(async () => {
    await s.stop();
  });
  const connect = async (user: string, key = 'k1') => {
    const client = new Client({ name: 'test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}`, 'X-OpenWebUI-User-Id': user } } });
    await client.connect(transport);
    return { client, transport };
  };

  it('lists, calls, reports errors and progress as the identified user', async () => {
    const { client } = await connect('webuser');
    try {
      await exercise(client);
      expect(fs.existsSync(path.join(s.base, 'users', 'webuser', 'Storage', 'data', 'm.txt'))).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('a missing credential is a JSON-RPC error saying what to send, and no OAuth is advertised', async () => {
    const how = /Credentials are required \(auth modes: api-key\): Authorization: Bearer <API key> with X-OpenWebUI-User-Id/;
    // The SDK client shows the body of the 401.
    await expect(new Client({ name: 'test', version: '1' }).connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)))).rejects.toThrow(how);
    const r = await fetch(`${s.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(r.headers.get('www-authenticate')).not.toContain('resource_metadata');
    expect((await r.json()) as unknown).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(how) } });
    // A client with OAuth support (the Inspector, Claude Code) goes looking for an OAuth server after
    // any 401: discovery finds none and registration is refused with the same explanation.
    const oauthClient = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
      authProvider: {
        redirectUrl: 'http://127.0.0.1:9/callback',
        clientMetadata: { redirect_uris: ['http://127.0.0.1:9/callback'], client_name: 'oauth-test' },
        clientInformation: () => undefined,
        saveClientInformation: () => {},
        tokens: () => undefined,
        saveTokens: () => {},
        redirectToAuthorization: () => {
          throw new Error('no OAuth login should be started');
        },
        saveCodeVerifier: () => {},
        codeVerifier: () => '',
      },
    });
    await expect(new Client({ name: 'test', version: '1' }).connect(oauthClient)).rejects.toThrow(/This server does not use OAuth\. Credentials are required/);
  });

  it('refuses a wrong key (401) and a session id used by another user (403)', async () => {
    await expect(connect('webuser', 'wrong')).rejects.toThrow();
    const { client, transport } = await connect('owner1');
    try {
      const sid = transport.sessionId!;
      const r = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { Authorization: 'Bearer k1', 'X-OpenWebUI-User-Id': 'thief', 'Mcp-Session-Id': sid, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'shed_tree', arguments: { zone: 'storage' } } }),
      });
      expect(r.status).toBe(403);
    } finally {
      await client.close();
    }
  });
});
