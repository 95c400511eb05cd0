/**
 * Archive work on the worker pool: a many-file unzip and zip keep the event loop
 * turning (another user's read answers quickly meanwhile), and a worker that hits its JS heap cap
 * (resourceLimits) ends its call as RESOURCE_LIMIT while the process survives and the pool refills.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import fs from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { poolStats, shutdownPool } from '../../src/core/base/work/pool.js';
import { buildZip } from '../archive/zipbuilder.js';
import { makeShed, type Shed } from '../helpers/shed.js';

let shed: Shed;
afterEach(() => shed?.cleanup());
afterAll(async () => {
  delete process.env.FILESHED_WORKER_HEAP_MB;
  await shutdownPool();
});

const FILES = 3000;

describe('archives on the worker pool', () => {
  it(`unzip and zip of ${FILES} files: the loop keeps turning and another user's read answers meanwhile`, async () => {
    shed = makeShed();
    const entries = Array.from({ length: FILES }, (_, i) => ({ name: `d${i % 30}/f${i}.txt`, data: `line ${i}\n`.repeat(40 + (i % 50)) }));
    fs.mkdirSync(shed.zonePath('storage'), { recursive: true });
    fs.writeFileSync(shed.zonePath('storage', 'many.zip'), buildZip(entries));
    await shed.call('shed_create_file', { zone: 'storage', path: 'note.txt', content: 'hello\n' }, { user: 'bob' });
    await shed.call('shed_read', { zone: 'storage', path: 'note.txt' }, { user: 'bob' }); // warm

    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const unzip = shed.call('shed_unzip', { zone: 'storage', src: 'many.zip', dest: 'out' });
    const reads: number[] = [];
    let done = false;
    void unzip.finally(() => (done = true));
    await new Promise((r) => setTimeout(r, 20));
    while (!done) {
      const t0 = performance.now();
      const r = await shed.call('shed_read', { zone: 'storage', path: 'note.txt' }, { user: 'bob' });
      reads.push(performance.now() - t0);
      expect(r.data?.content).toBe('hello\n');
      await new Promise((r2) => setTimeout(r2, 10));
    }
    const res = await unzip;
    expect(res.success, JSON.stringify(res.error)).toBe(true);
    expect(res.data?.files_count).toBe(FILES);
    expect(fs.readFileSync(shed.zonePath('storage', 'out/d7/f1237.txt'), 'utf8')).toBe('line 1237\n'.repeat(40 + (1237 % 50)));

    const zipped = await shed.call('shed_zip', { zone: 'storage', src: 'out', dest: 'again.zip' });
    h.disable();
    expect(zipped.success, JSON.stringify(zipped.error)).toBe(true);
    expect(zipped.data?.files_count).toBe(FILES);
    const info = await shed.call('shed_zipinfo', { zone: 'storage', path: 'again.zip' });
    expect(info.success).toBe(true);

    expect(reads.length).toBeGreaterThan(2); // reads really ran while the unzip did
    reads.sort((a, b) => a - b);
    expect(reads[Math.floor(reads.length / 2)]).toBeLessThan(100);
    // Inflating 3000 entries on the main thread blocked it for the whole extraction (seconds);
    // what is left there is planning and the final renames.
    expect(h.percentile(50) / 1e6).toBeLessThan(50);
  });

  it('a worker past its JS heap cap ends the call as RESOURCE_LIMIT; the process survives and the pool refills', async () => {
    await shutdownPool();
    process.env.FILESHED_WORKER_HEAP_MB = '32';
    try {
      shed = makeShed();
      // A wide CSV: the import keeps its first rows (up to 10,000) as string records to decide the
      // column types; 2,000 rows x 1,000 columns is 2 million strings, far past a 32 MB JS heap.
      const row = (r: number) => Array.from({ length: 1000 }, (_, c) => `${r}.${c}`).join(',');
      const lines = [Array.from({ length: 1000 }, (_, c) => `c${c}`).join(',')];
      for (let r = 0; r < 2000; r++) lines.push(row(r));
      fs.mkdirSync(shed.zonePath('storage'), { recursive: true });
      fs.writeFileSync(shed.zonePath('storage', 'wide.csv'), `${lines.join('\n')}\n`);
      const res = await shed.call('shed_sqlite', { zone: 'storage', path: 'wide.db', import_csv: 'wide.csv', table: 't' });
      expect(res.error?.code, JSON.stringify(res).slice(0, 500)).toBe('RESOURCE_LIMIT');
      expect(res.error?.details?.heap_limit_mb).toBe(32); // the worker's JS heap cap, not SQLite's memory_limit_mb
      expect(res.error?.hint).toMatch(/split the file|LIMIT|WHERE/);
      expect(fs.existsSync(shed.zonePath('storage', 'wide.db'))).toBe(false); // nothing was written
      // The pool refills: fresh workers (same cap) answer the next calls.
      expect((await shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: 'CREATE TABLE t(x)' })).success).toBe(true);
      const after = await Promise.all([1, 2, 3].map((n) => shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: `SELECT ${n} AS n` })));
      expect(after.map((r) => r.data?.rows)).toEqual([[[1]], [[2]], [[3]]]);
      expect(poolStats().workers).toBeGreaterThan(0);
      expect(poolStats().workers).toBeLessThanOrEqual(poolStats().size);
    } finally {
      delete process.env.FILESHED_WORKER_HEAP_MB;
      await shutdownPool();
    }
  });
});
