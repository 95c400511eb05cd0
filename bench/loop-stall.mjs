// Event-loop stall during a large CSV import and a runaway query: the longest delay the
// host's event loop sees (perf_hooks monitorEventLoopDelay) while the call runs, and how long a
// shed_read issued meanwhile takes. Usage: node bench/loop-stall.mjs [rows=300000] [path/to/fileshed.mjs]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { sized } from './lib.mjs';

const rows = Number(process.argv[2] ?? sized(300_000, 3_000));
const modPath = path.resolve(process.argv[3] ?? new URL('../dist/fileshed.mjs', import.meta.url).pathname);
const { Tools } = await import(pathToFileURL(modPath).href);
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-stall-'));
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: base, sqlite_timeout_seconds: 5 };
const who = { __user__: { id: 'alice', name: 'Alice' }, __metadata__: { chat_id: 'c1' } };
const call = async (fn, args, user = who) => JSON.parse(await tools[fn]({ ...args, ...user }));
const bob = { __user__: { id: 'bob', name: 'Bob' }, __metadata__: { chat_id: 'c2' } };

const storage = path.join(base, 'users', 'alice', 'Storage', 'data');
fs.mkdirSync(storage, { recursive: true });
const lines = ['id,name,amount,day'];
for (let i = 0; i < rows; i++) lines.push(`${i},name ${i % 977},${(i * 1.37).toFixed(2)},2024-0${1 + (i % 9)}-1${i % 10}`);
fs.writeFileSync(path.join(storage, 'big.csv'), `${lines.join('\n')}\n`);
await call('shed_create_file', { zone: 'storage', path: 'hello.txt', content: 'hello\n' }, bob);
await call('shed_sqlite', { zone: 'storage', path: 'warm.db', query: 'SELECT 1' }); // engine/pool warm-up (fails: no file)

async function measure(label, run) {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const reads = [];
  let done = false;
  const task = run().finally(() => (done = true));
  while (!done) {
    const t0 = performance.now();
    await call('shed_read', { zone: 'storage', path: 'hello.txt' }, bob);
    reads.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  const res = await task;
  h.disable();
  reads.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(34)} ${res.success ? 'ok' : res.error.code} | max loop delay ${(h.max / 1e6).toFixed(0)} ms, p99 ${(h.percentile(99) / 1e6).toFixed(0)} ms | ` +
      `concurrent shed_read: ${reads.length} calls, max ${reads.at(-1)?.toFixed(1)} ms, median ${reads[Math.floor(reads.length / 2)]?.toFixed(1)} ms`,
  );
}

console.log(`module: ${modPath}`);
await measure(`import ${rows.toLocaleString('en-US')} rows`, () => call('shed_sqlite', { zone: 'storage', path: 'big.db', import_csv: 'big.csv', table: 't' }));
await measure('aggregate over the table', () => call('shed_sqlite', { zone: 'storage', path: 'big.db', query: 'SELECT name, sum(amount) FROM t GROUP BY name ORDER BY 2 DESC' }));
if (!process.argv.includes('--no-runaway')) {
  await measure('runaway recursive CTE (timeout 5 s)', () => call('shed_sqlite', { zone: 'storage', path: 'big.db', query: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c' }));
}
fs.rmSync(base, { recursive: true, force: true });
