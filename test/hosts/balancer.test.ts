/**
 * What a load balancer and an orchestrator need from `fileshed serve`: liveness that never touches
 * the storage, readiness that does (with a timeout), both also on a health thread; Host handling
 * that lets a balancer on the same host in without opening DNS rebinding; secrets generated once
 * when instances start together; MCP sessions that survive landing on another instance; metrics.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, tempBase, type Served } from './helpers.js';

/** A raw HTTP/1.0 GET with exactly these headers, as HAProxy's default check sends it (fetch always adds Host). */
function rawGet(url: string, headers: Record<string, string>, pathname: string): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname, () => {
      socket.write(`GET ${pathname} HTTP/1.0\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
    });
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

describe('health, readiness, hosts and metrics', () => {
  let s: Served;
  let allowed: Served;
  beforeAll(async () => {
    [s, allowed] = await Promise.all([
      serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off', '--health-port', '0']),
      serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off', '--allowed-hosts', 'fileshed.example.com, Upstream', '--metrics', 'public']),
    ]);
  });
  afterAll(async () => {
    await Promise.all([s?.stop(), allowed?.stop()]);
  });
  const healthUrl = () => /^Health:\s+(http:\/\/[^/]+)/m.exec(s.stdout.join('\n'))![1]!;

  it('/healthz answers from memory with the storage kind; /readyz checks the storage; both on the health port too', async () => {
    const h = (await (await fetch(`${s.url}/healthz`)).json()) as Record<string, unknown>;
    expect(h).toMatchObject({ status: 'ok', coordination: 'none', storage: { kind: expect.any(String), type: expect.any(String) } });
    await new Promise((r) => setTimeout(r, 300));
    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { storage_ms: number }).storage_ms).toBeGreaterThanOrEqual(0);
    expect((await fetch(`${healthUrl()}/healthz`)).status).toBe(200);
    expect((await fetch(`${healthUrl()}/readyz`)).status).toBe(200);
    expect((await fetch(`${healthUrl()}/shed_read`)).status).toBe(404);
  });

  it('storage gone: readiness says 503 with the reason while liveness stays 200', async () => {
    const base = tempBase();
    const gone = await serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off'], { base });
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect((await fetch(`${gone.url}/readyz`)).status).toBe(200);
      // The probe folder replaced by a file: every probe write fails from now on.
      fs.rmSync(path.join(base, '.fileshed-ready'), { recursive: true, force: true });
      fs.writeFileSync(path.join(base, '.fileshed-ready'), 'not a folder');
      let status = 200;
      for (let i = 0; i < 60 && status === 200; i++) {
        await new Promise((r) => setTimeout(r, 250));
        status = (await fetch(`${gone.url}/readyz`)).status;
      }
      expect(status).toBe(503);
      const body = (await (await fetch(`${gone.url}/readyz`)).json()) as { reason: string };
      expect(body.reason).toMatch(/storage/);
      expect((await fetch(`${gone.url}/healthz`)).status).toBe(200);
    } finally {
      await gone.stop();
    }
  }, 30_000);

  it('a balancer check without Host gets /healthz and /readyz; everything else still needs a loopback or allowed Host', async () => {
    expect(await rawGet(s.url, {}, '/healthz')).toBe(200);
    expect(await rawGet(s.url, {}, '/readyz')).toBe(200);
    expect(await rawGet(s.url, {}, '/openapi.json')).toBe(403);
    expect(await rawGet(s.url, { Host: 'fileshed.example.com' }, '/openapi.json')).toBe(403);
    expect(await rawGet(allowed.url, { Host: 'fileshed.example.com' }, '/openapi.json')).toBe(200);
    expect(await rawGet(allowed.url, { Host: 'upstream:8080' }, '/openapi.json')).toBe(200);
    // DNS rebinding stays refused: a foreign Host, or an allowed Host with a foreign Origin.
    expect(await rawGet(allowed.url, { Host: 'evil.example' }, '/openapi.json')).toBe(403);
    expect(await rawGet(allowed.url, { Host: 'fileshed.example.com', Origin: 'http://evil.example' }, '/openapi.json')).toBe(403);
    expect(await rawGet(allowed.url, { Host: 'fileshed.example.com', Origin: 'https://fileshed.example.com' }, '/openapi.json')).toBe(200);
  });

  it('/metrics: admin credentials by default, public when configured; calls, errors and latency per function', async () => {
    expect((await fetch(`${s.url}/metrics`)).status).toBe(401);
    const headers = { Authorization: 'Bearer k1', 'X-OpenWebUI-User-Id': 'm1' };
    await s.post('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a' }, headers);
    await s.post('shed_read', { zone: 'storage', path: 'missing.txt' }, headers);
    const res = await fetch(`${s.url}/metrics`, { headers: { Authorization: 'Bearer k1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^fileshed_calls_total\{function="shed_create_file"\} 1$/m);
    expect(text).toMatch(/^fileshed_call_errors_total\{function="shed_read",code="FILE_NOT_FOUND"\} 1$/m);
    expect(text).toMatch(/^fileshed_call_duration_seconds_count\{function="shed_read"\} 1$/m);
    for (const name of ['fileshed_calls_waiting', 'fileshed_pool_workers', 'fileshed_sandbox_info', 'fileshed_storage_info', 'fileshed_coordination_info', 'fileshed_ready']) expect(text).toContain(`\n${name}`);
    expect((await fetch(`${s.url}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${allowed.url}/metrics`)).status).toBe(200);
  });
});

describe('instances starting together on one storage base', () => {
  it('generate the API key and link secret once: every instance accepts the same key', async () => {
    const base = tempBase();
    const all = await Promise.all([0, 1, 2].map(() => serve(['--auth', 'api-key', '--access-log', 'off'], { base })));
    try {
      const config = JSON.parse(fs.readFileSync(path.join(base, 'fileshed.json'), 'utf8')) as { server: { api_keys: string[]; link_secret: string } };
      expect(config.server.api_keys).toHaveLength(1);
      const printed = all.flatMap((x) => x.stdout.filter((l) => l.startsWith('Generated API key')));
      expect(printed).toHaveLength(1); // one instance generated it, the others read it
      for (const x of all) {
        const r = await x.post('shed_tree', { zone: 'storage' }, { Authorization: `Bearer ${config.server.api_keys[0]}`, 'X-OpenWebUI-User-Id': 'u' });
        expect(r.status).toBe(200);
      }
      expect(fs.existsSync(path.join(base, 'fileshed.json.lock'))).toBe(false);
    } finally {
      await Promise.all(all.map((x) => x.stop()));
    }
  }, 60_000);

  it('with --coordination, a config file outside the shared base cannot receive generated secrets', async () => {
    const base = tempBase();
    const local = path.join(tempBase(), 'own.json');
    await expect(serve(['--auth', 'api-key', '--config', local, '--coordination', 'redis://127.0.0.1:1'], { base })).rejects.toThrow(/cannot be generated/);
  });
});

describe('MCP sessions behind a balancer', () => {
  const base = tempBase();
  let a: Served;
  let b: Served;
  beforeAll(async () => {
    // One config file (one link secret) on the shared base, as every instance of a deployment has.
    a = await serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off'], { base });
    b = await serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off'], { base });
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const post = (s: Served, sid: string, user: string) =>
    fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: 'Bearer k1', 'X-OpenWebUI-User-Id': user, 'Mcp-Session-Id': sid, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'shed_create_file', arguments: { zone: 'storage', path: 'via-b.txt', content: 'b' } } }),
    });

  it('a session opened on one instance is served by another for its owner, refused for anyone else and for forged ids', async () => {
    const client = new Client({ name: 'test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { requestInit: { headers: { Authorization: 'Bearer k1', 'X-OpenWebUI-User-Id': 'owner' } } });
    await client.connect(transport);
    try {
      const sid = transport.sessionId!;
      expect(sid).toMatch(/^[0-9a-f-]{36}\.[A-Za-z0-9_-]{32}$/);
      const onB = await post(b, sid, 'owner');
      expect(onB.status).toBe(200);
      expect(await onB.text()).toContain('via-b.txt');
      expect(fs.readFileSync(path.join(base, 'users', 'owner', 'Storage', 'data', 'via-b.txt'), 'utf8')).toBe('b');
      expect((await post(b, sid, 'thief')).status).toBe(404);
      expect((await post(b, `${sid.split('.')[0]}.${'A'.repeat(32)}`, 'owner')).status).toBe(404);
      expect((await post(b, 'not-a-session', 'owner')).status).toBe(404);
      // The instance that opened it still serves it statefully.
      const again = await client.callTool({ name: 'shed_read', arguments: { zone: 'storage', path: 'via-b.txt' } });
      expect(again.isError).toBe(false);
    } finally {
      await client.close();
    }
  });
});
