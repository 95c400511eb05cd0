/**
 * The quota holds per call, not per file. With quota_per_user_mb=10, an archive of 30 files of 9 MB
 * (each under the per-file limit) must not fill the disk: the command is stopped once the zone
 * passes its quota, the overshoot while it runs stays within one max_file_size_mb (also when each
 * file lands in a folder made just before, not yet watched), and then what it added is taken back:
 * the zone ends where it started, and the response says so (QUOTA_EXCEEDED, details.stopped,
 * details.removed / cut_back). Sparse files (truncate -s, dd seek) count by their apparent size and
 * cannot pass the per-file cap, and single-stream writers (dd, yes) stop at what is left. Commands
 * run below the server's priority, so the watch wins the CPU from a fast writer. Every case in every
 * sandbox mode. Measured overshoots are printed.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';
import { installed, MODES } from './exec-harness.js';

const MIB = 1024 * 1024;
const QUOTA_MB = 10;
const MAX_FILE_MB = 10;
let work: string;

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-quota-src-'));
  const src = path.join(work, 'src');
  fs.mkdirSync(src);
  // The archive: 30 files of 9 MB of zeros, about 260 KB compressed (sparse sources: no disk used).
  const nested = path.join(work, 'nested');
  for (let i = 0; i < 30; i++) {
    const name = `f${String(i).padStart(2, '0')}.bin`;
    // The same files, each in folders of its own (d07/e/f07.bin) for the nested archive.
    for (const dir of [src, path.join(nested, `d${i}`, 'e')]) {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, name), '');
      fs.truncateSync(path.join(dir, name), 9 * MIB);
    }
  }
  execFileSync('tar', ['-czf', path.join(work, 'bomb.tar.gz'), '-C', src, '.']);
  execFileSync('tar', ['-czf', path.join(work, 'nested.tar.gz'), '-C', nested, '.']);
  execFileSync('zip', ['-q', '-r', path.join(work, 'bomb.zip'), '.'], { cwd: src });
  fs.rmSync(src, { recursive: true });
  fs.rmSync(nested, { recursive: true });
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Apparent bytes under a folder (what the quota counts). */
function usedBytes(root: string): number {
  let total = 0;
  const visit = (p: string) => {
    for (const e of fs.readdirSync(p, { withFileTypes: true })) {
      if (p === root && e.name === '.git') continue; // the repository's own growth (a commit) is not the command's
      const full = path.join(p, e.name);
      if (e.isDirectory()) visit(full);
      else total += fs.lstatSync(full).size;
    }
  };
  if (fs.existsSync(root)) visit(root);
  return total;
}

function userBytes(s: Shed): number {
  const home = path.join(s.base, 'users', 'alice');
  return ['Storage/data', 'Documents/data', 'Uploads'].reduce((n, d) => n + usedBytes(path.join(home, d)), 0);
}

const overshoots: string[] = [];
afterAll(() => console.log(`quota overshoot (quota ${QUOTA_MB} MB, max_file_size_mb ${MAX_FILE_MB}):\n  ${overshoots.join('\n  ')}`));

/** Stopped at the quota (overshoot while it ran within one file), then taken back to `before` bytes or less. */
function expectStopped(r: Result, s: Shed, label: string, before: number): void {
  const used = userBytes(s);
  const over = Number(r.error?.details?.over_by_bytes ?? 0);
  overshoots.push(`${label}: ${(over / MIB).toFixed(2)} MB over while it ran; ${(used / MIB).toFixed(2)} MB used after`);
  expect(r.success, JSON.stringify(r.data)).toBe(false);
  expect(r.error!.code).toBe('QUOTA_EXCEEDED');
  expect(r.error!.hint).toContain('shed_delete');
  expect(r.error!.details!.quota_bytes).toBe(QUOTA_MB * MIB);
  expect(over, 'overshoot within one max_file_size_mb').toBeLessThanOrEqual(MAX_FILE_MB * MIB);
  expect(used, 'what it added was taken back').toBeLessThanOrEqual(before);
  expect(r.error!.details!.used_bytes).toBeLessThanOrEqual(QUOTA_MB * MIB);
  expect((r.error!.details!.removed as string[]).length + (r.error!.details!.cut_back as unknown[]).length).toBeGreaterThan(0);
}

