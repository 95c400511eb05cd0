// SQLite and archive benchmarks of the built plugin (dist/fileshed.mjs) against native tools
// measured in the same run, printed as one aligned table (stdout); progress goes to stderr.
//
//   e) CSV import, 1,000,000 rows x 5 columns (id,name,value,category,date), vs the sqlite3 CLI
//      `.import` into a fresh database. Ours runs in a fresh child node process (first call of the
//      process: engine start-up included) that reports the call's time, its own peak RSS and that
//      of its SQLite child (the file engine imports there; sql.js in a thread of the process).
//   f) unzip 10,000 small files vs `unzip -q`
//   g) zip the same 10,000 files vs `zip -qr`
//
// Inputs (the CSV, the 10,000-file tree, the zip made by `zip -qr`) are created once in the cache
// folder (FILESHED_BENCH_DIR, default <tmp>/fileshed-bench) and reused. Outputs are removed.
//   node bench/sqlite-archive.mjs [--runs N]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUNDLE as bundle, ensureBuilt, median, printTable, SMOKE, sized } from './lib.mjs';

const cache = process.env.FILESHED_BENCH_DIR ?? path.join(os.tmpdir(), SMOKE ? 'fileshed-bench-smoke' : 'fileshed-bench');
const csvFile = path.join(cache, 'csv1m.csv');
const base = path.join(cache, 'sqlarc-base'); // storage_base_path for our side
const user = 'bench';
const storage = path.join(base, 'users', user, 'Storage', 'data');
const treeName = 'small10k';
const treeDir = path.join(storage, treeName);
const zipFile = path.join(cache, 'small10k.zip');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : sized(5, 1);
const ROWS = sized(1_000_000, 2_000);
// The archive tree: DIRS folders of FILES_PER files.
const DIRS = sized(100, 5);
const FILES_PER = sized(100, 10);
const TREE_FILES = DIRS * FILES_PER;

const log = (t) => process.stderr.write(`${t}\n`);
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const timeBin = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
// Deleting 10,000 files leaves the disk busy writing back for a while; both sides start after a sync.
const settle = () => spawnSync('sync');

function timed(cmd, args, opts = {}) {
  const wrapped = timeBin ? [timeBin, ['-f', '%M', cmd, ...args]] : [cmd, args];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(wrapped[0], wrapped[1], { encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const rssKb = timeBin ? Number(r.stderr.trim().split('\n').pop()) : NaN;
  return { ms, rssKb, stdout: r.stdout };
}

function ensureCsv() {
  if (fs.existsSync(csvFile) && fs.statSync(csvFile).size > ROWS * 40) return;
  log(`generating ${ROWS} rows into ${csvFile} (once) ...`);
  fs.mkdirSync(cache, { recursive: true });
  const fd = fs.openSync(`${csvFile}.part`, 'w');
  const cats = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  let buf = 'id,name,value,category,date\n';
  for (let i = 1; i <= ROWS; i++) {
    const day = new Date(Date.UTC(2020, 0, 1) + Math.floor(rnd() * 1500) * 86400000).toISOString().slice(0, 10);
    buf += `${i},name_${Math.floor(rnd() * 1e6)},${(rnd() * 10000).toFixed(2)},${cats[i % 8]},${day}\n`;
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf);
      buf = '';
    }
  }
  fs.writeSync(fd, buf);
  fs.closeSync(fd);
  fs.renameSync(`${csvFile}.part`, csvFile);
}

function ensureTree() {
  const marker = path.join(cache, 'small10k.complete');
  if (!fs.existsSync(marker) || !fs.existsSync(treeDir) || fs.readFileSync(marker, 'utf8').trim() !== String(TREE_FILES)) {
    log(`creating 10,000 small files in ${treeDir} (once) ...`);
    fs.rmSync(treeDir, { recursive: true, force: true });
    for (let d = 0; d < DIRS; d++) {
      const dir = path.join(treeDir, `d${String(d).padStart(2, '0')}`);
      fs.mkdirSync(dir, { recursive: true });
      for (let f = 0; f < FILES_PER; f++) fs.writeFileSync(path.join(dir, `f${String(f).padStart(2, '0')}.txt`), `file ${d}/${f}\n`);
    }
    fs.rmSync(zipFile, { force: true });
    fs.writeFileSync(marker, `${TREE_FILES}\n`);
  }
  if (!fs.existsSync(zipFile)) spawnSync('zip', ['-q', '-r', zipFile, treeName], { cwd: storage });
}

