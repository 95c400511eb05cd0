/**
 * SQLite off the main thread: a runaway statement ends as QUERY_TIMEOUT with the
 * file untouched and its lock released, other calls answer meanwhile, a memory hog ends as
 * RESOURCE_LIMIT and the pool refills, and import progress still reaches the event emitter.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { poolStats, shutdownPool } from '../../src/core/base/work/pool.js';
import { checkLag, watchLag } from '../helpers/lag.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { ENGINES, useEngine } from './engines.js';
import { onDisk, put } from './helpers.js';

const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

let shed: Shed;
afterEach(() => shed?.cleanup());
afterAll(() => shutdownPool());

function dbLocks(s: Shed): string[] {
  const internal = path.join(s.base, 'users', 'alice');
  return (fs.readdirSync(internal, { recursive: true }) as string[]).filter((n) => n.endsWith('.lock'));
}

describe.each(ENGINES)('%s engine', (engine) => {
  useEngine(engine);

  describe('runaway statements', () => {
    it('a runaway read ends as QUERY_TIMEOUT with a hint, while shed_read answers at once', async () => {
      shed = makeShed();
      expect((await shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: 'CREATE TABLE t(x)' })).success).toBe(true);
      put(shed, 'note.txt', 'hello\n');
      // Only the runaway gets the short timeout (the setup's write and fsync may be slow on a loaded machine).
      shed.tools.valves = { ...shed.tools.valves, sqlite_timeout_seconds: 1 };
      const started = Date.now();
      const runaway = shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: RUNAWAY });
      await new Promise((r) => setTimeout(r, 150)); // the statement is running on its worker now
      const latencies: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const read = await shed.call('shed_read', { zone: 'storage', path: 'note.txt' });
        latencies.push(performance.now() - t0);
        expect(read.data?.content).toBe('hello\n');
      }
      const res = await runaway;
      expect(res.error?.code).toBe('QUERY_TIMEOUT');
      expect(res.error?.hint).toMatch(/LIMIT/);
      expect(res.error?.hint).toMatch(/WHERE/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(Date.now() - started).toBeLessThan(10_000);
      latencies.sort((a, b) => a - b);
      expect(latencies[2]).toBeLessThan(50); // median; before the pool these waited for the statement forever
      expect(latencies[4]).toBeLessThan(250);
    });

    it('a runaway write leaves the database byte-identical and its lock released', async () => {
      shed = makeShed();
      expect((await shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: 'CREATE TABLE t(x)' })).success).toBe(true);
      expect((await shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: 'INSERT INTO t VALUES (1)' })).success).toBe(true);
      shed.tools.valves = { ...shed.tools.valves, sqlite_timeout_seconds: 1 };
      const abs = shed.zonePath('storage', 'a.db');
      const before = fs.readFileSync(abs);
      const res = await shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: 'INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c' });
      expect(res.error?.code).toBe('QUERY_TIMEOUT');
      expect(fs.readFileSync(abs).equals(before)).toBe(true);
      expect(dbLocks(shed)).toEqual([]);
      const t0 = Date.now();
      const next = await shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: 'INSERT INTO t VALUES (2)' });
      expect(next.success).toBe(true);
      expect(Date.now() - t0).toBeLessThan(3000); // no waiting for a leftover lock
      expect(await onDisk(abs, 'SELECT x FROM t ORDER BY x')).toEqual([[1], [2]]);
    });

    it('a memory hog ends as RESOURCE_LIMIT; the process survives and the pool refills', async () => {
      shed = makeShed();
      await shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: 'CREATE TABLE t(x)' });
      const res = await shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: 'SELECT length(randomblob(900000000))' });
      expect(res.error?.code).toBe('RESOURCE_LIMIT');
      expect(res.error?.hint).toMatch(/LIMIT|WHERE/);
      const after = await Promise.all([1, 2, 3].map((n) => shed.call('shed_sqlite', { zone: 'storage', path: 'a.db', query: `SELECT ${n} AS n` })));
      expect(after.map((r) => r.data?.rows)).toEqual([[[1]], [[2]], [[3]]]);
      expect(poolStats().workers).toBeGreaterThan(0);
      expect(poolStats().workers).toBeLessThanOrEqual(poolStats().size);
    });
  });

  describe('CSV import on a worker', () => {
    it('status events reach the emitter, and the event loop keeps turning', async () => {
      shed = makeShed();
      const lines = ['id,name,amount'];
      for (let i = 0; i < 60_000; i++) lines.push(`${i},n${i % 97},${i * 0.5}`);
      put(shed, 'big.csv', `${lines.join('\n')}\n`);
      const events: string[] = [];
      const method = (shed.tools as unknown as Record<string, (a: unknown) => Promise<string>>).shed_sqlite!;
      // The suite's lag probe, not the clock: on a loaded 2-core CI machine a turn of the loop waited
      // 635 ms for the CPU; what this checks is that no block of the import runs on the loop.
      const lag = watchLag();
      const json = await method.call(shed.tools, {
        zone: 'storage',
        path: 'big.db',
        import_csv: 'big.csv',
        table: 't',
        __user__: { id: 'alice', name: 'A' },
        __metadata__: { chat_id: 'c1' },
        __event_emitter__: async (e: { data: { description: string } }) => {
          events.push(e.data.description);
        },
      });
      checkLag('CSV import', await lag.stop()); // a block of it on the main thread was ~100-470 ms of CPU
      const res = JSON.parse(json) as { success: boolean; data: { rows_imported: number } };
      expect(res.success).toBe(true);
      expect(res.data.rows_imported).toBe(60_000);
      expect(events[0]).toMatch(/^Importing Storage\/big\.csv into table t/);
      expect(events.some((e) => /^Importing Storage\/big\.csv: [\d,]+ rows \(\d+%\)$/.test(e))).toBe(true);
      expect(events.at(-1)).toBe('Imported 60,000 rows into t');
      expect(await onDisk(shed.zonePath('storage', 'big.db'), 'SELECT count(*), sum(id) FROM t')).toEqual([[60_000, (59_999 * 60_000) / 2]]);
    });

    it('an import past its timeout leaves no database behind', async () => {
      shed = makeShed({ sqlite_timeout_seconds: 1 });
      const lines = ['id,text'];
      for (let i = 0; i < 400_000; i++) lines.push(`${i},"some text with, a comma ${i}"`);
      put(shed, 'huge.csv', `${lines.join('\n')}\n`);
      const res = await shed.call('shed_sqlite', { zone: 'storage', path: 'huge.db', import_csv: 'huge.csv', table: 't' });
      if (res.success) return; // a very fast machine finished within 1 s: nothing to check
      expect(res.error?.code).toBe('QUERY_TIMEOUT');
      expect(res.error?.hint).toMatch(/split|sqlite_timeout_seconds/);
      expect(fs.existsSync(shed.zonePath('storage', 'huge.db'))).toBe(false);
      expect(dbLocks(shed)).toEqual([]);
    });
  });
});
