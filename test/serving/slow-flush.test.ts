/**
 * A flush the disk makes slow holds a pool thread, not the event loop. Every acknowledged write is
 * flushed (the file, then its folder) before the call answers; on a slow or busy disk (a network
 * filesystem, a large file behind other writers) one fsync can take hundreds of ms, and on the loop
 * that is as long for every other user of the server. Here the kernel itself is made slow: strace
 * holds every fsync and fdatasync of this process for DELAY_MS. Each call below must still flush (it
 * takes DELAY_MS at least), from a thread other than the loop's, while the loop keeps answering.
 */
import fs from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { longestGap } from '../helpers/gaps.js';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';
import { slowKernel, stopTracing, traceable, type Traced } from '../helpers/strace.js';

const DELAY_MS = 1000;
/** Well under DELAY_MS, well over a loaded machine's turn of the loop (see slow-removal.test.ts; a CI run under full load saw 356 ms). */
const GAP_LIMIT_MS = 500;

afterEach(stopTracing);

/**
 * Runs `call` with every flush DELAY_MS late and checks it: it succeeded, it flushed `flushed` (a
 * path fragment of the file or folder, as strace shows a descriptor), none of its flushes ran on the
 * event loop's thread, and the loop never stopped for GAP_LIMIT_MS.
 */
async function flushedOffTheLoop(what: string, call: () => Promise<Result>, flushed: string[]): Promise<Traced[]> {
  await slowKernel(['fsync', 'fdatasync'], ['fsync', 'fdatasync'], DELAY_MS);
  const { value: r, gapMs, tookMs } = await longestGap(call);
  const log = await stopTracing();
  console.log(`${what} with every flush ${DELAY_MS} ms late: ${tookMs.toFixed(0)} ms, ${log.length} flushes, longest gap of the loop ${gapMs.toFixed(0)} ms`);
  expect(r.success, JSON.stringify(r.error)).toBe(true);
  for (const part of flushed) expect(log.some(([, c]) => c.includes(part)), `${part} was flushed: ${JSON.stringify(log)}`).toBe(true);
  expect(tookMs, 'the delay was there').toBeGreaterThanOrEqual(DELAY_MS);
  expect(log.filter(([tid]) => tid === process.pid), "flushes made on the event loop's thread").toEqual([]);
  expect(gapMs).toBeLessThan(GAP_LIMIT_MS);
  return log;
}

/**
 * A shed whose one-time work (sandbox probe, first commit, capture's shadows, the pool's first
 * worker: from source it is bundled first) is done before the delays.
 */
async function warmShed(): Promise<Shed> {
  const s = makeShed({}, { lagProbe: false });
  for (const zone of ['storage', 'documents']) expect((await s.call('shed_create_file', { zone, path: 'warm.txt', content: 'warm\n' })).success).toBe(true);
  expect((await s.call('shed_patch_text', { zone: 'storage', path: 'warm.txt', position: 'replace', pattern: 'warm', content: 'warmer' })).success).toBe(true);
  expect((await s.call('shed_exec', { zone: 'storage', cmd: 'true' })).success).toBe(true);
  return s;
}

it.skipIf(!traceable)('shed_create_file and shed_patch_text flush their file, its folder and its lock off the loop', async () => {
  const s = await warmShed();
  try {
    const big = 'line of a large file\n'.repeat(200_000); // 4 MB
    await flushedOffTheLoop('shed_create_file in Storage', () => s.call('shed_create_file', { zone: 'storage', path: 'big.txt', content: big }), ['/Storage/data/.big.txt.', '/Storage/data>', '/Storage/locks/']);
    expect(fs.readFileSync(s.zonePath('storage', 'big.txt'), 'utf8')).toBe(big);
    await flushedOffTheLoop('shed_create_file in Documents', () => s.call('shed_create_file', { zone: 'documents', path: 'notes.md', content: '# notes\n' }), ['/Documents/data/.notes.md.']);
    const patch = { zone: 'documents', path: 'notes.md', position: 'replace', pattern: '# notes', content: '# Notes' };
    await flushedOffTheLoop('shed_patch_text in Documents', () => s.call('shed_patch_text', patch), ['/Documents/data/.notes.md.']);
    expect(fs.readFileSync(s.zonePath('documents', 'notes.md'), 'utf8')).toBe('# Notes\n');
  } finally {
    await stopTracing();
    s.cleanup();
  }
}, 120_000);