// The child that imports the CSV in a fresh process and reports its own figures.
const childScript = `
const [bundle, base, user, lib] = process.argv.slice(2);
const { Tools } = await import(bundle);
const { childPeakRss } = await import(lib);
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: base };
const before = process.resourceUsage().maxRSS;
const t0 = performance.now();
const r = JSON.parse(await tools.shed_sqlite({ zone: 'storage', path: 'bench-import.db', import_csv: 'csv1m.csv', table: 't', __user__: { id: user } }));
const ms = performance.now() - t0;
if (!r.success) { console.error(JSON.stringify(r)); process.exit(1); }
const engine = JSON.parse(await tools.shed_parameters({})).data.sqlite_engine.engine;
console.log(JSON.stringify({ ms, engine, rows: r.data.rows_imported, dbBytes: r.data.db_size, rssBeforeKb: before, rssPeakKb: process.resourceUsage().maxRSS, childPeak: Math.max(0, ...childPeakRss(process.pid)) }));
process.exit(0);
`;

// ------------------------------------------------------------------------------------------

ensureBuilt();
fs.mkdirSync(storage, { recursive: true });
const rows = [];
const mod = await import(pathToFileURL(bundle).href);
const tools = new mod.Tools();
// zip -r stores the 100 folders as entries too (10,100 entries): the entry limit is raised for the bench.
tools.valves = { ...tools.valves, storage_base_path: base, max_file_size_mb: 1000, quota_per_user_mb: 100000, zip_max_entries: 20000 };
const call = async (fn, args) => {
  const r = JSON.parse(await tools[fn]({ ...args, __user__: { id: user } }));
  if (!r.success) throw new Error(`${fn}: ${JSON.stringify(r.error)}`);
  return r;
};

// e) CSV import
if (!has('sqlite3')) {
  log('e) skipped: the sqlite3 command is not installed');
} else {
  ensureCsv();
  const zoneCsv = path.join(storage, 'csv1m.csv');
  if (!fs.existsSync(zoneCsv)) fs.linkSync(csvFile, zoneCsv);
  const childFile = path.join(cache, 'csv-child.mjs');
  fs.writeFileSync(childFile, childScript);
  const cli = [];
  const ours = [];
  const cliDb = path.join(cache, 'cli-import.db');
  log(`e) CSV import, ${RUNS} runs each, interleaved ...`);
  for (let i = 0; i < RUNS; i++) {
    fs.rmSync(cliDb, { force: true });
    cli.push(timed('sqlite3', [cliDb, '-cmd', '.mode csv', `.import ${csvFile} t`]));
    fs.rmSync(path.join(storage, 'bench-import.db'), { force: true });
    const r = timed(process.execPath, [childFile, pathToFileURL(bundle).href, base, user, new URL('./lib.mjs', import.meta.url).href]);
    const fig = JSON.parse(r.stdout.trim().split('\n').pop());
    if (fig.rows !== ROWS) throw new Error(`imported ${fig.rows} rows, expected ${ROWS}`);
    ours.push({ ...fig, wall: r.ms });
    log(`   run ${i + 1}: sqlite3 ${(cli.at(-1).ms / 1000).toFixed(2)} s, ours (${fig.engine}) ${(fig.ms / 1000).toFixed(2)} s (process ${(r.ms / 1000).toFixed(2)} s, peak RSS ${(fig.rssPeakKb / 1024).toFixed(0)} MB, SQLite child ${(fig.childPeak / 1048576).toFixed(0)} MB)`);
  }
  const cliSize = fs.statSync(cliDb).size;
  fs.rmSync(cliDb, { force: true });
  fs.rmSync(path.join(storage, 'bench-import.db'), { force: true });
  const oursMs = median(ours.map((o) => o.ms));
  const cliMs = median(cli.map((c) => c.ms));
  const csvRatio = oursMs / cliMs;
  const engine = ours[0].engine;
  rows.push({ scenario: `e) CSV import 1M rows x 5 (call, fresh process, ${engine})`, ours: sec(oursMs), anchor: 'sqlite3 .import', anchorValue: sec(cliMs), ratio: ratio(csvRatio), target: '<= 1.5x', result: csvRatio <= 1.5 ? 'PASS' : 'FAIL' });
  rows.push({ scenario: 'e) same, whole child process (node start incl.)', ours: sec(median(ours.map((o) => o.wall))), anchor: 'sqlite3 .import', anchorValue: sec(cliMs), ratio: ratio(median(ours.map((o) => o.wall)) / cliMs), target: '-', result: '-' });
  const db = ours[0].dbBytes;
  // Where the import ran: the SQLite child (file engine), or the process itself (sql.js, on a thread).
  const peak = median(ours.map((o) => (engine === 'node:sqlite' ? o.childPeak : o.rssPeakKb * 1024)));
  const before = median(ours.map((o) => o.rssBeforeKb)) * 1024;
  rows.push({ scenario: `e) peak RSS of the import (${engine === 'node:sqlite' ? 'SQLite child' : 'the process'})`, ours: mb(peak), anchor: 'db size', anchorValue: mb(db), ratio: ratio(peak / db), target: '<= 150 MB', result: peak <= 150 * 1048576 ? 'PASS' : 'FAIL' });
  rows.push({ scenario: 'e) server RSS growth during the import', ours: mb(median(ours.map((o) => o.rssPeakKb)) * 1024 - before), anchor: 'db size', anchorValue: mb(db), ratio: '-', target: '-', result: '-' });
  rows.push({ scenario: 'e) sqlite3 peak RSS / db size (typed vs TEXT)', ours: mb(db), anchor: 'sqlite3 RSS', anchorValue: mb(median(cli.map((c) => c.rssKb)) * 1024), ratio: '-', target: '-', result: `cli db ${mb(cliSize)}` });
}

