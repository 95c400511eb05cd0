/**
 * A removal the kernel makes slow holds a worker thread, not the event loop. rmdir and unlink take
 * the folder's lock exclusively, wait for (or spin behind) whoever walks it, and write the journal;
 * a CI run saw a locked edit's scratch tree (3 chains 2,000 folders deep, walked by another process)
 * spend 420 ms of the loop's CPU inside rmdir calls. Here the kernel itself is made slow: strace
 * stops every rmdir and unlink of this process for DELAY_MS before it returns. Removed on the event
 * loop, each would be a gap of DELAY_MS on the clock; on the thread pool the loop keeps answering.
 */
import fs from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { longestGap } from '../helpers/gaps.js';
import { makeShed, type Result } from '../helpers/shed.js';
import { slowKernel, stopTracing, traceable, type Traced } from '../helpers/strace.js';

const DELAY_MS = 1000;
/**
 * Well under DELAY_MS, well over what a loaded machine takes from a turn of the loop (13-17 ms seen;
 * strace stops each system call of the process twice, so a starved strace lengthens turns too: a CI
 * run under full load saw 335 ms).
 */
const GAP_LIMIT_MS = 500;

afterEach(stopTracing);

/**
 * From now on every rmdir of this process (any thread) returns DELAY_MS late, and every rmdir and
 * unlink is logged with the thread that made it. Only rmdir is slowed: the server's own one-file
 * steps (a lease's lock file) unlink on the loop, and are not what this test is about.
 */
const slowRmdir = () => slowKernel(['rmdir', 'unlink', 'unlinkat'], ['rmdir'], DELAY_MS);

/** The removals of entries named in `names` (reached through a folder's descriptor, as removeTree does). */
const removalsOf = (log: Traced[], names: string[]) =>
  log.filter(([, call]) => names.some((n) => call.includes(`/${n}")`)) && call.includes('/proc/self/fd/'));

/**
 * Runs the call `what` with every rmdir DELAY_MS late and checks it: it succeeded, none of the
 * removals of `names` was made on the event loop's thread, it took `serialRmdirs` delays at least (the
 * delay was there), and the loop never stopped for GAP_LIMIT_MS. Returns those removals and the log.
 */
async function removedOffTheLoop(what: string, call: () => Promise<Result>, names: string[], serialRmdirs: number) {
  await slowRmdir();
  const { value: r, gapMs, tookMs } = await longestGap(call);
  const log = await stopTracing();
  console.log(`${what} with every rmdir ${DELAY_MS} ms late: ${tookMs.toFixed(0)} ms, longest gap of the loop ${gapMs.toFixed(0)} ms`);
  expect(r.success, JSON.stringify(r.error)).toBe(true);
  const removals = removalsOf(log, names);
  expect(removals.filter(([tid]) => tid === process.pid), "removals made on the event loop's thread").toEqual([]);
  expect(tookMs, `${serialRmdirs} folders removed one after the other: the delay was there`).toBeGreaterThanOrEqual(serialRmdirs * DELAY_MS);
  expect(gapMs).toBeLessThan(GAP_LIMIT_MS);
  return { removals, log };
}

it.skipIf(!traceable)('shed_delete of a folder: each slow rmdir waits on the thread pool, and so does every unlink', async () => {
  const s = makeShed({}, { lagProbe: false });
  try {
    const files = ['one.txt', 'two.txt', 'three.txt', 'four.txt'];
    for (const [i, f] of files.entries()) await s.call('shed_create_file', { zone: 'storage', path: `${'a/b/c/d'.slice(0, 2 * i + 1)}/${f}`, content: `${f}\n` });
    const { removals } = await removedOffTheLoop('shed_delete', () => s.call('shed_delete', { zone: 'storage', path: 'a' }), [...files, 'a', 'b', 'c', 'd'], 4);
    expect(fs.existsSync(s.zonePath('storage', 'a'))).toBe(false);
    expect(removals.map(([, call]) => call.replace(/\/proc\/self\/fd\/\d+\//, '').replace(/\).*/, ')')).sort()).toEqual(
      ['rmdir("a")', 'rmdir("b")', 'rmdir("c")', 'rmdir("d")', ...files.map((f) => `unlink("${f}")`)].sort(),
    );
  } finally {
    await stopTracing();
    s.cleanup();
  }
}, 60_000);

it.skipIf(!traceable)("a locked edit's scratch folder, with the chains a command left in it, is removed off the loop", async () => {
  const s = makeShed({}, { lagProbe: false });
  try {
    await s.call('shed_create_file', { zone: 'storage', path: 'f.txt', content: 'work\n' });
    expect((await s.call('shed_lockedit_open', { zone: 'storage', path: 'f.txt' })).success).toBe(true);
    // Once per process, the sandbox probes what the kernel offers (and removes its probe folder): done before the delays.
    expect((await s.call('shed_lockedit_exec', { zone: 'storage', path: 'f.txt', cmd: 'true' })).success).toBe(true);
    const mkdir = { zone: 'storage', path: 'f.txt', cmd: 'mkdir', args: ['-p', 'c0/d/d/d', 'c1/d/d'] };
    const { removals, log } = await removedOffTheLoop('shed_lockedit_exec', () => s.call('shed_lockedit_exec', mkdir), ['c0', 'c1', 'd'], 7);
    expect(removals.length, JSON.stringify(log)).toBeGreaterThanOrEqual(7);
    expect(fs.readFileSync(s.zonePath('storage', 'f.txt'), 'utf8')).toBe('work\n');
  } finally {
    await stopTracing();
    s.cleanup();
  }
}, 60_000);

it.skipIf(!traceable)('a folder replaced by a copy into Documents is removed off the loop', async () => {
  const s = makeShed({}, { lagProbe: false });
  try {
    await s.call('shed_create_file', { zone: 'documents', path: 'rep/a/b/c/old.txt', content: 'old\n' });
    await s.call('shed_create_file', { zone: 'storage', path: 'rep/new.txt', content: 'new\n' });
    const copy = { src: 'rep', dest: 'rep', overwrite: true };
    const { removals, log } = await removedOffTheLoop('shed_copy_storage_to_documents', () => s.call('shed_copy_storage_to_documents', copy), ['a', 'b', 'c', 'old.txt'], 4);
    expect(fs.readdirSync(s.zonePath('documents', 'rep'))).toEqual(['new.txt']);
    expect(removals.length, JSON.stringify(log)).toBe(4);
  } finally {
    await stopTracing();
    s.cleanup();
  }
}, 60_000);
