// Command execution (issue 3): `node bench/exec.mjs`.
//
//   a) validated mode: `shed_exec cat small.txt` through the built plugin module (dist/fileshed.mjs:
//      dispatcher, zone, policy, quota for the file-size limit, launcher with the limits, capture)
//      against a bare `spawn('cat', ['small.txt'])` in the same folder, stdout collected;
//   b) landlock mode: the same call (the launcher also applies the Landlock ruleset and the seccomp
//      filter) against the same bare spawn of cat;
//   c) bwrap mode: the same call against a bare `bwrap <the same sandbox arguments> -- cat small.txt`
//      (arguments from src/core/exec/bwrap.ts, bundled by esbuild, so both sides build the same sandbox).
// Calls alternate between the two sides; medians of RUNS calls after WARMUP warm-ups, ratios side by side.
// Target (SPEC section 14): at most 1.5x the bare equivalent.
//   d) the walls around a command (landlock mode): `shed_exec cat small.txt` in a zone holding 0, 10
//      and 1,000 blocked files (blocked_patterns set: each command finds them and moves them out of
//      the zone and back, journalled) against the same call in the same zone with blocked_patterns
//      empty; and in a group space holding 10 and 1,000 files of another member (each made read-only
//      for the command, compared and set back after it) against the same call by their owner.
// Temp folders are removed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { median, sized } from './lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.RUNS ?? sized(60, 3));
const WARMUP = sized(10, 1);
const TARGET = 1.5;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-exec-bench-'));
const log = (t) => process.stderr.write(`${t}\n`);

async function timed(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** Spawns and waits, collecting stdout like the executor does. */
function run(file, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', () => {});
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString()) : reject(new Error(`${file} exited ${code}`))));
  });
}

async function loadModules() {
  const bundle = path.join(root, 'dist', 'fileshed.mjs');
  if (!fs.existsSync(bundle)) throw new Error('dist/fileshed.mjs is missing: run `node build.mjs` first');
  const { Tools } = await import(pathToFileURL(bundle).href);
  const sandboxFile = path.join(work, 'sandbox.mjs');
  await build({ entryPoints: [path.join(root, 'src/core/exec/bwrap.ts')], bundle: true, platform: 'node', format: 'esm', outfile: sandboxFile, logLevel: 'warning' });
  const { bwrapArgs } = await import(pathToFileURL(sandboxFile).href);
  return { Tools, bwrapArgs };
}

async function measure(label, ours, bare) {
  for (let i = 0; i < WARMUP; i++) {
    await ours();
    await bare();
  }
  const a = [];
  const b = [];
  for (let i = 0; i < RUNS; i++) {
    a.push(await timed(ours));
    b.push(await timed(bare));
  }
  const row = { label, ours: median(a), bare: median(b) };
  row.ratio = row.ours / row.bare;
  return row;
}

async function main() {
  const { Tools, bwrapArgs } = await loadModules();
  const rows = [];
  for (const mode of ['validated', 'landlock', 'bwrap']) {
    const base = path.join(work, mode);
    const tools = new Tools();
    tools.valves = { ...tools.valves, storage_base_path: base, sandbox: mode };
    const meta = { __user__: { id: 'bench', name: 'Bench' }, __metadata__: { chat_id: 'c1' } };
    const zone = path.join(base, 'users', 'bench', 'Storage', 'data');
    fs.mkdirSync(zone, { recursive: true });
    fs.writeFileSync(path.join(zone, 'small.txt'), 'a small file\n'.repeat(10));
    const expected = fs.readFileSync(path.join(zone, 'small.txt'), 'utf8');
    const ours = async () => {
      const r = JSON.parse(await tools.shed_exec({ zone: 'storage', cmd: 'cat', args: ['small.txt'], ...meta }));
      if (!r.success || r.data.stdout !== expected || r.data.sandbox !== mode) throw new Error(`shed_exec failed: ${JSON.stringify(r).slice(0, 300)}`);
    };
    const real = fs.realpathSync(zone);
    const bare =
      mode !== 'bwrap'
        ? async () => {
            if ((await run('cat', ['small.txt'], real)) !== expected) throw new Error('bare cat');
          }
        : async () => {
            const args = [...bwrapArgs({ zoneRoot: real, readonly: false, network: false, protect: [] }), '--', '/usr/bin/cat', 'small.txt'];
            if ((await run('bwrap', args, '/')) !== expected) throw new Error('bare bwrap cat');
          };
    log(`${mode}: ${WARMUP} warm-ups and ${RUNS} calls per side ...`);
    rows.push(await measure(mode === 'bwrap' ? 'shed_exec cat (bwrap) vs bwrap … cat' : `shed_exec cat (${mode}) vs spawn('cat')`, ours, bare));
  }
  rows.push(...(await wallRows(Tools)));
  const w = Math.max(...rows.map((r) => r.label.length));
  console.log(`${'case'.padEnd(w)}  ${'ours ms'.padStart(8)}  ${'bare ms'.padStart(8)}  ${'ratio'.padStart(6)}  target ≤ ${TARGET}x`);
  // The wall rows measure a cost (the same call with and without the wall), not a target.
  const verdict = (r) => (r.wall ? `+${(r.ours - r.bare).toFixed(2)} ms per command` : r.ratio <= TARGET ? 'ok' : 'MISSED');
  for (const r of rows) console.log(`${r.label.padEnd(w)}  ${r.ours.toFixed(2).padStart(8)}  ${r.bare.toFixed(2).padStart(8)}  ${r.ratio.toFixed(2).padStart(5)}x  ${verdict(r)}`);
}

