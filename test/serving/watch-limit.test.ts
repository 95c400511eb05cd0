/**
 * The kernel's inotify limit reached: a folder that gets no watch is read again at every question
 * (usage.ts), so the usage stays exact and a command in a tree of thousands of folders still ends.
 * Before, one refused watch turned every question into a walk of the whole tree: a `mkdir -p` of
 * 3 chains 2,000 deep in a 10 MB quota never ended (a hold and a walk of thousands of deep folders
 * per new folder). Folders without a watch send no events, so such a command is caught by polling
 * or undone when it ends: the quota holds either way. The limit is set in a user namespace of the child's own
 * (/proc/sys/user/max_inotify_watches), so the rest of the machine keeps its watches.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';

const WATCHES = 2000;

const CHILD = `
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Tools, treeUsage } from './bundle.mjs';
const [base, watches] = process.argv.slice(2);
fs.writeFileSync('/proc/sys/user/max_inotify_watches', watches);
const out = {};

// A walk that counts what usage.ts counts: every entry below the root, by its size plus blocks reserved past it; a folder at least 4 KiB.
const charged = (st) => {
  const block = Math.max(4096, st.blksize);
  const size = st.size + Math.max(0, st.blocks * 512 - Math.ceil(st.size / block) * block);
  return st.isDirectory() ? Math.max(4096, size) : size;
};
const walk = (root) => {
  let bytes = 0, files = 0;
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop();
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = dir + '/' + e.name;
      const st = fs.lstatSync(p);
      bytes += charged(st);
      if (e.isDirectory()) stack.push(p); else files++;
    }
  }
  return { bytes, files };
};

// 1. Usage stays exact in a tree of more folders than there are watches, changed by another process.
const tree = path.join(base, 'tree');
for (let i = 0; i < 40; i++) {
  const chain = path.join(tree, 'c' + i, ...Array.from({ length: 60 }, () => 'd'));
  fs.mkdirSync(chain, { recursive: true });
  fs.writeFileSync(path.join(chain, 'f'), 'x'.repeat(100));
}
const first = await treeUsage(tree);
out.first = [first, walk(tree)];
const deep = path.join(tree, 'c39', ...Array.from({ length: 60 }, () => 'd'));
execFileSync('sh', ['-c', 'head -c 50000 /dev/zero >> "$1/f"; mkdir -p "$1/new/sub"; echo hi > "$1/new/sub/g"; rm -rf "$2"', 'sh', deep, path.join(tree, 'c38', 'd', 'd')]);
out.changed = [await treeUsage(tree), walk(tree)];

// 2. A command making folders past the quota in a tree past the limit ends, stopped, and is undone.
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: base, sandbox: 'validated', identity_separation: 'off', quota_per_user_mb: 10 };
const who = { __user__: { id: 'alice', name: 'Alice' }, __metadata__: { chat_id: 'c1' } };
const call = async (fn, args) => JSON.parse(await tools[fn]({ ...args, ...who }));
const chains = [0, 1, 2].map((k) => 'c' + k + '/' + Array.from({ length: 2000 }, () => 'd').join('/'));
await call('shed_create_file', { zone: 'storage', path: 'f.txt', content: 'work\\n' });
await call('shed_lockedit_open', { zone: 'storage', path: 'f.txt' });
let t = performance.now();
out.lockedit = await call('shed_lockedit_exec', { zone: 'storage', path: 'f.txt', cmd: 'mkdir', args: ['-p', ...chains], timeout: 120 });
out.lockeditMs = performance.now() - t;
out.cancel = (await call('shed_lockedit_cancel', { zone: 'storage', path: 'f.txt' })).success;
t = performance.now();
out.exec = await call('shed_exec', { zone: 'storage', cmd: 'mkdir', args: ['-p', ...chains], timeout: 120 });
out.execMs = performance.now() - t;
out.storage = fs.readdirSync(path.join(base, 'users', 'alice', 'Storage', 'data')).sort();
out.after = (await call('shed_stats', {})).success;
process.stdout.write(JSON.stringify(out));
`;

const { banner: BANNER } = createRequire(import.meta.url)('../../build/bundle-banner.cjs') as { banner: string };
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-watch-limit-'));
  await build({
    stdin: { contents: `export { Tools } from './src/index.ts';\nexport { treeUsage } from './src/core/services/quota/usage.ts';\n`, resolveDir: path.resolve('.'), loader: 'ts' },
    outfile: path.join(dir, 'bundle.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
    loader: { '.wasm': 'binary', '.pl': 'text' },
    banner: { js: BANNER },
  });
  fs.writeFileSync(path.join(dir, 'child.mjs'), CHILD);
}, 60_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const userNamespaces = spawnSync('unshare', ['-U', '-r', 'true']).status === 0;

it.skipIf(!userNamespaces)(`with ${WATCHES} inotify watches: usage stays exact, and commands making thousands of folders past the quota end, undone`, async () => {
  const base = path.join(dir, 'base');
  fs.mkdirSync(base);
  const report = await new Promise<Record<string, any>>((resolve, reject) => { // eslint-disable-line @typescript-eslint/no-explicit-any -- the child's JSON report
    const p = spawn('unshare', ['-U', '-r', process.execPath, path.join(dir, 'child.mjs'), base, String(WATCHES)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (text += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(text) as Record<string, unknown>) : reject(new Error(`child exited ${code}: ${err}`))));
  });
  const [usage, walked] = report.first;
  expect(usage).toEqual(walked);
  expect(usage.files).toBe(40);
  const [changed, walkedAfter] = report.changed;
  expect(changed).toEqual(walkedAfter);
  // +50,000 bytes and 2 folders with a file in the deepest folder of c39; c38's 59 deepest folders and its file gone.
  expect(changed.bytes - usage.bytes).toBe(50_000 + 2 * 4096 + 3 - 59 * 4096 - 100);

  for (const what of ['lockedit', 'exec'] as const) {
    const r = report[what];
    expect(r.error?.code, `${what}: ${JSON.stringify(r)}`).toBe('QUOTA_EXCEEDED');
    // Without events from the folders it makes, the command is caught by polling, or undone once it ends.
    console.log(`${what}: ${(report[`${what}Ms`] / 1000).toFixed(1)} s, stopped while it ran: ${r.error.details.stopped}, ${(r.error.details.over_by_bytes / 1048576).toFixed(1)} MB over`);
    expect(report[`${what}Ms`], `${what} ended well before its timeout`).toBeLessThan(60_000);
  }
  expect(report.storage).toEqual(['f.txt']);
  expect(report.cancel).toBe(true);
  expect(report.after).toBe(true);
}, 300_000);
