// `npm run bench:smoke`: every bench script once on tiny sizes (BENCH_SMOKE=1), so a script that
// no longer runs (a broken import, a renamed function, a changed result shape) fails CI instead of
// being found months later. The figures it prints mean nothing; only the exit codes count.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The scripts `npm run bench` runs, read from package.json: a script added there is smoke-tested too.
const benchLine = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.bench;
const SCRIPTS = [...benchLine.matchAll(/bench\/([\w-]+\.mjs)/g)].map((m) => m[1]);
// Generous: CI runs this on a loaded two-core machine, and a smoke run that passes must not fail on time.
const LIMIT_S = 120;

const started = performance.now();
const failed = [];
for (const script of SCRIPTS) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [path.join(root, 'bench', script)], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', env: { ...process.env, BENCH_SMOKE: '1' } });
  const s = ((performance.now() - t0) / 1000).toFixed(1);
  if (r.status === 0) {
    console.log(`ok    ${script} (${s} s)`);
  } else {
    failed.push(script);
    console.log(`FAIL  ${script} (${s} s, exit ${r.status ?? r.signal})\n${r.stderr.trim().split('\n').slice(-15).join('\n')}`);
  }
}
const total = (performance.now() - started) / 1000;
console.log(`bench:smoke ${SCRIPTS.length} scripts in ${total.toFixed(1)} s (limit ${LIMIT_S} s)`);
if (failed.length > 0) process.exitCode = 1;
if (total > LIMIT_S) {
  console.log(`bench:smoke took longer than ${LIMIT_S} s: shrink the smoke sizes of the slowest script.`);
  process.exitCode = 1;
}