/** d) What hiding blocked files and guarding group files cost per command. */
async function wallRows(Tools) {
  const rows = [];
  const meta = (user) => ({ __user__: { id: user, name: user }, __metadata__: { chat_id: 'c1' } });
  const catIn = (tools, zone, user = 'bench') => async () => {
    const r = JSON.parse(await tools.shed_exec({ ...zone, cmd: 'cat', args: ['small.txt'], ...meta(user) }));
    if (!r.success || r.data.returncode !== 0) throw new Error(`shed_exec failed: ${JSON.stringify(r).slice(0, 300)}`);
  };
  for (const n of [0, 10, sized(1000, 20)]) {
    const base = path.join(work, `blocked-${n}`);
    const zone = path.join(base, 'users', 'bench', 'Storage', 'data');
    fs.mkdirSync(path.join(zone, 'keys'), { recursive: true });
    fs.writeFileSync(path.join(zone, 'small.txt'), 'a small file\n');
    for (let i = 0; i < n; i++) fs.writeFileSync(path.join(zone, 'keys', `k${i}.pem`), `secret ${i}\n`);
    const blocked = new Tools();
    blocked.valves = { ...blocked.valves, storage_base_path: base, sandbox: 'landlock', blocked_patterns: '*.pem, .env' };
    const open = new Tools();
    open.valves = { ...open.valves, storage_base_path: base, sandbox: 'landlock' };
    log(`blocked files ${n}: ${WARMUP} warm-ups and ${RUNS} calls per side ...`);
    rows.push({ ...(await measure(`shed_exec cat, zone holding ${n} blocked files vs no blocked_patterns`, catIn(blocked, { zone: 'storage' }), catIn(open, { zone: 'storage' }))), wall: true });
  }
  for (const n of [10, sized(1000, 20)]) {
    const base = path.join(work, `group-${n}`);
    const tools = new Tools();
    tools.valves = { ...tools.valves, storage_base_path: base, sandbox: 'landlock', group_default_mode: 'owner' };
    const { admin } = await import(pathToFileURL(path.join(root, 'dist', 'fileshed.mjs')).href);
    await admin.groups.add(base, 'team', 'Team');
    for (const u of ['alice', 'bob']) await admin.groups.addMember(base, 'team', u);
    const g = { zone: 'group', group: 'team' };
    const made = JSON.parse(await tools.shed_create_file({ ...g, path: 'small.txt', content: 'a small file\n', mode: 'group', ...meta('alice') }));
    if (!made.success) throw new Error(JSON.stringify(made));
    for (let i = 0; i < n; i++) await tools.shed_create_file({ ...g, path: `d/f${i}.txt`, content: `alice ${i}\n`, ...meta('alice') });
    log(`group files ${n}: ${WARMUP} warm-ups and ${RUNS} calls per side ...`);
    rows.push({ ...(await measure(`shed_exec cat, group with ${n} files of another member vs their owner`, catIn(tools, g, 'bob'), catIn(tools, g, 'alice'))), wall: true });
  }
  return rows;
}

try {
  await main();
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