it.skipIf(!traceable)('a locked edit opens, writes, appends and saves with every flush off the loop', async () => {
  const s = await warmShed();
  try {
    await s.call('shed_create_file', { zone: 'storage', path: 'edit.txt', content: 'one\n' });
    await flushedOffTheLoop('shed_lockedit_open', () => s.call('shed_lockedit_open', { zone: 'storage', path: 'edit.txt' }), ['edit.txt']);
    await flushedOffTheLoop('shed_lockedit_overwrite', () => s.call('shed_lockedit_overwrite', { zone: 'storage', path: 'edit.txt', content: 'two\n' }), ['edit.txt']);
    await flushedOffTheLoop('shed_lockedit_overwrite append', () => s.call('shed_lockedit_overwrite', { zone: 'storage', path: 'edit.txt', content: 'three\n', append: true }), ['edit.txt']);
    await flushedOffTheLoop('shed_lockedit_save', () => s.call('shed_lockedit_save', { zone: 'storage', path: 'edit.txt' }), ['/Storage/data>']);
    expect(fs.readFileSync(s.zonePath('storage', 'edit.txt'), 'utf8')).toBe('two\nthree\n');
  } finally {
    await stopTracing();
    s.cleanup();
  }
}, 120_000);

it.skipIf(!traceable)('a copy between zones, an output file, a zip and a database are flushed off the loop', async () => {
  const s = await warmShed();
  try {
    await s.call('shed_create_file', { zone: 'storage', path: 'data.csv', content: 'a,b\n'.repeat(600_000) }); // 2.4 MB: copied on the pool
    await flushedOffTheLoop('shed_copy_storage_to_documents', () => s.call('shed_copy_storage_to_documents', { src: 'data.csv', dest: 'data.csv' }), ['/Documents/data/']);
    expect(fs.statSync(s.zonePath('documents', 'data.csv')).size).toBe(2_400_000);
    await flushedOffTheLoop('shed_exec with stdout_file', () => s.call('shed_exec', { zone: 'storage', cmd: 'cat', args: ['data.csv'], stdout_file: 'copy.csv' }), ['/output.shedtmp>', '/Storage/data>']);
    expect(fs.statSync(s.zonePath('storage', 'copy.csv')).size).toBe(2_400_000);
    await flushedOffTheLoop('shed_zip', () => s.call('shed_zip', { zone: 'storage', src: 'data.csv', dest: 'data.zip' }), ['/Storage/data/.data.zip.', '/Storage/data>']);
    const query = { zone: 'storage', path: 'sales.db', query: 'CREATE TABLE sales (region TEXT, amount REAL)' };
    await flushedOffTheLoop('shed_sqlite', () => s.call('shed_sqlite', query), ['sales.db']);
  } finally {
    await stopTracing();
    s.cleanup();
  }
}, 120_000);

it.skipIf(!traceable)('a restore from history writes and flushes each file off the loop', async () => {
  const s = await warmShed();
  try {
    const before = 'first version of a large file\n'.repeat(150_000); // 4.5 MB
    expect((await s.call('shed_create_file', { zone: 'documents', path: 'big.txt', content: before })).success).toBe(true);
    const second = await s.call('shed_patch_text', { zone: 'documents', path: 'big.txt', content: 'second\n', overwrite: true });
    expect(second.success, JSON.stringify(second.error)).toBe(true);
    // Writes are logged too: the restored file's bytes must go out from a pool thread, like its flush.
    await slowKernel(['fsync', 'fdatasync', 'write', 'pwrite64'], ['fsync', 'fdatasync'], DELAY_MS);
    const { value: r, gapMs, tookMs } = await longestGap(() => s.call('shed_exec', { zone: 'documents', cmd: 'git', args: ['checkout', 'HEAD~1', '--', 'big.txt'] }));
    const log = await stopTracing();
    console.log(`git checkout of a 4.5 MB file with every flush ${DELAY_MS} ms late: ${tookMs.toFixed(0)} ms, longest gap of the loop ${gapMs.toFixed(0)} ms`);
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(fs.readFileSync(s.zonePath('documents', 'big.txt'), 'utf8')).toBe(before);
    const restored = log.filter(([, c]) => c.includes('/Documents/data/.big.txt.'));
    expect(restored.some(([, c]) => c.startsWith('write') || c.startsWith('pwrite64')), `the restored file was written: ${JSON.stringify(log.slice(0, 20))}`).toBe(true);
    expect(restored.filter(([tid]) => tid === process.pid), "the restored file's writes and flushes made on the event loop's thread").toEqual([]);
    expect(gapMs).toBeLessThan(GAP_LIMIT_MS);
  } finally {
    await stopTracing();
    s.cleanup();
  }
}, 120_000);
