// Versioned writes: `node bench/vcs.mjs`.
//
//   a) shed_patch_text (append one line) in a Documents zone holding 100 and 10,000 files, through the
//      built plugin module (dist/fileshed.mjs: dispatcher, quota check, atomic write, commit), against
//      `echo ... >> f && git add f && git commit -q -m x` (sh -c) on a git CLI repository of the same files;
//   b) what `shed_exec touch x` costs minus the spawn: snapshot + touch + snapshot + changedPaths +
//      recordChange of the one changed file, in the 10,000-file zone (vcs bundled from src by esbuild);
//   b2) the same with the folder watch shed_exec uses now (quota/usage.ts watchChanges): only the
//      folders that changed are compared, at 100 and 10,000 files;
//   c) the commit alone (recordChange of one changed file) at both sizes.
// Medians of RUNS rounds after WARMUP warm-ups; every round runs each scenario once (interleaved, so
// background load hits all alike); ratios side by side. Temp folders are removed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { median, sized } from './lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.RUNS ?? sized(21, 2));
const WARMUP = sized(3, 1);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-vcs-bench-'));
const log = (t) => process.stderr.write(`${t}\n`);
const user = { id: 'bench', name: 'Bench', email: '', role: 'user' };

/** `dirs` folders of `per` files each, written straight to disk. */
function makeFiles(dir, dirs, per) {
  for (let d = 0; d < dirs; d++) {
    const sub = path.join(dir, `d${String(d).padStart(2, '0')}`);
    fs.mkdirSync(sub, { recursive: true });
    for (let f = 0; f < per; f++) fs.writeFileSync(path.join(sub, `f${String(f).padStart(2, '0')}.txt`), `file ${d}/${f}\nsecond line\n`);
  }
}

/** Real git in `dir`; for a zone's work tree (…/data), with its repository beside it (…/git). */
function git(dir, ...args) {
  const r = spawnSync('git', [...where(dir), ...args], { encoding: 'utf8', env: gitEnv });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const where = (dir) => (path.basename(dir) === 'data' ? [`--git-dir=${path.join(dir, '..', 'git')}`, `--work-tree=${dir}`, '-C', dir] : ['-C', dir]);

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: work, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@x', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@x' };

// --- build: the plugin module for the function path, the vcs core alone for the command path.
log('building dist/fileshed.mjs ...');
const built = spawnSync(process.execPath, ['build.mjs'], { cwd: root, encoding: 'utf8' });
if (built.status !== 0) throw new Error(`node build.mjs failed (maybe someone else's file is mid-change; retry):\n${built.stderr}`);
const { Tools } = await import(`${pathToFileURL(path.join(root, 'dist', 'fileshed.mjs')).href}?t=${Date.now()}`);
const vcsBundle = path.join(work, 'vcs.mjs');
await build({
  entryPoints: [path.join(root, 'src/core/services/vcs/index.ts')], bundle: true, platform: 'node', format: 'esm', outfile: vcsBundle, logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const vcs = await import(pathToFileURL(vcsBundle).href);
const usageBundle = path.join(work, 'usage.mjs');
await build({ entryPoints: [path.join(root, 'src/core/services/quota/usage.ts')], bundle: true, platform: 'node', format: 'esm', outfile: usageBundle, logLevel: 'warning' });
const usage = await import(pathToFileURL(usageBundle).href);

/** Runs every scenario once per round, round after round, so background load hits them all alike. */
async function interleaved(scenarios) {
  const times = Object.fromEntries(Object.keys(scenarios).map((k) => [k, []]));
  for (let round = 0; round < WARMUP + RUNS; round++) {
    for (const [name, fn] of Object.entries(scenarios)) {
      const t0 = process.hrtime.bigint();
      await fn(round);
      if (round >= WARMUP) times[name].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) }]));
}

const zones = {};
for (const [label, dirs, per] of sized([['small', 10, 10], ['big', 100, 100]], [['small', 2, 5], ['big', 4, 10]])) {
  log(`setting up ${dirs * per} files ...`);
  // Our Documents zone: files on disk, then the first call's commit takes them all (initial commit).
  const base = path.join(work, `shed-${dirs}`);
  const docs = path.join(base, 'users', 'bench', 'Documents', 'data');
  makeFiles(docs, dirs, per);
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: base, quota_per_user_mb: 10_000 };
  const call = async (fn, args) => {
    const r = JSON.parse(await tools[fn]({ ...args, __user__: { id: 'bench', name: 'Bench' }, __metadata__: { chat_id: 'c' } }));
    if (!r.success) throw new Error(`${fn}: ${JSON.stringify(r.error)}`);
    return r;
  };
  const t0 = Date.now();
  await call('shed_create_file', { zone: 'documents', path: 'start.txt', content: 'start\n' });
  const initialMs = Date.now() - t0;
  const target = `d${String(Math.floor(dirs / 2)).padStart(2, '0')}/f${String(Math.floor(per / 2)).padStart(2, '0')}.txt`;
  // The git CLI repository of the same files.
  const cli = path.join(work, `cli-${dirs}`);
  makeFiles(cli, dirs, per);
  git(cli, 'init', '-q', '-b', 'main');
  git(cli, 'add', '-A');
  git(cli, 'commit', '-q', '-m', 'init');
  zones[label] = { call, docs, cli, target, initialMs, zone: { root: fs.realpathSync(docs), label: 'Documents' } };
}

