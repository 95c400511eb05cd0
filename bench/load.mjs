// Load bench: `fileshed serve` (dist/cli.mjs, api-key mode, a temp base) and N
// simulated users over HTTP keep-alive, each in a loop of a realistic mix with a short think time:
// reads, appends in Storage and Documents, shed_exec ls/grep/sed, SQLite SELECTs, shed_tree.
// Printed per function: calls, p50/p95/p99 (ms), errors; throughput; lost writes (every
// acknowledged append is looked for in the files at the end, and Documents must hold one commit per
// acknowledged append). Then the same run with one more user running a runaway query and another
// importing a 1,000,000-row CSV, again and again: the others' p99 must stay <= 2x the unloaded p99.
//
// Full size: 50 users, 60 s per phase. BENCH_SMOKE=1: 5 users, 2 s, a 20,000-row CSV, a 2 s query timeout.
// FILESHED_LOAD_USERS / FILESHED_LOAD_SECONDS override.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SMOKE = process.env.BENCH_SMOKE === '1';
const USERS = Number(process.env.FILESHED_LOAD_USERS ?? (SMOKE ? 5 : 50));
const SECONDS = Number(process.env.FILESHED_LOAD_SECONDS ?? (SMOKE ? 2 : 60));
const CSV_ROWS = SMOKE ? 20_000 : 1_000_000;
// Mean pause between one user's calls (uniform 0..2x): a model takes seconds to write its next call.
const THINK_MS = Number(process.env.FILESHED_LOAD_THINK_MS ?? 1000);
const KEY = 'fs_loadbench_key';
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-load-'));
const agent = new http.Agent({ keepAlive: true, maxSockets: USERS + 8 });

function log(text) {
  process.stderr.write(`${text}\n`);
}

async function startServer() {
  const proc = spawn(process.execPath, [path.join(root, 'dist', 'cli.mjs'), 'serve', '--port', '0', '--base', base, '--auth', 'api-key', '--api-key', KEY, '--access-log', 'off', '--max-queued-per-user', '4', '--valve', 'sandbox=validated', '--allow-unconfined', ...(SMOKE ? ['--valve', 'sqlite_timeout_seconds=2'] : [])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d.toString();
      const m = /^Fileshed listening on (http:\/\/\S+)$/m.exec(buf);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { proc, url: new URL(url) };
}

function post(url, user, fn, args) {
  const body = JSON.stringify(args);
  return new Promise((resolve) => {
    const req = http.request(
      { agent, host: url.hostname, port: url.port, path: `/${fn}`, method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': user } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode, env: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch {
            resolve({ status: res.statusCode, env: { success: false, error: { code: 'BAD_JSON' } } });
          }
        });
      },
    );
    req.on('error', (err) => resolve({ status: 0, env: { success: false, error: { code: `NET_${err.code ?? 'ERR'}` } } }));
    req.end(body);
  });
}

const notes = Array.from({ length: 200 }, (_, i) => `line ${i} ${i % 7 === 0 ? 'needle' : 'hay'} ${'x'.repeat(i % 40)}`).join('\n') + '\n';

async function setupUser(url, user) {
  const must = async (fn, args) => {
    const r = await post(url, user, fn, args);
    if (!r.env.success) throw new Error(`setup ${user} ${fn}: ${JSON.stringify(r.env.error)}`);
  };
  await must('shed_create_file', { zone: 'storage', path: 'notes.txt', content: notes });
  await must('shed_create_file', { zone: 'storage', path: 'dir/a.txt', content: 'a\n' });
  await must('shed_create_file', { zone: 'documents', path: 'readme.md', content: '# notes\n' });
  await must('shed_sqlite', { zone: 'storage', path: 'data.db', query: 'CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, amount REAL)' });
  await must('shed_sqlite', { zone: 'storage', path: 'data.db', query: "INSERT INTO t(name, amount) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 2000) SELECT 'n' || (x % 37), x * 0.5 FROM c" });
}

