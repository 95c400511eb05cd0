// `npm run bench`: performance of the built plugin module (dist/fileshed.mjs) against anchors
// measured in the same run, printed as one aligned table. Nothing is written except the cached
// 100k-file tree (reused between runs) and temp folders that are removed.
//
//   a) bundle size
//   b) cold start: `node bench/cold-start.mjs` vs `node -e 0` (wall time of the spawned process)
//   c) shed_stats on a Storage zone of 100,000 files vs `du -sb` of the same tree
//      (cold: the first shed_stats of a fresh process; warm: repeated in one process)
//   d) one small shed_create_file in that zone (its quota check included) vs `du -sb`
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, printTable, SMOKE, sized } from './lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = path.join(root, 'dist', 'fileshed.mjs');
const cache = process.env.FILESHED_BENCH_DIR ?? path.join(os.tmpdir(), SMOKE ? 'fileshed-bench-smoke' : 'fileshed-bench');
const base = path.join(cache, 'base'); // storage_base_path of the bench
const tree = path.join(base, 'users', 'bench', 'Storage', 'data'); // the bench user's Storage zone
const marker = path.join(cache, 'tree100k.complete');
const TOP = sized(10, 2);
const SUB = sized(100, 3);
const FILES = sized(100, 10);
const FILE_BYTES = 74;

const RUNS = SMOKE ? { cold: 2, du: 1, statsCold: 1, statsWarm: 2, writes: 2 } : { cold: 15, du: 7, statsCold: 7, statsWarm: 30, writes: 30 };

function log(text) {
  process.stderr.write(`${text}\n`);
}

/** Wall time in ms of one spawned process; fails loudly if the process fails. */
function spawnTimed(cmd, args, opts = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr || r.error}`);
  return { ms, stdout: r.stdout };
}

function newestMtime(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

function ensureBuilt() {
  const stale = !fs.existsSync(bundle) || newestMtime(path.join(root, 'src')) > fs.statSync(bundle).mtimeMs;
  if (!stale) return;
  log('building dist/fileshed.mjs (node build.mjs) ...');
  const r = spawnSync(process.execPath, ['build.mjs'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error('node build.mjs failed');
}

/** The 100k-file tree, created once directly as the bench user's Storage zone and then reused. */
function ensureTree() {
  if (fs.existsSync(marker) && fs.existsSync(tree) && fs.readFileSync(marker, 'utf8').trim() === String(TOP * SUB * FILES)) {
    fs.rmSync(path.join(tree, 'bench-writes'), { recursive: true, force: true }); // leftovers of an interrupted run
    return;
  }
  log(`creating ${TOP * SUB * FILES} files of ${FILE_BYTES} bytes in ${tree} (once) ...`);
  fs.rmSync(base, { recursive: true, force: true });
  const t0 = Date.now();
  for (let t = 0; t < TOP; t++) {
    for (let s = 0; s < SUB; s++) {
      const dir = path.join(tree, `t${t}`, `s${s}`);
      fs.mkdirSync(dir, { recursive: true });
      for (let f = 0; f < FILES; f++) {
        const line = `bench file t${t}/s${s}/f${f} `;
        fs.writeFileSync(path.join(dir, `f${f}.txt`), `${line.padEnd(FILE_BYTES - 1, '.')}\n`);
      }
    }
  }
  fs.writeFileSync(marker, `${TOP * SUB * FILES}\n`);
  log(`  done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

function child(mode, count = 0, storageBase = base) {
  const { stdout } = spawnTimed(process.execPath, [path.join(root, 'bench', 'zone-child.mjs'), mode, String(count), storageBase]);
  return JSON.parse(stdout.trim().split('\n').pop());
}

function du() {
  return spawnTimed('du', ['-sb', tree]).ms;
}

// ------------------------------------------------------------------------------------------

ensureBuilt();
const rows = [];

// a) bundle size
const bundleBytes = fs.statSync(bundle).size;
rows.push({ scenario: 'a) bundle size dist/fileshed.mjs (minified)', ours: `${(bundleBytes / 1024).toFixed(1)} KiB`, anchor: '-', anchorValue: '-', ratio: '-', target: '<= 2 MiB', result: bundleBytes <= 2 * 1024 * 1024 ? 'PASS' : 'FAIL' });

