/**
 * Trees thousands of folders deep must not hold the event loop, whatever step meets them. Two
 * steps did, each O(depth) per folder where the walk itself is O(1):
 * - forgetting folders that vanished (a command's `rm -rf`, the server taking back what a command
 *   added past the quota): each child's path was a path normalisation of its parent's (4,000
 *   bytes), O(depth²) in one turn of the loop: 170 ms for 3 chains 2,000 deep on a quiet machine;
 * - writing the trees of a deep folder (a commit, the undo's snapshot): each folder's tree is
 *   written as the walk unwinds, a write after the next without a turn of the loop: 190-250 ms
 *   for a zip of 3 chains 1,900 deep unpacked into Storage.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { forgetTree, treeUsage } from '../../src/core/services/quota/usage.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';
import { makeShed } from '../helpers/shed.js';
import { checkLag, watchLag } from '../helpers/lag.js';

/** Far under the probe's 200 ms: these steps yield like every walk (slice.ts), and were 170-250 ms in one go. */
const LIMIT = { cpuMs: 80, wallMs: 5000 };
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-deep-'));
afterAll(() => {
  forgetTree(root);
  spawnSync('rm', ['-rf', root]);
});

it('3 chains 2,000 folders deep that vanish are forgotten without holding the loop', async () => {
  const chains = [0, 1, 2].map((k) => `c${k}/${Array.from({ length: 2000 }, () => 'd').join('/')}`);
  expect(spawnSync('mkdir', ['-p', ...chains], { cwd: root }).status).toBe(0);
  fs.writeFileSync(path.join(root, 'keep.txt'), 'kept\n');
  const loaded = await treeUsage(root);
  expect(loaded.files).toBe(1);
  expect(loaded.bytes).toBeGreaterThan(6000 * 4096);

  expect(spawnSync('rm', ['-rf', 'c0', 'c1', 'c2'], { cwd: root }).status).toBe(0);
  const lag = watchLag();
  const after = await treeUsage(root);
  await new Promise((r) => setTimeout(r, 100)); // the dropped folders' watches close in slices after the answer
  const report = await lag.stop();
  console.log(`longest hold forgetting 6,000 deep folders: ${report.longestMs.toFixed(0)} ms of CPU`);
  expect(after).toEqual({ bytes: 5, files: 1 });
  checkLag('forgetting 6,000 folders 2,000 deep', report, LIMIT);
}, 120_000);

it.each(['storage', 'documents'] as const)('a zip of 2 chains 1,900 folders deep unpacked into %s is committed without holding the loop', async (zone) => {
  const s = makeShed({ quota_per_user_mb: 1000 });
  try {
    const zip = path.join(s.base, 'deep.zip');
    const script = "import zipfile, sys\nz = zipfile.ZipFile(sys.argv[1], 'w')\nfor k in range(2): z.writestr('c%d/' % k + 'd/' * 1900 + 'f.txt', 'x')\nz.close()";
    execFileSync(findProgram('python3')!, ['-c', script, zip]);
    await s.call('shed_create_file', { zone: 'storage', path: 'keep.txt', content: 'kept\n' });
    fs.mkdirSync(s.zonePath('uploads'), { recursive: true });
    fs.copyFileSync(zip, s.zonePath('uploads', 'deep.zip'));
    const lag = watchLag();
    const r = await s.call('shed_unzip', { zone, src: 'deep.zip', src_zone: 'uploads', dest: 'out' }, { lag: false });
    const report = await lag.stop();
    console.log(`longest hold unpacking 3,800 folders 1,900 deep into ${zone}: ${report.longestMs.toFixed(0)} ms of CPU`);
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.files_count).toBe(2);
    const deepest = s.zonePath(zone, `out/c1/${'d/'.repeat(1900)}f.txt`);
    expect(fs.readFileSync(deepest, 'utf8')).toBe('x');
    if (zone === 'documents') {
      // The commit holds the three files (read by git itself).
      const files = execFileSync('git', [`--git-dir=${path.join(path.dirname(s.zonePath(zone)), 'git')}`, 'ls-tree', '-r', '--name-only', 'HEAD'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      expect(files.split('\n').filter((l) => l.endsWith('/f.txt'))).toHaveLength(2);
    }
    checkLag(`shed_unzip into ${zone}`, report, LIMIT);
  } finally {
    s.cleanup();
  }
}, 120_000);
