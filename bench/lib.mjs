// Helpers shared by the bench scripts: medians, the aligned result table, the build, child RSS.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Prints rows {scenario, ours, anchor, anchorValue, ratio, target, result} as one aligned table. */
export function printTable(list) {
  const cols = [
    ['scenario', 'Scenario'],
    ['ours', 'Fileshed'],
    ['anchor', 'Anchor'],
    ['anchorValue', 'Anchor median'],
    ['ratio', 'Ratio'],
    ['target', 'Target'],
    ['result', 'Result'],
  ];
  const width = cols.map(([key, title]) => Math.max(title.length, ...list.map((r) => String(r[key]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(width[i]) : String(c).padStart(width[i]))).join('  ');
  console.log(line(cols.map(([, title]) => title)));
  console.log(width.map((w) => '-'.repeat(w)).join('  '));
  for (const r of list) console.log(line(cols.map(([key]) => r[key])));
}

/**
 * `npm run bench:smoke` sets BENCH_SMOKE=1: every script runs on tiny sizes, so CI proves the
 * scripts still work (imports, build, calls) without spending minutes measuring.
 */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/** The full-size value, or the tiny one in smoke mode. */
export function sized(full, tiny) {
  return SMOKE ? tiny : full;
}

/** The repository root and the built plugin module. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE = path.join(ROOT, 'dist', 'fileshed.mjs');

/** Rebuilds dist/ (node build.mjs) when a source file is newer than the bundle. */
export function ensureBuilt() {
  const newest = (dir) => fs.readdirSync(dir, { withFileTypes: true }).reduce((m, e) => Math.max(m, e.isDirectory() ? newest(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).mtimeMs), 0);
  if (fs.existsSync(BUNDLE) && newest(path.join(ROOT, 'src')) <= fs.statSync(BUNDLE).mtimeMs) return;
  process.stderr.write('building dist/fileshed.mjs (node build.mjs) ...\n');
  const r = spawnSync(process.execPath, ['build.mjs'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error('node build.mjs failed (another file may be mid-edit: retry)');
}

/** Peak RSS (VmHWM, bytes) of each live child process of `pid` (the SQLite engine's processes). */
export function childPeakRss(pid) {
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = fs.readFileSync(`/proc/${name}/status`, 'utf8');
      if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== pid) continue;
      const hwm = /^VmHWM:\s+(\d+) kB/m.exec(status);
      if (hwm) out.push(Number(hwm[1]) * 1024);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Milliseconds one awaited call of `fn` takes. */
export async function elapsedMs(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/**
 * Medians of `ours` and `anchor` run alternately (`warmup` rounds first, not counted), so a change
 * in the machine's load falls on both alike.
 */
export async function alternating(runs, warmup, ours, anchor) {
  for (let i = 0; i < warmup; i++) {
    await ours();
    await anchor();
  }
  const a = [];
  const b = [];
  for (let i = 0; i < runs; i++) {
    a.push(await elapsedMs(ours));
    b.push(await elapsedMs(anchor));
  }
  return { ours: median(a), anchor: median(b) };
}

/** Spawns a program and waits, collecting its stdout as the executor does (the bare anchor). */
export function spawnOutput(file, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', () => {});
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString()) : reject(new Error(`${file} exited ${code}`))));
  });
}