/** The command could not grow the zone past its quota at all (per-file cap), whatever it answered. */
function expectWithin(r: Result, s: Shed, label: string): void {
  const used = userBytes(s);
  overshoots.push(`${label}: ${((used - QUOTA_MB * MIB) / MIB).toFixed(2)} MB over (${(used / MIB).toFixed(2)} MB used)`);
  expect(used).toBeLessThanOrEqual(QUOTA_MB * MIB);
  if (r.success) expect(r.data!.returncode).not.toBe(0);
}

describe.each(MODES)('sandbox %s', (mode) => {
  const shed = (zone: 'storage' | 'documents') => {
    const s = makeShed({ sandbox: mode, quota_per_user_mb: QUOTA_MB, max_file_size_mb: MAX_FILE_MB });
    const dir = s.zonePath(zone);
    fs.mkdirSync(dir, { recursive: true });
    return { s, dir };
  };

  it.each(['storage', 'documents'] as const)('tar -xzf of 30 × 9 MB (260 KB archive) in %s is stopped near the quota', async (zone) => {
    const { s, dir } = shed(zone);
    try {
      fs.copyFileSync(path.join(work, 'bomb.tar.gz'), path.join(dir, 'bomb.tar.gz'));
      const before = userBytes(s);
      const r = await s.call('shed_exec', { zone, cmd: 'tar', args: ['-xzf', 'bomb.tar.gz'] });
      expectStopped(r, s, `${mode} ${zone} tar -xzf`, before);
      expect(r.error!.details!.stopped).toBe(true);
      expect(fs.readdirSync(dir).filter((n) => n !== '.git')).toEqual(['bomb.tar.gz']);
      if (zone === 'documents') {
        // Nothing is left to commit: the history matches the disk.
        const st = await s.call('shed_exec', { zone, cmd: 'git', args: ['status', '--porcelain'] });
        expect(st.data!.stdout).toBe('');
      }
      // Back within the quota: the next write works.
      const next = await s.call('shed_create_file', { zone, path: 'more.txt', content: 'x'.repeat(1000) });
      expect(next.success, JSON.stringify(next.error)).toBe(true);
    } finally {
      s.cleanup();
    }
  });

  it('tar -xzf of the same files, each in new folders (d07/e/f07.bin), is stopped near the quota', async () => {
    const { s, dir } = shed('storage');
    try {
      fs.copyFileSync(path.join(work, 'nested.tar.gz'), path.join(dir, 'nested.tar.gz'));
      const before = userBytes(s);
      const r = await s.call('shed_exec', { zone: 'storage', cmd: 'tar', args: ['-xzf', 'nested.tar.gz'] });
      expectStopped(r, s, `${mode} nested tar -xzf`, before);
      expect(r.error!.details!.stopped).toBe(true);
    } finally {
      s.cleanup();
    }
  });

  /** Nice values of the running processes whose command line holds `marker`. */
  function nicesOf(marker: string): number[] {
    const nices: number[] = [];
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) continue;
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        nices.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
      } catch {
        // ended meanwhile
      }
    }
    return nices;
  }

  it.each([
    ['below the server priority once past its first 50 ms (nice 10)', false, 10],
    ['at nice 19 when one more file could pass the quota', true, 19],
  ] as const)('runs a command %s', async (_label, nearQuota, nice) => {
    const s = nearQuota ? shed('storage').s : makeShed({ sandbox: mode });
    try {
      // A distinctive duration finds the command's processes in /proc while it runs.
      const marker = `${nearQuota ? '1.6731' : '1.6732'}${String(process.pid).padStart(7, '0')}`; // this process's alone
      const pending = s.call('shed_exec', { zone: 'storage', cmd: 'sleep', args: [marker] });
      await new Promise((r) => setTimeout(r, 300));
      let nices = nicesOf(marker);
      // Started (a first sandbox may take a while) and lowered by its supervisor from 50 ms on (near
      // the quota: from its start): on a loaded machine, a little later.
      for (let i = 0; i < 20 && (nices.length === 0 || (!nearQuota && nices.some((n) => n !== nice))); i++) {
        await new Promise((r) => setTimeout(r, 50));
        nices = nicesOf(marker);
      }
      expect((await pending).success).toBe(true);
      expect(nices.length).toBeGreaterThan(0);
      expect(new Set(nices)).toEqual(new Set([nice]));
    } finally {
      s.cleanup();
    }
  });

  it.runIf(installed('unzip'))('unzip of the same files as a zip is stopped too', async () => {
    const { s, dir } = shed('storage');
    try {
      fs.copyFileSync(path.join(work, 'bomb.zip'), path.join(dir, 'bomb.zip'));
      const before = userBytes(s);
      const r = await s.call('shed_exec', { zone: 'storage', cmd: 'unzip', args: ['-q', 'bomb.zip'] });
      expectStopped(r, s, `${mode} unzip`, before);
    } finally {
      s.cleanup();
    }
  });

  it('cp -r of a folder that doubles the usage ends in QUOTA_EXCEEDED (stopped or over at the end)', async () => {
    const { s, dir } = shed('storage');
    try {
      fs.mkdirSync(path.join(dir, 'src'));
      // 8 files of 1 MB: each fits in what is left (2 MB), together they do not.
      for (let i = 0; i < 8; i++) fs.writeFileSync(path.join(dir, 'src', `p${i}.bin`), Buffer.alloc(MIB, i + 1));
      const before = userBytes(s);
      const r = await s.call('shed_exec', { zone: 'storage', cmd: 'cp', args: ['-r', 'src', 'copy1'] });
      expectStopped(r, s, `${mode} cp -r`, before);
      expect(fs.existsSync(path.join(dir, 'copy1'))).toBe(false);
    } finally {
      s.cleanup();
    }
  });

  it.each([
    ['truncate -s 1G (sparse)', 'truncate', ['-s', '1G', 'sparse.bin']],
    ['dd seek=100M (sparse)', 'dd', ['if=/dev/zero', 'of=seek.bin', 'bs=1', 'count=1', 'seek=100M']],
    ['dd 100 MB of zeros', 'dd', ['if=/dev/zero', 'of=zeros.bin', 'bs=1M', 'count=100']],
  ] as const)('%s cannot pass the quota', async (label, cmd, cmdArgs) => {
    const { s } = shed('storage');
    try {
      const r = await s.call('shed_exec', { zone: 'storage', cmd, args: [...cmdArgs] });
      expectWithin(r, s, `${mode} ${label}`);
    } finally {
      s.cleanup();
    }
  });

  it('yes into stdout_file stops at what is left of the quota', async () => {
    const { s } = shed('storage');
    try {
      const r = await s.call('shed_exec', { zone: 'storage', cmd: 'yes', args: [], stdout_file: 'y.txt', timeout: 20 });
      expectWithin(r, s, `${mode} yes > y.txt`);
    } finally {
      s.cleanup();
    }
  });
});

