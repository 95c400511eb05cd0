/**
 * The over-quota undo (src/core/services/exec/guards/over-quota.ts) gives back space reserved behind a file's end
 * (fallocate FALLOC_FL_KEEP_SIZE: the size does not change, the blocks do), not only bytes a
 * command appended: a file of the same size but more blocks is cut to its size, which frees them.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { undoGrowth } from '../../src/core/services/exec/guards/over-quota.js';

let root: string;
beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-undo-')));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

it('a file with 64 MiB reserved past its end is cut back to its size: the blocks are free again, the content kept', async () => {
  const file = path.join(root, 'r.bin');
  fs.writeFileSync(file, 'x');
  const ino = fs.statSync(file).ino;
  execFileSync('python3', ['-c', 'import ctypes, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\nfd = os.open(sys.argv[1], os.O_RDWR)\nassert libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(64 << 20)) == 0', file]);
  expect(fs.statSync(file).blocks * 512).toBeGreaterThanOrEqual(64 << 20);
  const undone = await undoGrowth(root, ['r.bin'], (rel) => (rel === 'r.bin' ? { folder: false, size: 1, ino } : undefined));
  expect(undone.cut).toEqual([{ path: 'r.bin', size: 1 }]);
  expect(fs.statSync(file).blocks * 512).toBeLessThanOrEqual(8192);
  expect(fs.readFileSync(file, 'utf8')).toBe('x');
});

it('an ordinary file of the same size is left alone', async () => {
  const file = path.join(root, 'plain.txt');
  fs.writeFileSync(file, 'hello\n');
  const ino = fs.statSync(file).ino;
  const undone = await undoGrowth(root, ['plain.txt'], () => ({ folder: false, size: 6, ino }));
  expect(undone).toEqual({ removed: [], cut: [] });
});