/** One user's loop: a weighted mix; appends carry unique lines so every acked one can be found. */
async function userLoop(url, user, until, stats, acked) {
  const mix = [
    ['read', 3, () => ['shed_read', { zone: 'storage', path: 'notes.txt', start_line: 1, end_line: 50 }]],
    ['write_storage', 2, (i) => ['shed_patch_text', { zone: 'storage', path: 'log.txt', content: `${user} s${i}`, position: 'end' }]],
    ['write_documents', 2, (i) => ['shed_patch_text', { zone: 'documents', path: 'log.txt', content: `${user} d${i}`, position: 'end' }]],
    ['exec_ls', 1, () => ['shed_exec', { zone: 'storage', cmd: 'ls', args: ['-la'] }]],
    ['exec_grep', 1, () => ['shed_exec', { zone: 'storage', cmd: 'grep', args: ['-c', 'needle', 'notes.txt'] }]],
    ['exec_sed', 1, () => ['shed_exec', { zone: 'storage', cmd: 'sed', args: ['-n', '10,20p', 'notes.txt'] }]],
    ['sqlite_select', 2, () => ['shed_sqlite', { zone: 'storage', path: 'data.db', query: 'SELECT name, count(*), sum(amount) FROM t GROUP BY name ORDER BY name LIMIT 5' }]],
    ['tree', 1, () => ['shed_tree', { zone: 'storage' }]],
  ];
  const total = mix.reduce((a, m) => a + m[1], 0);
  let i = 0;
  while (Date.now() < until) {
    let pick = Math.random() * total;
    const [label, , make] = mix.find((m) => (pick -= m[1]) < 0) ?? mix[0];
    const [fn, args] = make(i++);
    const t0 = performance.now();
    const r = await post(url, user, fn, args);
    const ms = performance.now() - t0;
    const s = (stats[label] ??= { times: [], errors: {} });
    s.times.push(ms);
    if (!r.env.success) {
      const code = r.env.error?.code ?? `HTTP_${r.status}`;
      s.errors[code] = (s.errors[code] ?? 0) + 1;
    } else if (label.startsWith('write_')) {
      acked.push({ zone: label === 'write_storage' ? 'storage' : 'documents', user, line: args.content });
    }
    await new Promise((r2) => setTimeout(r2, Math.random() * 2 * THINK_MS));
  }
}

async function heavyLoop(url, user, until, kind, outcome) {
  while (Date.now() < until) {
    const args =
      kind === 'runaway'
        ? { zone: 'storage', path: 'data.db', query: RUNAWAY }
        : { zone: 'storage', path: 'big.db', import_csv: 'big.csv', table: 't', if_exists: 'replace' };
    const t0 = performance.now();
    const r = await post(url, user, 'shed_sqlite', args);
    outcome.push({ ms: performance.now() - t0, result: r.env.success ? 'ok' : r.env.error?.code });
  }
}