// f) unzip and g) zip of 10,000 small files
if (!has('zip') || !has('unzip')) {
  log('f/g) skipped: zip and unzip commands are needed as anchors');
} else {
  ensureTree();
  const inZone = path.join(storage, 'small10k.zip');
  fs.copyFileSync(zipFile, inZone);
  const outDir = path.join(cache, 'unzip-out');
  const unzipCli = [];
  const unzipOurs = [];
  log(`f) unzip 10,000 files, ${RUNS} runs each (+1 warm-up), interleaved ...`);
  for (let i = 0; i <= RUNS; i++) {
    fs.rmSync(outDir, { recursive: true, force: true });
    settle();
    const c = timed('unzip', ['-q', '-d', outDir, zipFile]);
    fs.rmSync(path.join(storage, 'unz'), { recursive: true, force: true });
    settle();
    const t0 = performance.now();
    const r = await call('shed_unzip', { zone: 'storage', src: 'small10k.zip', dest: 'unz' });
    const ms = performance.now() - t0;
    if (r.data.files_count !== TREE_FILES) throw new Error(`extracted ${r.data.files_count} files`);
    if (i > 0) {
      unzipCli.push(c.ms);
      unzipOurs.push(ms);
    }
  }
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.rmSync(path.join(storage, 'unz'), { recursive: true, force: true });
  const ur = median(unzipOurs) / median(unzipCli);
  rows.push({ scenario: 'f) unzip 10,000 small files (in-process call)', ours: msText(median(unzipOurs)), anchor: 'unzip -q', anchorValue: msText(median(unzipCli)), ratio: ratio(ur), target: '<= 1.5x', result: ur <= 1.5 ? 'PASS' : 'FAIL' });

  const zipCli = [];
  const zipOurs = [];
  const cliOut = path.join(cache, 'zip-out.zip');
  log(`g) zip 10,000 files, ${RUNS} runs each (+1 warm-up), interleaved ...`);
  for (let i = 0; i <= RUNS; i++) {
    fs.rmSync(cliOut, { force: true });
    settle();
    const c = timed('zip', ['-q', '-r', cliOut, treeName], { cwd: storage });
    fs.rmSync(path.join(storage, 'zipped.zip'), { force: true });
    settle();
    const t0 = performance.now();
    const r = await call('shed_zip', { zone: 'storage', src: treeName, dest: 'zipped.zip' });
    const ms = performance.now() - t0;
    if (r.data.files_count !== TREE_FILES) throw new Error(`zipped ${r.data.files_count} files`);
    if (i > 0) {
      zipCli.push(c.ms);
      zipOurs.push(ms);
    }
  }
  const ourSize = fs.statSync(path.join(storage, 'zipped.zip')).size;
  const cliSize = fs.statSync(cliOut).size;
  fs.rmSync(cliOut, { force: true });
  fs.rmSync(path.join(storage, 'zipped.zip'), { force: true });
  fs.rmSync(inZone, { force: true });
  const zr = median(zipOurs) / median(zipCli);
  rows.push({ scenario: 'g) zip 10,000 small files (in-process call)', ours: msText(median(zipOurs)), anchor: 'zip -qr', anchorValue: msText(median(zipCli)), ratio: ratio(zr), target: '<= 1.5x', result: zr <= 1.5 ? 'PASS' : 'FAIL' });
  rows.push({ scenario: 'g) archive size', ours: mb(ourSize), anchor: 'zip -qr', anchorValue: mb(cliSize), ratio: ratio(ourSize / cliSize), target: '-', result: '-' });
}

printTable(rows);
log(`medians of ${RUNS} runs; cache: ${cache}`);

function sec(x) {
  return `${(x / 1000).toFixed(2)} s`;
}
function msText(x) {
  return `${x.toFixed(0)} ms`;
}
function mb(bytes) {
  return `${(bytes / 1048576).toFixed(1)} MB`;
}
function ratio(x) {
  return `${x.toFixed(2)}x`;
}