const patch = (z) => async (i) => {
  const r = await z.call('shed_patch_text', { zone: 'documents', path: z.target, content: `line ${i} ${Math.random()}`, position: 'end' });
  if (!r.data.commit) throw new Error('no commit made');
};
const cliCommit = (z) => async (i) => {
  const r = spawnSync('sh', ['-c', `echo "line ${i} $$" >> ${z.target} && git add ${z.target} && git commit -q -m x`], { cwd: z.cli, env: gitEnv });
  if (r.status !== 0) throw new Error(`git CLI failed: ${r.stderr}`);
};
const commitOnly = (z) => async (i) => {
  fs.appendFileSync(path.join(z.docs, z.target), `direct ${i}\n`);
  const r = await vcs.recordChange(z.zone, { paths: [z.target], summary: 'x' }, user, undefined);
  if (!r.commit) throw new Error('no commit made');
};
// shed_exec touch x, minus the spawn: snapshot, the command's effect, snapshot, diff, commit.
const snapTimes = [];
const touch = (z) => async (i) => {
  const t0 = process.hrtime.bigint();
  const before = await vcs.snapshot(z.zone.root);
  snapTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
  fs.writeFileSync(path.join(z.docs, `touched-${i}.txt`), ''); // what `touch touched-N.txt` does
  const paths = vcs.changedPaths(before, await vcs.snapshot(z.zone.root));
  const r = await vcs.recordChange(z.zone, { paths, summary: 'Run touch' }, user, undefined);
  if (!r.commit) throw new Error(`no commit made for ${paths.join(', ')}`);
};

// shed_exec touch x today, minus the spawn: the folder watch (changed folders only), the effect, commit.
const watched = (z) => async (i) => {
  const w = await usage.watchChanges(z.docs, { entries: true });
  fs.writeFileSync(path.join(z.docs, `watched-${i}.txt`), '');
  const { paths } = await w.finish();
  if (paths === undefined) throw new Error('the watch could not vouch for the change');
  const r = await vcs.recordChange(z.zone, { paths, summary: 'Run touch' }, user, undefined);
  if (!r.commit) throw new Error(`no commit made for ${paths.join(', ')}`);
};

log(`measuring: ${WARMUP} warm-up and ${RUNS} measured rounds, scenarios interleaved ...`);
const t = await interleaved({
  patchSmall: patch(zones.small),
  patchBig: patch(zones.big),
  cliSmall: cliCommit(zones.small),
  cliBig: cliCommit(zones.big),
  commitSmall: commitOnly(zones.small),
  commitBig: commitOnly(zones.big),
  touchBig: touch(zones.big),
  watchSmall: watched(zones.small),
  watchBig: watched(zones.big),
});

for (const z of Object.values(zones)) {
  // Sanity: the repositories are standard and clean.
  if (git(z.docs, 'status', '--porcelain') !== '') throw new Error('git status not clean');
  const fsck = spawnSync('git', [...where(z.docs), 'fsck', '--strict', '--no-dangling'], { encoding: 'utf8', env: gitEnv });
  if (fsck.status !== 0) throw new Error(`fsck failed ${fsck.stderr}`);
}

const rows = [];
const f = (x) => `${x.toFixed(1)} ms`;
const ratio = (a, b) => (a.median / b.median).toFixed(2);
rows.push(['shed_patch_text, Documents of 100 files', f(t.patchSmall.median), 'git add && git commit (CLI), 100 files', f(t.cliSmall.median), ratio(t.patchSmall, t.cliSmall)]);
rows.push(['shed_patch_text, Documents of 10,000 files', f(t.patchBig.median), 'git add && git commit (CLI), 10,000 files', f(t.cliBig.median), ratio(t.patchBig, t.cliBig)]);
rows.push(['shed_patch_text, 10,000 files', f(t.patchBig.median), 'same call, 100 files', f(t.patchSmall.median), ratio(t.patchBig, t.patchSmall)]);
rows.push(['commit only (recordChange of 1 file), 10,000 files', f(t.commitBig.median), 'same, 100 files', f(t.commitSmall.median), ratio(t.commitBig, t.commitSmall)]);
rows.push(['touch x: 2 snapshots + changedPaths + commit, 10,000 files', f(t.touchBig.median), 'git add && git commit (CLI), 10,000 files', f(t.cliBig.median), ratio(t.touchBig, t.cliBig)]);
rows.push(['shed_exec touch x: folder watch + commit, 100 files', f(t.watchSmall.median), 'git add && git commit (CLI), 100 files', f(t.cliSmall.median), ratio(t.watchSmall, t.cliSmall)]);
rows.push(['shed_exec touch x: folder watch + commit, 10,000 files', f(t.watchBig.median), 'git add && git commit (CLI), 10,000 files', f(t.cliBig.median), ratio(t.watchBig, t.cliBig)]);
rows.push(['shed_exec touch x: folder watch, 10,000 files', f(t.watchBig.median), 'same, 100 files', f(t.watchSmall.median), ratio(t.watchBig, t.watchSmall)]);
rows.push(['  of which one snapshot (stat walk of 10,000 files)', f(median(snapTimes.slice(WARMUP))), '', '', '']);

const widths = [0, 1, 2, 3, 4].map((c) => Math.max(...[['scenario', 'ours', 'anchor', 'anchor', 'ratio'], ...rows].map((r) => r[c].length)));
const line = (r) => r.map((cell, i) => cell.padEnd(widths[i])).join('  ');
console.log(line(['scenario', 'ours', 'anchor', 'anchor', 'ratio']));
for (const r of rows) console.log(line(r));
console.log(`\nmedians of ${RUNS} rounds after ${WARMUP} warm-ups, scenarios interleaved; initial commit of the zone (its first call): 100 files ${zones.small.initialMs} ms, 10,000 files ${zones.big.initialMs} ms`);
console.log(`targets: 10,000-file patch <= 0.5x git CLI (${ratio(t.patchBig, t.cliBig)}); 10,000-file figure <= 1.5x the 100-file figure (${ratio(t.patchBig, t.patchSmall)})`);
fs.rmSync(work, { recursive: true, force: true });
