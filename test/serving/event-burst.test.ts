/**
 * A command's change events reach the server in batches: the runtime hands over everything the
 * kernel queued, callback after callback, before the event loop turns again. On a busy machine a
 * fast command queues thousands while the loop waits for the CPU. The quota watch of a command
 * (callwatch.ts) must take such a batch without holding the loop: its per-event work is a path
 * walk (lstat) each, thousands of folders deep here. A CI run saw 520-680 ms of the loop's CPU in
 * one gap when that work ran inside the callbacks.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { folderWriteScope, watchCall } from '../../src/core/services/exec/guards/callwatch.js';
import { forgetTree } from '../../src/core/services/quota/usage.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';
import { checkLag, watchLag } from '../helpers/lag.js';

const MIB = 1024 * 1024;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-burst-'));
afterAll(() => {
  forgetTree(root);
  fs.rmSync(root, { recursive: true, force: true });
});

// Makes a file in every folder of the tree through folder descriptors (no path walk per file),
// as fast as a command can: a burst of events, one per folder, each naming a path 1,500 deep.
const TOUCH_ALL = `
import os, sys
n = 0
stack = [os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)]
while stack:
    fd = stack.pop()
    for name in os.listdir(fd):
        stack.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd))
    os.close(os.open('f', os.O_CREAT | os.O_WRONLY, dir_fd=fd)); n += 1
    os.close(fd)
print(n)
`;

it('a burst of 4,500 change events 1,500 folders deep is taken in slices, and the watch still answers', async () => {
  const python = findProgram('python3');
  expect(python, 'python3').toBeDefined();
  const chains = [0, 1, 2].map((k) => `c${k}/${Array.from({ length: 1500 }, () => 'd').join('/')}`);
  expect(spawnSync('mkdir', ['-p', ...chains], { cwd: root }).status).toBe(0);

  const watch = await watchCall(folderWriteScope(root, 100 * MIB), 100 * MIB);
  let nows = 0;
  watch.monitor.wake!({ now: () => nows++, hold: () => undefined, yieldCpu: () => undefined });

  // The loop is blocked while the burst is made (a synchronous child), so every event is queued when it turns again.
  const made = spawnSync(python!, ['-c', TOUCH_ALL, root], { encoding: 'utf8' });
  expect(made.status, made.stderr).toBe(0);
  expect(Number(made.stdout)).toBe(4504); // the root and 3 × 1,501 folders

  const lag = watchLag();
  const until = Date.now() + 20_000;
  while (nows === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
  const report = await lag.stop();
  console.log(`longest hold taking the burst: ${report.longestMs.toFixed(0)} ms of CPU`);
  // Far under the probe's 200 ms: the callbacks only note entries (their path walks ran ~150 ms in one go).
  checkLag('taking 4,500 queued change events', report, { cpuMs: 80, wallMs: 5000 });
  expect(nows, 'the watch asked for a measurement after the burst').toBeGreaterThan(0);

  const end = await watch.finish();
  expect(end.changed).toContain('c0/f');
  expect(end.changed).toContain(`${chains[2]}/f`);
  expect(end.changed!.length).toBe(4504);
}, 60_000);
