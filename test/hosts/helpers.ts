/**
 * Host test helpers: `fileshed serve` as a real child process (dist/cli.mjs, port 0, temp base),
 * and a fake Open WebUI on loopback answering the REST endpoints the server uses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

export const CLI = path.resolve('dist/cli.mjs');

export interface Served {
  url: string;
  base: string;
  proc: ChildProcess;
  /** Every stdout line so far. */
  stdout: string[];
  stderr(): string;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  post(fn: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

/** Bases made for this test file, removed after its last test (its servers are stopped by then, or die with it). */
const bases: string[] = [];
afterAll(() => {
  for (const base of bases.splice(0)) fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
});

export function tempBase(): string {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-hosts-'));
  bases.push(base);
  return base;
}

/**
 * `bin`: an installed `fileshed` command to run instead of this checkout's dist/cli.mjs (with this
 * node first on PATH); `umask`: the umask the server is started with (through sh).
 */
export async function serve(args: string[] = [], opts: { base?: string; env?: Record<string, string>; bin?: string; cwd?: string; umask?: string } = {}): Promise<Served> {
  const base = opts.base ?? tempBase();
  const [program, first] = opts.bin ? [opts.bin, []] : [process.execPath, [CLI]];
  const argv = [...first, 'serve', '--port', '0', '--base', base, ...args];
  const [command, commandArgs] = opts.umask ? ['/bin/sh', ['-c', `umask ${opts.umask} && exec "$@"`, 'sh', program, ...argv]] : [program, argv];
  const pathEnv = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
  const proc = spawn(command, commandArgs, {
    env: { ...process.env, PATH: pathEnv, ...(opts.env ?? {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  const stdout: string[] = [];
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const line of lines) {
        stdout.push(line);
        if (stdout.length === 1) {
          const m = /^Fileshed listening on (http:\/\/\S+)$/.exec(line);
          if (m) resolve(m[1]!);
          else reject(new Error(`unexpected first line: ${line}`));
        }
      }
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return {
    url,
    base,
    proc,
    stdout,
    stderr: () => err,
    stop: async () => {
      proc.kill('SIGTERM');
      return exited;
    },
    post: (fn, body, headers = {}) =>
      fetch(`${url}/${fn}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
  };
}

export interface FakeUser {
  id: string;
  name: string;
  email?: string;
  role?: string;
}

export interface FakeOpenWebUI {
  url: string;
  /** token -> user */
  tokens: Map<string, FakeUser>;
  groups: { id: string; name: string; description?: string; user_ids: string[] }[];
  files: Map<string, { owner: string; bytes: Buffer }>;
  events: { chat: string; message: string; token: string; body: unknown }[];
  hits: Record<string, number>;
  close(): Promise<void>;
}

/** Answers like Open WebUI v0.11: auths (who am I), groups (member's own), files content, chat events. */
export async function fakeOpenWebUI(): Promise<FakeOpenWebUI> {
  const state: Omit<FakeOpenWebUI, 'url' | 'close'> = { tokens: new Map(), groups: [], files: new Map(), events: [], hits: {} };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const user = state.tokens.get(token);
    const p = (req.url ?? '').split('?')[0]!;
    const key = p.replace(/\/api\/v1\/(files|chats)\/[^/]+.*/, '/api/v1/$1/*');
    state.hits[key] = (state.hits[key] ?? 0) + 1;
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!user) return json(401, { detail: 'Not authenticated' });
    if (p === '/api/v1/auths/') return json(200, { id: user.id, name: user.name, email: user.email ?? '', role: user.role ?? 'user' });
    if (p === '/api/v1/groups/') return json(200, state.groups.filter((g) => user.role === 'admin' || g.user_ids.includes(user.id)));
    let m = /^\/api\/v1\/files\/([^/]+)\/content$/.exec(p);
    if (m) {
      const f = state.files.get(decodeURIComponent(m[1]!));
      if (!f || (f.owner !== user.id && user.role !== 'admin')) return json(404, { detail: 'Not found' });
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      return res.end(f.bytes);
    }
    m = /^\/api\/v1\/chats\/([^/]+)\/messages\/([^/]+)\/event$/.exec(p);
    if (m && req.method === 'POST') {
      state.events.push({ chat: m[1]!, message: m[2]!, token, body: JSON.parse(Buffer.concat(chunks).toString()) });
      return json(200, { ok: true });
    }
    json(404, { detail: 'Not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    ...state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export async function json(res: Response): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary fields
  return res.json();
}

export const b64 = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64');
