/**
 * Two processes on one storage base: real child processes running the
 * plugin bundled from source append to one Documents file and one Storage file at the same time.
 * Every acknowledged append is in the file (no lost update), Documents has exactly one commit per
 * acknowledged append (no call's change swept into another's commit), the history is linear and
 * `git fsck` clean, no call answers FILE_LOCKED, and a quota filled through one process is seen by
 * the other's next check.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serving } from '../../src/index.js';
import { git as realGit } from '../vcs/helpers.js';

const CHILD = `
import fs from 'node:fs';
import { Tools } from './plugin.mjs';
const p = JSON.parse(process.argv[2]);
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: p.base, sandbox: 'validated', ...(p.valves || {}) };
const who = { __user__: { id: 'alice', name: 'Alice' }, __metadata__: { chat_id: p.tag } };
const call = async (fn, args) => JSON.parse(await tools[fn]({ ...args, ...who }));
const out = { acked: 0, errors: {} };
while (Date.now() < p.startAt) await new Promise((r) => setTimeout(r, 1));
if (p.action === 'append') {
  for (let i = 0; i < p.n; i++) {
    const zone = i % 2 === 0 ? 'documents' : 'storage';
    const r = await call('shed_patch_text', { zone, path: 'log.txt', content: p.tag + ' ' + i, position: 'end' });
    if (r.success) out.acked++; else out.errors[r.error.code] = (out.errors[r.error.code] || 0) + 1;
  }
} else if (p.action === 'quota') {
  // Warm this process's usage cache, wait for the other process to fill the quota, then try to write.
  out.first = (await call('shed_create_file', { zone: 'storage', path: p.tag + '-small.txt', content: 'x' })).success;
  fs.writeFileSync(p.ready, '');
  while (!fs.existsSync(p.go)) await new Promise((r) => setTimeout(r, 5));
  const r = await call('shed_create_file', { zone: 'storage', path: p.tag + '-big.bin', content: 'y'.repeat(p.bytes) });
  out.second = r.success ? 'ok' : r.error.code;
} else if (p.action === 'fill') {
  const r = await call('shed_create_file', { zone: 'documents', path: 'fill.bin', content: 'z'.repeat(p.bytes) });
  out.fill = r.success ? 'ok' : r.error.code;
}
process.stdout.write(JSON.stringify(out));
`;

// The banner every Fileshed bundle starts with (bundled libraries call require and use __dirname).
const { banner: BANNER } = createRequire(import.meta.url)('../../build/bundle-banner.cjs') as { banner: string };

let dir: string;
let base: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-two-proc-'));
  await build({ entryPoints: [path.resolve('src/index.ts')], outfile: path.join(dir, 'plugin.mjs'), bundle: true, platform: 'node', format: 'esm', logLevel: 'silent', loader: { '.wasm': 'binary', '.pl': 'text' }, banner: { js: BANNER } });
  fs.writeFileSync(path.join(dir, 'child.mjs'), CHILD);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function child(params: Record<string, unknown>, killAfterMs?: number): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any -- child's JSON report
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(dir, 'child.mjs'), JSON.stringify({ base, ...params })], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    p.stdout.on('data', (d: Buffer) => (text += d.toString()));
    if (killAfterMs !== undefined) setTimeout(() => p.kill('SIGKILL'), killAfterMs);
    p.on('close', (code) => (killAfterMs !== undefined ? resolve({}) : code === 0 ? resolve(JSON.parse(text) as Record<string, unknown>) : reject(new Error(`child exited ${code}: ${text}`))));
  });
}

// Real git on a zone's work tree, its repository beside it (test/vcs/helpers.ts).
const git = (data: string, ...args: string[]) => realGit(data, ...args).trim();

describe('two processes appending to the same files', () => {
  it('every acked append is kept, one Documents commit per acked append, linear history, no FILE_LOCKED', async () => {
    base = fs.mkdtempSync(path.join(dir, 'base-'));
    const N = 40;
    const startAt = Date.now() + 1500; // both children start appending at the same moment
    const [a, b] = await Promise.all([child({ action: 'append', tag: 'A', n: N, startAt }), child({ action: 'append', tag: 'B', n: N, startAt })]);
    expect(a.errors).toEqual({});
    expect(b.errors).toEqual({});
    expect(a.acked + b.acked).toBe(2 * N);
    const docs = path.join(base, 'users', 'alice', 'Documents', 'data');
    const storage = path.join(base, 'users', 'alice', 'Storage', 'data');
    for (const root of [docs, storage]) {
      const lines = fs.readFileSync(path.join(root, 'log.txt'), 'utf8').trim().split('\n').sort();
      const expected = ['A', 'B'].flatMap((t) => Array.from({ length: N }, (_, i) => `${t} ${i}`)).filter((l) => (Number(l.split(' ')[1]) % 2 === 0) === (root === docs)).sort();
      expect(lines).toEqual(expected); // no lost update, no duplicate
    }
    // Documents got N appends (even i of both children): exactly N commits, one per acked call.
    expect(Number(git(docs, 'rev-list', '--count', 'HEAD'))).toBe(N);
    expect(git(docs, 'rev-list', '--merges', 'HEAD')).toBe('');
    expect(git(docs, 'status', '--porcelain')).toBe('');
    git(docs, 'fsck', '--strict');
    // Each commit adds exactly one line.
    const stats = git(docs, 'log', '--format=', '--numstat').split('\n').filter(Boolean);
    expect(stats.every((l) => l.startsWith('1\t0\t'))).toBe(true);
  });

  it('a quota filled through one process is seen by the other process before it answers', async () => {
    base = fs.mkdtempSync(path.join(dir, 'base-'));
    const ready = path.join(base, 'ready');
    const go = path.join(base, 'go');
    const valves = { quota_per_user_mb: 1 };
    const waiting = child({ action: 'quota', tag: 'Q', bytes: 400_000, ready, go, valves, startAt: 0 });
    while (!fs.existsSync(ready)) await new Promise((r) => setTimeout(r, 10));
    const filled = await child({ action: 'fill', tag: 'F', bytes: 700_000, valves, startAt: 0 });
    expect(filled.fill).toBe('ok');
    fs.writeFileSync(go, '');
    const q = await waiting;
    expect(q.first).toBe(true);
    expect(q.second).toBe('QUOTA_EXCEEDED'); // 700 KB + 400 KB > 1 MiB, though this process never saw the fill itself
    expect(fs.existsSync(path.join(base, 'users', 'alice', 'Storage', 'data', 'Q-big.bin'))).toBe(false);
  });
});

describe('recovery after kill -9', () => {
  it('recoverStorage commits what killed calls left and removes temp files; calls then work', async () => {
    base = fs.mkdtempSync(path.join(dir, 'base-'));
    const docs = path.join(base, 'users', 'alice', 'Documents', 'data');
    const storage = path.join(base, 'users', 'alice', 'Storage', 'data');
    // Real kills mid-load: two appenders killed at different moments.
    await Promise.all([child({ action: 'append', tag: 'K', n: 100_000, startAt: 0 }, 1800), child({ action: 'append', tag: 'L', n: 100_000, startAt: 0 }, 2300)]);
    expect(fs.existsSync(path.join(docs, 'log.txt'))).toBe(true);
    // And the exact leftovers of a call killed between its write and its commit, and mid-write.
    fs.appendFileSync(path.join(docs, 'log.txt'), 'written but not committed\n');
    fs.writeFileSync(path.join(docs, 'new.txt'), 'untracked\n');
    fs.writeFileSync(path.join(docs, '.log.txt.abc123.shedtmp'), 'half');
    fs.mkdirSync(storage, { recursive: true }); // a child killed early may not have written there yet
    fs.writeFileSync(path.join(storage, '.log.txt.def456.shedtmp'), 'half');
    expect(git(docs, 'status', '--porcelain')).not.toBe('');

    const report = await serving.recoverStorage(base);
    expect(report.scopes).toBe(1);
    expect(report.commits).toHaveLength(1);
    // The planted ones, plus any a killed child really left mid-write.
    expect(report.temp_files).toEqual(expect.arrayContaining(['users/alice/Documents/data/.log.txt.abc123.shedtmp', 'users/alice/Storage/data/.log.txt.def456.shedtmp']));
    expect((fs.readdirSync(path.join(base, 'users'), { recursive: true }) as string[]).filter((n) => n.endsWith('.shedtmp'))).toEqual([]);
    expect(git(docs, 'status', '--porcelain')).toBe('');
    expect(git(docs, 'log', '-1', '--format=%s')).toBe('Recovered changes after an interrupted call');
    git(docs, 'fsck', '--strict');
    expect(fs.readdirSync(docs).filter((n) => n.endsWith('.shedtmp'))).toEqual([]);
    // Nothing left to recover the second time, and the next call is not blocked by a leftover lock.
    expect((await serving.recoverStorage(base)).commits).toEqual([]);
    const after = await child({ action: 'append', tag: 'M', n: 2, startAt: 0 });
    expect(after.acked).toBe(2);
    expect(git(docs, 'status', '--porcelain')).toBe('');
  });

  it('shed_maintenance runs the same recovery for its caller', async () => {
    base = fs.mkdtempSync(path.join(dir, 'base-'));
    await child({ action: 'append', tag: 'A', n: 2, startAt: 0 });
    const docs = path.join(base, 'users', 'alice', 'Documents', 'data');
    fs.writeFileSync(path.join(docs, 'left.txt'), 'left by a killed call\n');
    fs.writeFileSync(path.join(docs, '.left.txt.0a0a0a.shedtmp'), 'half');
    const old = new Date(Date.now() - 2 * 3600_000); // maintenance removes temp files older than an hour
    fs.utimesSync(path.join(docs, '.left.txt.0a0a0a.shedtmp'), old, old);
    const tools = new (await import('../../src/index.js')).Tools();
    tools.valves = { ...tools.valves, storage_base_path: base };
    const ls = JSON.parse(await tools.shed_tree!({ zone: 'documents', __user__: { id: 'alice', name: 'Alice' } })) as { data: unknown };
    expect(JSON.stringify(ls.data)).not.toContain('shedtmp'); // hidden from users even before cleaning
    const res = JSON.parse(await tools.shed_maintenance!({ __user__: { id: 'alice', name: 'Alice' } })) as { success: boolean; data: Record<string, unknown[]> };
    expect(res.success).toBe(true);
    expect(res.data.recovered_commits).toHaveLength(1);
    expect(res.data.temp_files!.some((t) => String(t).endsWith('.left.txt.0a0a0a.shedtmp'))).toBe(true);
    expect(git(docs, 'status', '--porcelain')).toBe('');
    expect(git(docs, 'log', '-1', '--format=%s')).toBe('Recovered changes after an interrupted call');
  });
});