/** Apparent bytes of everything below `root` (files, links and folders; the root itself not counted), as the quota counts. */
function treeBytes(root: string): number {
  let total = 0;
  const visit = (p: string) => {
    for (const e of fs.readdirSync(p, { withFileTypes: true })) {
      if (p === root && e.name === '.git') continue;
      const full = path.join(p, e.name);
      total += fs.lstatSync(full).size;
      if (e.isDirectory()) visit(full);
    }
  };
  if (fs.existsSync(root)) visit(root);
  return total;
}

/** Prints the disk (st_size of folders, blocks of files) under argv[1] whenever it grows, until killed. */
const PEAK_SAMPLER = [
  'import os, sys, time',
  'top = 0',
  'while True:',
  '    total, stack = 0, [sys.argv[1]]', // an explicit stack: os.walk recurses, 2,000 levels are past Python's limit
  '    while stack:',
  '        d = stack.pop()',
  '        try: entries = list(os.scandir(d))',
  '        except OSError: continue',
  '        for e in entries:',
  '            try: total += e.stat(follow_symlinks=False).st_size',
  '            except OSError: continue',
  '            if e.is_dir(follow_symlinks=False): stack.append(e.path)',
  '    if total > top:',
  '        top = total; print(total, flush=True)',
  '    time.sleep(0.05)',
].join('\n');

