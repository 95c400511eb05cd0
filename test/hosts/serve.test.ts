/**
 * `fileshed serve` as a real process: the first stdout line, /healthz, the OpenAPI document (a
 * standard validator, and Open WebUI's own conversion giving back dist/tools.json), every 4xx rule,
 * the DNS-rebinding check, local mode refused off loopback, graceful shutdown and the access log.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, json, serve, tempBase, type Served } from './helpers.js';

let s: Served;
beforeAll(async () => {
  s = await serve(['--valve', 'max_file_size_mb=1', '--access-log', 'access.log']);
});
afterAll(async () => {
  await s.stop();
});

/** One raw HTTP exchange (for requests fetch refuses to send, e.g. a forged Host). */
function raw(url: string, request: string, keepOpen = false): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname, () => sock.write(request));
    let out = '';
    sock.on('data', (d) => {
      out += d.toString();
      if (keepOpen && out.includes('\r\n\r\n') && /"detail"/.test(out)) sock.destroy();
    });
    sock.on('close', () => resolve(out));
    sock.on('error', reject);
  });
}

describe('start and discovery', () => {
  it('prints the listening line first, then the OpenAPI, MCP and admin URLs', () => {
    expect(s.stdout[0]).toMatch(/^Fileshed listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.stdout.slice(1, 4)).toEqual([`OpenAPI: ${s.url}/openapi.json`, `MCP:     ${s.url}/mcp`, `Admin:   ${s.url}/admin`]);
  });

  it('answers /healthz without auth: status, version, sandbox', async () => {
    const body = await json(await fetch(`${s.url}/healthz`));
    expect(body).toMatchObject({ status: 'ok', version: expect.any(String) });
    expect(['bwrap', 'landlock', 'validated']).toContain(body.sandbox);
    // The Landlock ABI in force: a number in both kernel modes (Landlock applies inside bubblewrap too), else null.
    expect(body).toHaveProperty('landlock_abi');
    expect(body.landlock_abi === null).toBe(!['landlock', 'bwrap'].includes(body.sandbox));
  });

  it('serves an OpenAPI 3.1 document that a standard validator accepts', async () => {
    const doc = await json(await fetch(`${s.url}/openapi.json`));
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("gives back dist/tools.json through Open WebUI's conversion (operationId, merged requestBody properties)", async () => {
    const doc = await json(await fetch(`${s.url}/openapi.json`));
    const tools = JSON.parse(fs.readFileSync('dist/tools.json', 'utf8')) as { function: { name: string; parameters: { properties: Record<string, { type?: unknown; anyOf?: unknown }>; required?: string[] } } }[];
    // convert_openapi_to_tool_payload: only operations with operationId; name = operationId;
    // requestBody JSON schema ($ref resolved) properties and required merged into the parameters.
    const converted = new Map<string, { props: string[]; required: string[]; typeless: string[] }>();
    for (const [, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'].includes(method) || !op.operationId) continue;
        let schema = op.requestBody?.content?.['application/json']?.schema ?? {};
        if (schema.$ref) schema = doc.components.schemas[schema.$ref.split('/').pop()];
        const props = Object.keys(schema.properties ?? {});
        converted.set(op.operationId, { props, required: schema.required ?? [], typeless: props.filter((p) => !schema.properties[p].type && !schema.properties[p].anyOf) });
      }
    }
    expect([...converted.keys()]).toEqual(tools.map((t) => t.function.name));
    for (const t of tools) {
      const c = converted.get(t.function.name)!;
      expect(c.props).toEqual(Object.keys(t.function.parameters.properties));
      expect(c.required).toEqual(t.function.parameters.required ?? []);
      expect(c.typeless, `${t.function.name}: every parameter carries a type`).toEqual([]);
    }
  });
});

describe('calls and the 4xx rules', () => {
  it('runs a function: 200 with the envelope, success or error alike', async () => {
    const ok = await s.post('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'hello\n' });
    expect(ok.status).toBe(200);
    expect((await json(ok)).success).toBe(true);
    const err = await s.post('shed_read', { zone: 'storage', path: 'missing.txt' });
    expect(err.status).toBe(200);
    expect((await json(err)).error.code).toBe('FILE_NOT_FOUND');
  });

  it('never honours body keys starting with __ (identity comes from the request only)', async () => {
    const r = await json(await s.post('shed_create_file', { zone: 'storage', path: 'b.txt', content: 'x', __user__: { id: 'mallory', role: 'admin' }, __metadata__: { chat_id: 'evil' } }));
    expect(r.success).toBe(true);
    expect(fs.existsSync(path.join(s.base, 'users', 'mallory'))).toBe(false);
    expect(fs.existsSync(path.join(s.base, 'users', 'local', 'Storage', 'data', 'b.txt'))).toBe(true);
  });

  it('404 names the closest functions; constructor and __proto__ are unknown too', async () => {
    const r = await s.post('shed_reed', {});
    expect(r.status).toBe(404);
    expect((await json(r)).detail).toMatch(/Closest: shed_read/);
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) expect((await s.post(name, {})).status).toBe(404);
    expect((await fetch(`${s.url}/a/b`)).status).toBe(404);
  });

  it('405 for any method but POST on a function path', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const r = await fetch(`${s.url}/shed_read`, { method });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
    }
  });

  it('400 with a message for malformed JSON and non-object bodies', async () => {
    for (const body of ['{"zone":', '[1,2]', '"text"', '42', 'null']) {
      const r = await s.post('shed_read', body);
      expect(r.status, body).toBe(400);
      expect((await json(r)).detail).toMatch(/JSON/);
    }
  });

  it('413 for a declared body over the limit, answered before the rest is sent', async () => {
    const limit = 2 * 1024 * 1024; // max_file_size_mb=1 + 1 MiB framing
    const port = new URL(s.url).port;
    const answer = await raw(s.url, `POST /shed_create_file HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${limit + 10}\r\n\r\n{"zone":`, true);
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
  });

  it('413 for a chunked body that grows past the limit', async () => {
    const big = JSON.stringify({ zone: 'storage', path: 'big.txt', content: 'x'.repeat(2 * 1024 * 1024 + 10) });
    const r = await s.post('shed_create_file', big).catch((e: Error) => e);
    // The server may close before fetch finishes sending: also a refusal. Either way nothing is written.
    if (!(r instanceof Error)) expect(r.status).toBe(413);
    expect(fs.existsSync(path.join(s.base, 'users', 'local', 'Storage', 'data', 'big.txt'))).toBe(false);
  });

  it('refuses a non-loopback Host or Origin on a loopback bind (DNS rebinding)', async () => {
    const port = new URL(s.url).port;
    const evilHost = await raw(s.url, `GET /healthz HTTP/1.1\r\nHost: evil.example:${port}\r\nConnection: close\r\n\r\n`);
    expect(evilHost).toMatch(/^HTTP\/1\.1 403/);
    const evilOrigin = await raw(s.url, `GET /healthz HTTP/1.1\r\nHost: localhost:${port}\r\nOrigin: http://evil.example\r\nConnection: close\r\n\r\n`);
    expect(evilOrigin).toMatch(/^HTTP\/1\.1 403/);
    const fine = await raw(s.url, `GET /healthz HTTP/1.1\r\nHost: localhost:${port}\r\nOrigin: http://127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    expect(fine).toMatch(/^HTTP\/1\.1 200/);
  });

  it('streams status events then one result line with Accept: application/x-ndjson', async () => {
    const zip = await json(await s.post('shed_zip', { zone: 'storage', src: 'a.txt', dest: 'a.zip' }));
    expect(zip.success).toBe(true);
    const r = await s.post('shed_unzip', { zone: 'storage', src: 'a.zip', dest: 'out' }, { Accept: 'application/x-ndjson' });
    expect(r.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await r.text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.slice(0, -1).every((l) => l.type === 'status' && typeof l.data.description === 'string')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ type: 'result', data: { success: true } });
  });

  it('logs one JSON line per call with no argument contents', async () => {
    await s.post('shed_create_file', { zone: 'storage', path: 'secret.txt', content: 'TOP-SECRET-CONTENT' });
    const log = fs.readFileSync(path.join(s.base, 'access.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(log.at(-1)).toMatchObject({ user: 'local', fn: 'shed_create_file', status: 200, success: true, ms: expect.any(Number), time: expect.any(String) });
    expect(fs.readFileSync(path.join(s.base, 'access.log'), 'utf8')).not.toMatch(/TOP-SECRET|secret\.txt/);
  });
});

describe('process behaviour', () => {
  it('refuses auth local on a non-loopback bind', () => {
    const r = spawnSync(process.execPath, [CLI, 'serve', '--host', '0.0.0.0', '--port', '0', '--base', tempBase()], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toMatch(/listening/);
    expect(r.stderr).toMatch(/loopback/);
  });

  it('on SIGTERM finishes the running call, then exits 0', async () => {
    const t = await serve(['--access-log', 'off']);
    const slow = t.post('shed_exec', { zone: 'storage', cmd: 'awk', args: ['BEGIN { s = systime(); while (systime() - s < 2) {} ; print "done" }'] });
    await new Promise((r) => setTimeout(r, 400));
    const code = t.stop();
    const body = await json(await slow);
    expect(body.success, JSON.stringify(body)).toBe(true);
    expect(body.data.stdout).toContain('done');
    expect(await code).toBe(0);
  });

  it('stores generated secrets in {base}/fileshed.json (mode 0600) and prints the API key once', async () => {
    const base = tempBase();
    const first = await serve(['--auth', 'api-key'], { base });
    const key = /Generated API key .*: (\S+)$/.exec(first.stdout.join('\n'))?.[1];
    expect(key).toBeTruthy();
    await first.stop();
    const file = path.join(base, 'fileshed.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(config.server.api_keys).toEqual([key]);
    expect(config.server.link_secret).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const second = await serve(['--auth', 'api-key'], { base });
    expect(second.stdout.join('\n')).not.toContain(key!);
    const r = await second.post('shed_stats', {}, { Authorization: `Bearer ${key}`, 'X-OpenWebUI-User-Id': 'u1' });
    expect((await json(r)).success).toBe(true);
    await second.stop();
  });
});