function pct(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function phase(url, name, heavy) {
  const stats = {};
  const acked = [];
  const until = Date.now() + SECONDS * 1000;
  const heavyOut = { runaway: [], import: [] };
  const started = performance.now();
  const heavyLoops = heavy ? [heavyLoop(url, 'heavy_query', until, 'runaway', heavyOut.runaway), heavyLoop(url, 'heavy_import', until, 'import', heavyOut.import)] : [];
  await Promise.all(Array.from({ length: USERS }, (_, u) => userLoop(url, `u${u}`, until, stats, acked)));
  // Throughput of the ordinary users over their own time (a heavy call may run past the end).
  const wall = (performance.now() - started) / 1000;
  await Promise.all(heavyLoops);
  return { name, stats, acked, wall, heavyOut };
}

function summarise(result) {
  const rows = [];
  let calls = 0;
  const all = [];
  for (const [label, s] of Object.entries(result.stats).sort()) {
    const sorted = [...s.times].sort((a, b) => a - b);
    calls += sorted.length;
    all.push(...sorted);
    rows.push({ label, calls: sorted.length, p50: pct(sorted, 50), p95: pct(sorted, 95), p99: pct(sorted, 99), errors: Object.entries(s.errors).map(([k, v]) => `${k}:${v}`).join(' ') || '0' });
  }
  all.sort((a, b) => a - b);
  rows.push({ label: 'ALL', calls, p50: pct(all, 50), p95: pct(all, 95), p99: pct(all, 99), errors: String(rows.reduce((a, r) => a + (r.errors === '0' ? 0 : r.errors.split(' ').reduce((b, e) => b + Number(e.split(':')[1]), 0)), 0)) });
  return { rows, throughput: calls / result.wall };
}

function checkWrites(acked, before) {
  // Every acknowledged append must be a line of the user's file (Storage and Documents).
  let lost = 0;
  const files = new Map();
  for (const a of acked) {
    const file = path.join(base, 'users', a.user, a.zone === 'storage' ? 'Storage' : 'Documents', 'data', 'log.txt');
    if (!files.has(file)) files.set(file, new Set(fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : []));
    if (!files.get(file).has(a.line)) lost++;
  }
  // One commit per acknowledged Documents append (commits made since `before`).
  let commitMismatch = 0;
  for (let u = 0; u < USERS; u++) {
    const repo = path.join(base, 'users', `u${u}`, 'Documents', 'data');
    const count = Number(execFileSync('git', [`--git-dir=${path.join(repo, '..', 'git')}`, 'rev-list', '--count', 'HEAD'], { encoding: 'utf8' }).trim());
    const wanted = (before.get(`u${u}`) ?? 0) + acked.filter((a) => a.user === `u${u}` && a.zone === 'documents').length;
    if (count !== wanted) commitMismatch += Math.abs(count - wanted);
  }
  return { checked: acked.length, lost, commitMismatch };
}

function commitCounts() {
  const m = new Map();
  for (let u = 0; u < USERS; u++) {
    const repo = path.join(base, 'users', `u${u}`, 'Documents', 'data');
    m.set(`u${u}`, Number(execFileSync('git', [`--git-dir=${path.join(repo, '..', 'git')}`, 'rev-list', '--count', 'HEAD'], { encoding: 'utf8' }).trim()));
  }
  return m;
}

function printPhase(title, sum, writes) {
  console.log(`\n${title}: ${sum.throughput.toFixed(1)} calls/s; acknowledged writes checked ${writes.checked}, lost ${writes.lost}, Documents commit mismatch ${writes.commitMismatch}`);
  const w = [16, 7, 9, 9, 9, 24];
  const line = (c) => c.map((x, i) => (i === 0 ? String(x).padEnd(w[i]) : String(x).padStart(w[i]))).join('  ');
  console.log(line(['function', 'calls', 'p50 ms', 'p95 ms', 'p99 ms', 'errors']));
  for (const r of sum.rows) console.log(line([r.label, r.calls, r.p50.toFixed(1), r.p95.toFixed(1), r.p99.toFixed(1), r.errors]));
}

async function main() {
  log(`load bench: ${USERS} users, ${SECONDS} s per phase, think time ${THINK_MS} ms mean, base ${base}`);
  const server = await startServer();
  try {
    for (let u = 0; u < USERS; u++) await setupUser(server.url, `u${u}`);
    // The heavy users' data: a database for the runaway query and a CSV of CSV_ROWS x 5 columns.
    await setupUser(server.url, 'heavy_query');
    const csvDir = path.join(base, 'users', 'heavy_import', 'Storage', 'data');
    fs.mkdirSync(csvDir, { recursive: true });
    const out = fs.openSync(path.join(csvDir, 'big.csv'), 'w');
    fs.writeSync(out, 'id,name,amount,day,flag\n');
    for (let start = 0; start < CSV_ROWS; start += 50_000) {
      const lines = [];
      for (let i = start; i < Math.min(CSV_ROWS, start + 50_000); i++) lines.push(`${i},name${i % 1000},${(i * 0.37).toFixed(2)},2024-0${1 + (i % 9)}-1${i % 10},${i % 2}`);
      fs.writeSync(out, `${lines.join('\n')}\n`);
    }
    fs.closeSync(out);

    // Warm-up (workers started, caches filled), not measured.
    await Promise.all(Array.from({ length: USERS }, (_, u) => userLoop(server.url, `u${u}`, Date.now() + 2000, {}, [])));
    const before1 = commitCounts();
    const unloaded = await phase(server.url, 'unloaded', false);
    const sum1 = summarise(unloaded);
    const w1 = checkWrites(unloaded.acked, before1);
    printPhase(`Unloaded (${USERS} users, ${SECONDS} s)`, sum1, w1);

    const before2 = commitCounts();
    const loaded = await phase(server.url, 'loaded', true);
    const sum2 = summarise(loaded);
    const w2 = checkWrites(loaded.acked, before2);
    printPhase(`With a runaway query and a ${CSV_ROWS.toLocaleString('en')}-row CSV import (${USERS} users + 2, ${SECONDS} s)`, sum2, w2);
    const heavy = (list) => list.map((o) => `${o.result} ${(o.ms / 1000).toFixed(1)}s`).join(', ') || 'none finished';
    console.log(`runaway user: ${heavy(loaded.heavyOut.runaway)}`);
    console.log(`import user:  ${heavy(loaded.heavyOut.import)}`);

    const p99a = sum1.rows.find((r) => r.label === 'ALL').p99;
    const p99b = sum2.rows.find((r) => r.label === 'ALL').p99;
    const ratio = p99b / p99a;
    console.log(`\nothers' p99 with the heavy users / unloaded p99: ${p99b.toFixed(1)} / ${p99a.toFixed(1)} ms = ${ratio.toFixed(2)}x (target <= 2x): ${ratio <= 2 ? 'PASS' : 'FAIL'}`);
    console.log(`lost writes: ${w1.lost + w2.lost} (target 0): ${w1.lost + w2.lost === 0 && w1.commitMismatch + w2.commitMismatch === 0 ? 'PASS' : 'FAIL'}`);
  } finally {
    server.proc.kill('SIGTERM');
    await new Promise((r) => server.proc.once('exit', r));
    agent.destroy();
    fs.rmSync(base, { recursive: true, force: true });
  }
}

await main();