// b) cold start, interleaved so both see the same machine state
log('b) cold start ...');
const coldOurs = [];
const coldNode = [];
spawnTimed(process.execPath, [path.join(root, 'bench', 'cold-start.mjs')]); // warm the page cache once
for (let i = 0; i < RUNS.cold; i++) {
  coldNode.push(spawnTimed(process.execPath, ['-e', '0']).ms);
  coldOurs.push(spawnTimed(process.execPath, [path.join(root, 'bench', 'cold-start.mjs')]).ms);
}
const importOnly = [];
for (let i = 0; i < RUNS.cold; i++) importOnly.push(spawnTimed(process.execPath, ['-e', `await import(${JSON.stringify(bundle)})`, '--input-type=module']).ms);
const importOver = median(importOnly) - median(coldNode);
rows.push({ scenario: 'b) cold import of the module, over node -e 0', ours: ms(importOver), anchor: 'node -e 0', anchorValue: ms(median(coldNode)), ratio: ratio(median(importOnly) / median(coldNode)), target: '<= 150 ms', result: importOver <= 150 ? 'PASS' : 'FAIL' });
const coldRatio = median(coldOurs) / median(coldNode);
rows.push({ scenario: 'b) cold start: import + new Tools + shed_tree', ours: ms(median(coldOurs)), anchor: 'node -e 0', anchorValue: ms(median(coldNode)), ratio: ratio(coldRatio), target: '-', result: '-' });

// c) shed_stats on 100k files vs du -sb
ensureTree();
log('c) shed_stats on 100k files vs du -sb ...');
du(); // warm-up: both sides then read a cached tree
const duTimes = [];
const statsCold = [];
let counted;
for (let i = 0; i < Math.max(RUNS.du, RUNS.statsCold); i++) {
  if (i < RUNS.du) duTimes.push(du());
  if (i < RUNS.statsCold) {
    const r = child('stats-cold');
    statsCold.push(r.ms);
    counted = r;
  }
}
const duMedian = median(duTimes);
const expectedFiles = TOP * SUB * FILES;
if (counted.files !== expectedFiles || counted.bytes !== expectedFiles * FILE_BYTES) {
  log(`WARNING: shed_stats counted ${counted.files} files / ${counted.bytes} bytes, expected ${expectedFiles} / ${expectedFiles * FILE_BYTES}`);
}
const coldStatsRatio = median(statsCold) / duMedian;
rows.push({ scenario: 'c) shed_stats 100k files, cold (1st call)', ours: ms(median(statsCold)), anchor: 'du -sb', anchorValue: ms(duMedian), ratio: ratio(coldStatsRatio), target: '<= 2x', result: coldStatsRatio <= 2 ? 'PASS' : 'FAIL' });

const warm = child('stats-warm', RUNS.statsWarm).ms;
rows.push({ scenario: 'c) shed_stats 100k files, warm (repeated)', ours: ms(warm), anchor: 'du -sb', anchorValue: ms(duMedian), ratio: ratio(warm / duMedian), target: '-', result: '-' });

// d) one small write (with its quota check) in the 100k zone
log('d) small shed_create_file in the 100k zone ...');
let write;
try {
  write = child('write', RUNS.writes).ms;
} finally {
  fs.rmSync(path.join(tree, 'bench-writes'), { recursive: true, force: true });
}
const writeRatio = write / duMedian;
rows.push({ scenario: 'd) quota check: small shed_create_file (per call)', ours: ms(write), anchor: 'du -sb', anchorValue: ms(duMedian), ratio: ratio(writeRatio), target: '<= 0.1x', result: writeRatio <= 0.1 ? 'PASS' : 'FAIL' });
// The same write in an empty zone: what the write costs without 100k files to account for.
const emptyBase = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-bench-empty-'));
let emptyWrite;
try {
  emptyWrite = child('write', RUNS.writes, emptyBase).ms;
} finally {
  fs.rmSync(emptyBase, { recursive: true, force: true });
}
rows.push({ scenario: 'd) the same write in an empty zone', ours: ms(emptyWrite), anchor: 'd) in 100k', anchorValue: ms(write), ratio: ratio(emptyWrite / write), target: '-', result: '-' });

printTable(rows);
log(`runs: cold start ${RUNS.cold}x each, du ${RUNS.du}x, cold shed_stats ${RUNS.statsCold}x (one process each), warm shed_stats ${RUNS.statsWarm}x, writes ${RUNS.writes}x; medians. Tree: ${tree}`);

// ------------------------------------------------------------------------------------------

function ms(x) {
  return `${x.toFixed(x < 10 ? 2 : 1)} ms`;
}

function ratio(x) {
  return `${x.toFixed(x < 0.1 ? 3 : 2)}x`;
}

