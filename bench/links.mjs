// Download-link benchmarks, printed as one aligned table (stdout); progress on stderr.
//
//   l1) a 1 GB file through a link of `fileshed serve` (dist/cli.mjs) vs `python3 -m http.server`
//       serving the same file, the same client (curl to /dev/null), alternating runs, medians;
//       throughput ratio (ours / python) target >= 1.0x.
//   l2) the server's memory growth during those downloads (peak RSS VmHWM minus RSS before),
//       target < 100 MB.
//   l3) the folder page of a 10,000-entry folder, median time to the last byte, target <= 200 ms
//       (python's own listing of the same folder shown beside it, same client, same run).
//
// The 1 GB file is sparse (created at run time in a temp folder, removed at the end): both servers
// read the same zeros from the page cache, so the comparison measures the servers, not the disk.
// BENCH_SMOKE=1 uses 16 MB, 500 entries and one run (a quick check that the script works).
//   node bench/links.mjs [--runs N]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, printTable } from './lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli.mjs');
const smoke = process.env.BENCH_SMOKE === '1';
const runsArg = process.argv.indexOf('--runs');
const RUNS = smoke ? 1 : runsArg > 0 ? Number(process.argv[runsArg + 1]) : 7;
const SIZE = smoke ? 16 * 1024 * 1024 : 1024 * 1024 * 1024;
const ENTRIES = smoke ? 500 : 10_000;
const log = (t) => process.stderr.write(`${t}\n`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-bench-links-'));
const base = path.join(tmp, 'base');
const storage = path.join(base, 'users', 'local', 'Storage', 'data');
fs.mkdirSync(path.join(storage, 'many'), { recursive: true });
const big = path.join(storage, 'big.bin');
fs.closeSync(fs.openSync(big, 'w'));
fs.truncateSync(big, SIZE);
for (let i = 0; i < ENTRIES; i++) fs.writeFileSync(path.join(storage, 'many', `file-${String(i).padStart(5, '0')}.txt`), 'x');

const children = [];
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startOurs() {
  const proc = spawn(process.execPath, [cli, 'serve', '--port', '0', '--base', base, '--access-log', 'off'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  const url = await new Promise((resolve, reject) => {
    proc.stdout.once('data', (d) => {
      const m = /Fileshed listening on (\S+)/.exec(String(d));
      if (m) resolve(m[1]);
      else reject(new Error(`unexpected output: ${d}`));
    });
    proc.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
  return { proc, url };
}

async function startPython() {
  const port = await freePort();
  const proc = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', storage], { stdio: 'ignore' });
  children.push(proc);
  for (let i = 0; i < 100; i++) {
    if (spawnSync('curl', ['-s', '-o', '/dev/null', `http://127.0.0.1:${port}/`]).status === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, url: `http://127.0.0.1:${port}` };
}

/** Bytes per second of one download with curl to /dev/null. */
function download(url) {
  const r = spawnSync('curl', ['-s', '-f', '-o', '/dev/null', '-w', '%{speed_download} %{size_download}', url], { encoding: 'utf8' });
  const [speed, size] = r.stdout.trim().split(' ').map(Number);
  if (r.status !== 0 || size !== SIZE) throw new Error(`download of ${url} failed (status ${r.status}, ${size} bytes)`);
  return speed;
}

function timeToLastByte(url) {
  const r = spawnSync('curl', ['-s', '-f', '-o', '/dev/null', '-w', '%{time_total}', url], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`GET ${url} failed`);
  return Number(r.stdout) * 1000;
}

function memKb(pid, field) {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

const ours = await startOurs();
const post = async (fn, body) => (await (await fetch(`${ours.url}/${fn}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json());
const fileLink = (await post('shed_link_create', { zone: 'storage', path: 'big.bin' })).data.url;
const folderLink = (await post('shed_link_create', { zone: 'storage', path: 'many' })).data.url;
const py = await startPython();

log(`links bench: ${SIZE / 1048576} MiB file, ${ENTRIES} entries, ${RUNS} run(s)`);
timeToLastByte(folderLink); // warm-up (first sql.js load, first page)
const rssBefore = memKb(ours.proc.pid, 'VmRSS');
// One unmeasured download each: both sides start with the file in the page cache and warm code.
download(fileLink);
download(`${py.url}/big.bin`);
const oursSpeed = [];
const pySpeed = [];
for (let i = 0; i < RUNS; i++) {
  oursSpeed.push(download(fileLink));
  pySpeed.push(download(`${py.url}/big.bin`));
  log(`  run ${i + 1}: ours ${(oursSpeed[i] / 1048576).toFixed(0)} MiB/s, python ${(pySpeed[i] / 1048576).toFixed(0)} MiB/s`);
}
const growthMb = (memKb(ours.proc.pid, 'VmHWM') - rssBefore) / 1024;
const listMs = [];
const pyListMs = [];
for (let i = 0; i < Math.max(5, RUNS); i++) {
  listMs.push(timeToLastByte(folderLink));
  pyListMs.push(timeToLastByte(`${py.url}/many/`));
}

const o = median(oursSpeed);
const p = median(pySpeed);
const mibs = (v) => `${(v / 1048576).toFixed(0)} MiB/s`;
const ratio = o / p;
const list = median(listMs);
const pyList = median(pyListMs);
printTable([
  { scenario: `l1 ${SIZE / 1048576} MiB via link`, ours: mibs(o), anchor: 'python3 -m http.server', anchorValue: mibs(p), ratio: `${ratio.toFixed(2)}x`, target: '>= 1.0x', result: ratio >= 1 ? 'PASS' : 'FAIL' },
  { scenario: 'l2 server RSS growth', ours: `${growthMb.toFixed(1)} MB`, anchor: '-', anchorValue: '-', ratio: '-', target: '< 100 MB', result: growthMb < 100 ? 'PASS' : 'FAIL' },
  // The anchor's listing shows names only (no stat per entry); ours shows sizes and dates too.
  { scenario: `l3 folder page, ${ENTRIES} entries`, ours: `${list.toFixed(1)} ms`, anchor: 'python listing (names only)', anchorValue: `${pyList.toFixed(1)} ms`, ratio: `${(list / pyList).toFixed(2)}x`, target: '<= 200 ms', result: list <= 200 ? 'PASS' : 'FAIL' },
]);
process.exit(0);
