/**
 * `fileshed serve` as a real process: the first stdout line, /healthz, the OpenAPI document (a
 * standard validator, and Open WebUI's own conversion giving back dist/tools.json), every 4xx rule,
 * the DNS-rebinding check, local mode refused off loopback, graceful shutdown and the access log.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, json, serve, tempBase, type Served } from './helpers.js';
import { redoclyLint } from '../helpers/redocly.js';

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

  it("passes Redocly CLI's recommended rules, /openapi.json and /openapi-client.json alike", async () => {
    for (const name of ['openapi.json', 'openapi-client.json']) {
      const doc = await json(await fetch(`${s.url}/${name}`));
      const lint = redoclyLint(doc);
      expect(lint.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`), name).toEqual([]);
      expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
      expect((await new Validator().validate(doc)).valid, name).toBe(true);
    }
  });

  it("gives back dist/tools.json through Open WebUI's conversion (operationId, merged requestBody properties)", async () => {
    const doc = await json(await fetch(`${s.url}/openapi.json`));
    const tools = JSON.parse(fs.readFileSync('dist/tools.json', 'utf8')) as { function: { name: string; parameters: { properties: Record<string, { type?: unknown; anyOf?: unknown }>; required?: string[] } } }[];
    expectOpenWebUIConversion(doc, tools);
  });
});

/**
 * convert_openapi_to_tool_payload (Open WebUI v0.11): only operations with operationId; name =
 * operationId; every declared parameter (path, query and header alike) becomes a model parameter;
 * requestBody JSON schema ($ref resolved) properties and required are merged in. The model must see
 * exactly the functions' own parameters.
 */
function expectOpenWebUIConversion(doc: any, tools: { function: { name: string; parameters: { properties: Record<string, unknown>; required?: string[] } } }[]): void { // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed document
  const converted = new Map<string, { props: string[]; required: string[]; typeless: string[] }>();
  for (const [, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) { // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed document
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'].includes(method) || !op.operationId) continue;
      const declared = ((op.parameters ?? []) as { name: string; required?: boolean }[]);
      let schema = op.requestBody?.content?.['application/json']?.schema ?? {};
      if (schema.$ref) schema = doc.components.schemas[schema.$ref.split('/').pop()];
      const props = [...declared.map((p) => p.name), ...Object.keys(schema.properties ?? {})];
      const required = [...declared.filter((p) => p.required).map((p) => p.name), ...(schema.required ?? [])];
      converted.set(op.operationId, { props, required, typeless: Object.keys(schema.properties ?? {}).filter((p) => !schema.properties[p].type && !schema.properties[p].anyOf) });
    }
  }
  expect([...converted.keys()]).toEqual(tools.map((t) => t.function.name));
  for (const t of tools) {
    const c = converted.get(t.function.name)!;
    expect(c.props).toEqual(Object.keys(t.function.parameters.properties));
    expect(c.required).toEqual(t.function.parameters.required ?? []);
    expect(c.typeless, `${t.function.name}: every parameter carries a type`).toEqual([]);
  }
}

describe('OpenAPI in api-key mode', () => {
  let k: Served;
  beforeAll(async () => {
    k = await serve(['--auth', 'api-key', '--access-log', 'off'], { env: { FILESHED_API_KEY: 'fs_openapi-key-0123456789' } });
  });
  afterAll(async () => {
    await k.stop();
  });

  it('/openapi-client.json declares the user header (required) and the other request headers, so generated clients type them', async () => {
    const doc = await json(await fetch(`${k.url}/openapi-client.json`));
    const params = doc.paths['/shed_read'].post.parameters as { name: string; in: string; required: boolean; schema: { type: string } }[];
    expect(params.find((p) => p.name === 'X-OpenWebUI-User-Id')).toMatchObject({ in: 'header', required: true, schema: { type: 'string' } });
    for (const name of ['X-OpenWebUI-User-Name', 'X-OpenWebUI-User-Email', 'X-OpenWebUI-User-Role', 'X-OpenWebUI-Chat-Id']) {
      expect(params.find((p) => p.name === name), name).toMatchObject({ in: 'header', required: false });
    }
    expect(redoclyLint(doc).problems).toEqual([]);
    expect((await new Validator().validate(doc)).valid).toBe(true);
    // The declared headers are what the server reads: a call sending them as declared works.
    const r = await fetch(`${k.url}/shed_stats`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer fs_openapi-key-0123456789', 'X-OpenWebUI-User-Id': 'typed', 'X-OpenWebUI-Chat-Id': 'c1' }, body: '{}' });
    expect((await json(r)).success).toBe(true);
  });

  it('/openapi.json stays what Open WebUI shows the model: no header becomes a model parameter', async () => {
    const doc = await json(await fetch(`${k.url}/openapi.json`));
    const tools = JSON.parse(fs.readFileSync('dist/tools.json', 'utf8'));
    expectOpenWebUIConversion(doc, tools);
    expect(redoclyLint(doc).problems).toEqual([]);
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

/** A loopback port free right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

describe('process behaviour', () => {
  it('answers nothing before its routes exist: requests from the moment the process starts get 200 or no connection', async () => {
    // On the old order (routes built after listen) about every second start answered one 404.
    for (let round = 0; round < 5; round++) {
      const port = await freePort();
      const proc = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--base', tempBase(), '--access-log', 'off'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let listening = false;
      proc.stdout.on('data', (d: Buffer) => (listening ||= d.toString().includes('Fileshed listening')));
      const exited = new Promise((r) => proc.once('exit', r));
      const answers: number[] = [];
      let refused = 0;
      // Eight clients hammer the port (calls, the probe, the document) until each got five answers after the start line.
      const hammer = async (path: string, init: RequestInit) => {
        let after = 0;
        const deadline = Date.now() + 30_000;
        while (after < 5 && Date.now() < deadline && proc.exitCode === null) {
          try {
            const r = await fetch(`http://127.0.0.1:${port}${path}`, init);
            await r.arrayBuffer();
            answers.push(r.status);
            if (listening) after++;
          } catch {
            refused++;
            await new Promise((r) => setImmediate(r));
          }
        }
      };
      const call = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"zone":"storage"}' };
      await Promise.all(['/shed_tree', '/shed_tree', '/shed_tree', '/shed_tree', '/healthz', '/healthz', '/openapi.json', '/openapi.json'].map((p) => hammer(p, p === '/shed_tree' ? call : {})));
      proc.kill('SIGTERM');
      await exited;
      expect(refused, 'the hammer started before the port opened').toBeGreaterThan(0);
      expect(answers.length).toBeGreaterThanOrEqual(40);
      expect(answers.filter((s) => s !== 200), `round ${round}: ${answers.join(',')}`).toEqual([]);
    }
  }, 120_000);

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
