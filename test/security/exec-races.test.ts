/**
 * A command that replaces a folder being watched by a file (or the other way round) while the
 * quota watch reads the events: the watcher's callbacks see names whose folder is now a file
 * (ENOTDIR), gone (ENOENT) or a link. No such error may escape (it would end the server for every
 * user; vitest reports any that does as an unhandled error, failing this file), the call answers,
 * and the next call works. Every sandbox mode, a plain and a versioned zone.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { MODES } from './exec-harness.js';

let archives: string;

/** one.tar: d/ holding 200 files (and d/e/ deeper); two.tar: d as a file; three.tar: d/ again, each file a folder. */
beforeAll(() => {
  archives = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-races-'));
  const make = (name: string, fill: (dir: string) => void) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-races-src-'));
    fill(dir);
    execFileSync('tar', ['-cf', path.join(archives, name), '-C', dir, 'd']);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  make('one.tar', (dir) => {
    fs.mkdirSync(path.join(dir, 'd', 'e'), { recursive: true });
    for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(dir, 'd', `f${i}`), `${i}\n`);
    for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(dir, 'd', 'e', `g${i}`), `${i}\n`);
  });
  make('two.tar', (dir) => fs.writeFileSync(path.join(dir, 'd'), 'now a file\n'));
  make('three.tar', (dir) => {
    for (let i = 0; i < 200; i++) fs.mkdirSync(path.join(dir, 'd', `f${i}`), { recursive: true });
  });
});
afterAll(() => fs.rmSync(archives, { recursive: true, force: true }));

describe.each(MODES)('folders replaced under the watch (%s)', (mode) => {
  let s: Shed;
  beforeAll(() => {
    s = makeShed({ sandbox: mode });
  });
  afterAll(() => s.cleanup());

  it.each(['storage', 'documents'] as const)('tar over tar in %s: every call answers, the next one works', async (zone) => {
    fs.mkdirSync(s.zonePath(zone), { recursive: true });
    for (const name of ['one.tar', 'two.tar', 'three.tar']) fs.copyFileSync(path.join(archives, name), s.zonePath(zone, name));
    const exec = (args: string[]) => s.call('shed_exec', { zone, cmd: 'tar', args });
    for (let round = 0; round < 3; round++) {
      for (const args of [['-xf', 'one.tar'], ['--recursive-unlink', '-xf', 'two.tar'], ['--recursive-unlink', '-xf', 'one.tar'], ['--recursive-unlink', '-xf', 'three.tar'], ['--recursive-unlink', '-xf', 'two.tar']]) {
        const r = await exec(args);
        expect(r.success, JSON.stringify(r.error)).toBe(true);
      }
      expect(fs.readFileSync(s.zonePath(zone, 'd'), 'utf8')).toBe('now a file\n');
    }
    const after = await s.call('shed_exec', { zone, cmd: 'ls' });
    expect(after.success, JSON.stringify(after.error)).toBe(true);
    expect(after.data!.stdout).toContain('one.tar');
  }, 120_000);
});
