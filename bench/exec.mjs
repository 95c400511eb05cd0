// Command execution: `node bench/exec.mjs` (dist/fileshed.mjs must be built).
//
//   a) validated mode: `shed_exec cat small.txt` through the built plugin module (dispatcher, zone,
//      policy, quota for the file-size limit, the fork server with the limits, capture) against a bare
//      `spawn('cat', ['small.txt'])` in the same folder, stdout collected;
//   b) landlock mode: the same call (the launcher also applies the Landlock ruleset, the seccomp
//      filter and drops every capability) against the same bare spawn of cat;
//   c) bwrap mode: the same call against a bare `bwrap <the same sandbox arguments> -- cat small.txt`
//      (arguments from src/core/services/exec/launcher/bwrap.ts, bundled by esbuild, so both sides build the same sandbox;
//      ours also starts the inner launcher that applies Landlock and seccomp inside);
//   d) the event loop's longest block per command: a setImmediate chain runs beside the calls; the
//      longest stretch between two of its turns during each call, in wall time and in the CPU time the
//      process used meanwhile (median and p90 over the calls), for shed_exec in each mode and for the
//      bare spawn; the chain alone (no call) shows what the measurement itself reads;
//   e) 50 users running commands at once: 50 loops (one user each) run shed_exec cat for a while,
//      against 50 loops of bare spawn('cat') (landlock) or of bare bwrap … cat (bwrap): commands per
//      second, the event loop's longest delay (monitorEventLoopDelay), and a 51st user's shed_read
//      latency (p50/p99) beside its unloaded figure.
// Calls alternate between the two sides; medians of RUNS calls after WARMUP warm-ups, ratios side by side.
//   f) the walls around a command (landlock mode): `shed_exec cat small.txt` in a zone holding 0, 10
//      and 1,000 blocked files (blocked_patterns set: each command finds them and moves them out of
//      the zone and back, journalled) against the same call in the same zone with blocked_patterns
//      empty; and in a group space holding 10 and 1,000 files of another member (each compared after
//      the command; without identity separation also made read-only for it and set back) against the
//      same call by their owner.
// Targets: at most 1.5x the bare equivalent; a block of at most 0.5 ms per command. Temp folders are removed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { alternating, elapsedMs, median, sized, spawnOutput } from './lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.RUNS ?? sized(60, 3));
const WARMUP = sized(10, 1);
const TARGET = 1.5;
const BLOCK_TARGET_MS = 0.5;
const USERS = sized(50, 3);
const LOAD_MS = sized(5000, 300);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-exec-bench-'));
// Passable by users' own uids, as /tmp is: commands run as the user (identity separation, the default as root).
fs.chmodSync(work, 0o711);
const log = (t) => process.stderr.write(`${t}\n`);
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function loadModules() {
  const bundle = path.join(root, 'dist', 'fileshed.mjs');
  if (!fs.existsSync(bundle)) throw new Error('dist/fileshed.mjs is missing: run `node build.mjs` first');
  const { Tools } = await import(pathToFileURL(bundle).href);
  const sandboxFile = path.join(work, 'sandbox.mjs');
  await build({ entryPoints: [path.join(root, 'src/core/services/exec/launcher/bwrap.ts')], bundle: true, platform: 'node', format: 'esm', outfile: sandboxFile, logLevel: 'warning' });
  const { bwrapArgs } = await import(pathToFileURL(sandboxFile).href);
  return { Tools, bwrapArgs };
}

async function measure(label, ours, bare) {
  const m = await alternating(RUNS, WARMUP, ours, bare);
  return { label, ours: m.ours, bare: m.anchor, ratio: m.ours / m.anchor };
}

/**
 * The longest stretch the event loop spent away from a setImmediate chain while `fn` runs, in ms, two
 * ways: wall time (includes the machine's other processes taking the CPU away, on a shared machine),
 * and the CPU time the process used in that stretch (bounded by the wall time: work done on the loop,
 * but a wait inside a system call, such as spawn's wait for exec, is not counted).
 */
async function longestBlock(fn) {
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  const longest = { wall: 0, cpu: 0 };
  let on = true;
  const turn = () => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
    longest.wall = Math.max(longest.wall, now - last);
    longest.cpu = Math.max(longest.cpu, Math.min(now - last, cpuMs));
    last = now;
    lastCpu = cpu;
    if (on) setImmediate(turn);
  };
  setImmediate(turn);
  await fn();
  on = false;
  await new Promise((r) => setImmediate(r));
  return longest;
}