/** A chain of `depth` folders, `count` times: mkdir -p makes them all in one call (folders are not bound by the file size limit). */
const chains = (count: number, depth: number) => Array.from({ length: count }, (_, k) => `c${k}/${Array.from({ length: depth }, () => 'd').join('/')}`);

describe.each(MODES)('space taken by folders and apparent sizes is given back (%s)', (mode) => {
  it.each(['storage', 'documents'] as const)('mkdir -p of long folder chains in a 2 MB quota (%s)', async (zone) => {
    const s = makeShed({ sandbox: mode, quota_per_user_mb: 2 });
    try {
      await s.call('shed_create_file', { zone, path: 'keep.txt', content: 'kept\n' });
      const root = s.zonePath(zone);
      const before = treeBytes(root);
      const r = await s.call('shed_exec', { zone, cmd: 'mkdir', args: ['-p', ...chains(40, 200)] });
      expect(r.error?.code, JSON.stringify(r.data ?? r.error)).toBe('QUOTA_EXCEEDED');
      expect(treeBytes(root), 'every folder it made is gone').toBeLessThanOrEqual(before);
      expect(fs.readdirSync(root).filter((n) => n !== '.git').sort()).toEqual(['keep.txt']);
      expect((r.error!.details!.removed as string[]).every((p) => /^c\d+$/.test(p))).toBe(true);
      if (zone === 'documents') {
        const st = await s.call('shed_exec', { zone, cmd: 'git', args: ['status', '--porcelain'] });
        expect(st.data!.stdout).toBe('');
      }
      expect((await s.call('shed_create_file', { zone, path: 'next.txt', content: 'x' })).success).toBe(true);
    } finally {
      s.cleanup();
    }
  }, 120_000);

  it('truncate -s 4M of 30 new sparse files in one call, in a 10 MB quota', async () => {
    const s = makeShed({ sandbox: mode, quota_per_user_mb: QUOTA_MB, max_file_size_mb: MAX_FILE_MB });
    try {
      await s.call('shed_create_file', { zone: 'storage', path: 'keep.txt', content: 'kept\n' });
      const root = s.zonePath('storage');
      const before = treeBytes(root);
      const r = await s.call('shed_exec', { zone: 'storage', cmd: 'truncate', args: ['-s', '4M', ...Array.from({ length: 30 }, (_, i) => `s${i}.bin`)] });
      expect(r.error?.code, JSON.stringify(r.data ?? r.error)).toBe('QUOTA_EXCEEDED');
      expect(treeBytes(root)).toBeLessThanOrEqual(before);
      expect(fs.readdirSync(root)).toEqual(['keep.txt']);
    } finally {
      s.cleanup();
    }
  });

  it('existing files grown past the quota are cut back to their size before', async () => {
    const s = makeShed({ sandbox: mode, quota_per_user_mb: QUOTA_MB, max_file_size_mb: MAX_FILE_MB });
    try {
      const names = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
      for (const n of names) await s.call('shed_create_file', { zone: 'storage', path: n, content: `${n} original\n` });
      const r = await s.call('shed_exec', { zone: 'storage', cmd: 'truncate', args: ['-s', '+4M', ...names] });
      expect(r.error?.code, JSON.stringify(r.data ?? r.error)).toBe('QUOTA_EXCEEDED');
      for (const n of names) expect(fs.readFileSync(s.zonePath('storage', n), 'utf8')).toBe(`${n} original\n`);
      expect((r.error!.details!.cut_back as { path: string }[]).map((c) => c.path).sort()).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
    } finally {
      s.cleanup();
    }
  });

  it('shed_lockedit_exec: mkdir -p of three 2,000-deep chains in a 10 MB quota is stopped during the call, not only undone after', async () => {
    const s = makeShed({ sandbox: mode, quota_per_user_mb: QUOTA_MB });
    const home = path.join(s.base, 'users', 'alice');
    // Another process samples the disk the user's folders take while the call runs (a lower bound of the true peak).
    const sampler = spawn(findProgram('python3')!, ['-c', PEAK_SAMPLER, home], { stdio: ['ignore', 'pipe', 'ignore'] });
    let peak = 0;
    sampler.stdout.on('data', (d: Buffer) => (peak = Math.max(peak, ...d.toString().trim().split('\n').map(Number))));
    const closed = new Promise((resolve) => sampler.once('close', resolve));
    try {
      await s.call('shed_create_file', { zone: 'storage', path: 'f.txt', content: 'work\n' });
      expect((await s.call('shed_lockedit_open', { zone: 'storage', path: 'f.txt' })).success).toBe(true);
      const r = await s.call('shed_lockedit_exec', { zone: 'storage', path: 'f.txt', cmd: 'mkdir', args: ['-p', ...chains(3, 2000)], timeout: 300 });
      expect(r.error?.code, JSON.stringify(r.data ?? r.error)).toBe('QUOTA_EXCEEDED');
      expect(r.error!.details!.stopped, 'stopped by the watch while it ran').toBe(true);
      expect(Number(r.error!.details!.over_by_bytes), 'over by a few hundred folders at most when stopped').toBeLessThanOrEqual(2 * MIB);
      sampler.kill();
      await closed;
      overshoots.push(`${mode} lockedit mkdir -p 3 × 2,000: ${(Number(r.error!.details!.over_by_bytes) / MIB).toFixed(2)} MB over when stopped; ${(peak / MIB).toFixed(2)} MB peak seen`);
      expect(peak, 'the disk taken never went far past the quota').toBeLessThanOrEqual(QUOTA_MB * MIB + 3 * MIB);
      expect(fs.readFileSync(s.zonePath('storage', 'f.txt'), 'utf8')).toBe('work\n');
    } finally {
      sampler.kill();
      s.cleanup();
    }
  }, 330_000);

  it('shed_lockedit_exec: mkdir -p chains beside the working copy in a 10 MB quota leave nothing behind', async () => {
    const s = makeShed({ sandbox: mode, quota_per_user_mb: QUOTA_MB });
    try {
      await s.call('shed_create_file', { zone: 'storage', path: 'f.txt', content: 'work\n' });
      expect((await s.call('shed_lockedit_open', { zone: 'storage', path: 'f.txt' })).success).toBe(true);
      expect((await s.call('shed_lockedit_exec', { zone: 'storage', path: 'f.txt', cmd: 'cat', args: ['.'] })).success).toBe(true);
      const home = path.join(s.base, 'users', 'alice', 'Storage');
      const before = treeBytes(home);
      const r = await s.call('shed_lockedit_exec', { zone: 'storage', path: 'f.txt', cmd: 'mkdir', args: ['-p', ...chains(40, 100)] });
      expect(r.error?.code, JSON.stringify(r.data ?? r.error)).toBe('QUOTA_EXCEEDED');
      expect(treeBytes(home), 'nothing of the command is left anywhere in Storage').toBeLessThanOrEqual(before);
      const save = await s.call('shed_lockedit_save', { zone: 'storage', path: 'f.txt' });
      expect(save.success, JSON.stringify(save.error)).toBe(true);
      expect(fs.readFileSync(s.zonePath('storage', 'f.txt'), 'utf8')).toBe('work\n');
    } finally {
      s.cleanup();
    }
  }, 120_000);
});