async function blocks(fn) {
  for (let i = 0; i < WARMUP; i++) await fn();
  const xs = [];
  for (let i = 0; i < RUNS; i++) xs.push(await longestBlock(fn));
  const wall = xs.map((x) => x.wall);
  const cpu = xs.map((x) => x.cpu);
  return { wall: median(wall), wall90: pct(wall, 0.9), cpu: median(cpu), cpu90: pct(cpu, 0.9) };
}

/** `users` loops calling `fn(user)` for LOAD_MS: completions per second, and the loop's longest delay. */
async function load(users, fn) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  const until = performance.now() + LOAD_MS;
  let done = 0;
  h.enable();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: users }, async (_, u) => {
    while (performance.now() < until) {
      await fn(u);
      done++;
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  h.disable();
  return { perSecond: done / seconds, maxDelayMs: h.max / 1e6, p99DelayMs: h.percentile(99) / 1e6 };
}

function userSetup(base, user) {
  const zone = path.join(base, 'users', user, 'Storage', 'data');
  fs.mkdirSync(zone, { recursive: true });
  fs.writeFileSync(path.join(zone, 'small.txt'), 'a small file\n'.repeat(10));
  return fs.realpathSync(zone);
}

async function main() {
  const { Tools, bwrapArgs } = await loadModules();
  const rows = [];
  const blockRows = [];
  const meta = (user) => ({ __user__: { id: user, name: user }, __metadata__: { chat_id: 'c1' } });
  const expected = 'a small file\n'.repeat(10);
  const tools = {};
  for (const mode of ['validated', 'landlock', 'bwrap']) {
    const base = path.join(work, mode);
    const t = (tools[mode] = new Tools());
    t.valves = { ...t.valves, storage_base_path: base, sandbox: mode };
    const real = userSetup(base, 'bench');
    // The bare side reads its own copy, the server's: under identity separation the zone is the user's
    // (0700), which a bare program run as the server's uid without capabilities (bwrap drops them) cannot read.
    const bareRoot = fs.mkdtempSync(path.join(work, `bare-${mode}-`));
    fs.copyFileSync(path.join(real, 'small.txt'), path.join(bareRoot, 'small.txt'));
    const ours = async () => {
      const r = JSON.parse(await t.shed_exec({ zone: 'storage', cmd: 'cat', args: ['small.txt'], ...meta('bench') }));
      if (!r.success || r.data.stdout !== expected || r.data.sandbox !== mode) throw new Error(`shed_exec failed: ${JSON.stringify(r).slice(0, 300)}`);
    };
    const bare =
      mode !== 'bwrap'
        ? async () => {
            if ((await spawnOutput('cat', ['small.txt'], bareRoot)) !== expected) throw new Error('bare cat');
          }
        : async () => {
            const args = [...bwrapArgs({ zoneRoot: bareRoot, readonly: false, network: false }), '--', '/usr/bin/cat', 'small.txt'];
            if ((await spawnOutput('bwrap', args, '/')) !== expected) throw new Error('bare bwrap cat');
          };
    log(`${mode}: ${WARMUP} warm-ups and ${RUNS} calls per side ...`);
    rows.push(await measure(mode === 'bwrap' ? 'shed_exec cat (bwrap) vs bwrap … cat' : `shed_exec cat (${mode}) vs spawn('cat')`, ours, bare));
    blockRows.push({ label: `shed_exec cat (${mode})`, ...(await blocks(ours)) });
    if (mode === 'validated') {
      blockRows.push({ label: "bare spawn('cat')", ...(await blocks(bare)) });
      blockRows.push({ label: 'no call (the chain alone, 5 ms)', ...(await blocks(() => new Promise((r) => setTimeout(r, 5)))) });
    }
  }
  rows.push(...(await wallRows(Tools)));
  const w = Math.max(...rows.map((r) => r.label.length));
  console.log(`${'case'.padEnd(w)}  ${'ours ms'.padStart(8)}  ${'bare ms'.padStart(8)}  ${'ratio'.padStart(6)}  target ≤ ${TARGET}x`);
  // The wall rows measure a cost (the same call with and without the wall), not a target.
  const verdict = (r) => (r.wall ? `+${(r.ours - r.bare).toFixed(2)} ms per command` : r.ratio <= TARGET ? 'ok' : 'MISSED');
  for (const r of rows) console.log(`${r.label.padEnd(w)}  ${r.ours.toFixed(2).padStart(8)}  ${r.bare.toFixed(2).padStart(8)}  ${r.ratio.toFixed(2).padStart(5)}x  ${verdict(r)}`);
  const bw = Math.max(...blockRows.map((r) => r.label.length));
  console.log(`\n${'event loop: longest block per call'.padEnd(bw)}  wall p50/p90 ms   CPU p50/p90 ms   target ≤ ${BLOCK_TARGET_MS} ms (shed_exec, CPU)`);
  const f = (a, b) => `${a.toFixed(2)}/${b.toFixed(2)}`.padStart(15);
  for (const r of blockRows) console.log(`${r.label.padEnd(bw)}  ${f(r.wall, r.wall90)}  ${f(r.cpu, r.cpu90)}${r.label.startsWith('shed_exec') ? `  ${r.cpu <= BLOCK_TARGET_MS ? 'ok' : 'MISSED'}` : ''}`);

  // e) many users at once: landlock against a bare spawn of cat, bwrap against a bare bwrap of cat.
  for (const mode of ['landlock', 'bwrap']) await manyUsers(mode, tools[mode], bwrapArgs, meta);
}

async function manyUsers(mode, t, bwrapArgs, meta) {
  const base = path.join(work, mode);
  const zones = Array.from({ length: USERS + 1 }, (_, u) => userSetup(base, `u${u}`));
  const reader = `u${USERS}`;
  const read = async () => {
    const r = JSON.parse(await t.shed_read({ zone: 'storage', path: 'small.txt', ...meta(reader) }));
    if (!r.success) throw new Error(`shed_read failed: ${JSON.stringify(r).slice(0, 300)}`);
  };
  const readLatencies = async (busy) => {
    const xs = [];
    while (!busy.done) {
      xs.push(await elapsedMs(read));
      // A read may finish without leaving the microtask queue: let the event loop turn, as requests arriving over HTTP would.
      await new Promise((r) => setImmediate(r));
    }
    return xs;
  };
  log(`${USERS} users at once (${mode}), ${LOAD_MS} ms per side ...`);
  const unloaded = [];
  for (let i = 0; i < RUNS * 2; i++) unloaded.push(await elapsedMs(read));
  const busy = { done: false };
  const readsDuring = readLatencies(busy);
  const ours = await load(USERS, async (u) => {
    const r = JSON.parse(await t.shed_exec({ zone: 'storage', cmd: 'cat', args: ['small.txt'], ...meta(`u${u}`) }));
    if (!r.success) throw new Error(`shed_exec failed: ${JSON.stringify(r).slice(0, 300)}`);
  });
  busy.done = true;
  const reads = await readsDuring;
  // The bare side reads copies of the server's own (the users' zones are theirs under identity separation).
  const bareZones = zones.map((z, u) => {
    const dir = fs.mkdtempSync(path.join(work, `bare-load-${mode}-${u}-`));
    fs.copyFileSync(path.join(z, 'small.txt'), path.join(dir, 'small.txt'));
    return dir;
  });
  const bare =
    mode === 'bwrap'
      ? await load(USERS, (u) => spawnOutput('bwrap', [...bwrapArgs({ zoneRoot: bareZones[u], readonly: false, network: false }), '--', '/usr/bin/cat', 'small.txt'], '/'))
      : await load(USERS, (u) => spawnOutput('cat', ['small.txt'], bareZones[u]));
  const anchor = mode === 'bwrap' ? 'bare bwrap loop' : 'bare spawn loop';
  console.log(`\n${USERS} users running commands at once (${mode})   ours        ${anchor}   ratio`);
  console.log(`commands per second                        ${ours.perSecond.toFixed(0).padStart(6)}      ${bare.perSecond.toFixed(0).padStart(6)}            ${(ours.perSecond / bare.perSecond).toFixed(2)}x`);
  console.log(`event loop: longest delay ms               ${ours.maxDelayMs.toFixed(1).padStart(6)}      ${bare.maxDelayMs.toFixed(1).padStart(6)}`);
  console.log(`event loop: p99 delay ms                   ${ours.p99DelayMs.toFixed(1).padStart(6)}      ${bare.p99DelayMs.toFixed(1).padStart(6)}`);
  console.log(`another user's shed_read p50/p99 ms        ${median(reads).toFixed(2)}/${pct(reads, 0.99).toFixed(2)} (unloaded ${median(unloaded).toFixed(2)}/${pct(unloaded, 0.99).toFixed(2)}, ${reads.length} reads)`);
}

/** f) What hiding blocked files and guarding group files cost per command. */
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
