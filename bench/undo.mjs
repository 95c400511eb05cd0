// Undo by chat turn (SPEC 9.1): `node bench/undo.mjs`, through the built plugin (dist/fileshed.mjs).
//
//   a) a call that changes one file in a 10,000-file Storage (100 folders x 100 files): shed_patch_text
//      appending one line, and shed_exec `sed -i` on one file; capture on (undo_enabled) vs off;
//      target <= 1.2x;
//   b) undo of a 1,000-file turn (one shed_exec sed -i over 1,000 files) vs `git checkout -- .` of the
//      same change in a git CLI repository of the same files; target <= 1x;
//   c) the capture store's growth after 100 turns of one-line edits to a 10 MB file, against the
//      edits' compressed size (gzip of the 100 changed lines); target <= 2x;
//   d) retention by bytes: 60 turns each rewriting a 1 MB file of random text with undo_max_store_mb=10,
//      the store's size against the same turns with no byte limit; target: the budget plus the copy of
//      the current files (what the collection never frees).
// Medians of alternating rounds (load falls on both sides alike). Temp folders are removed.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { alternating, BUNDLE, elapsedMs, ensureBuilt, median, printTable, sized } from './lib.mjs';

ensureBuilt();
const { Tools } = await import(pathToFileURL(BUNDLE).href);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-undo-bench-'));
// Passable by users' own uids, as /tmp is: commands run as the user (identity separation, the default as root).
fs.chmodSync(work, 0o711);
const log = (t) => process.stderr.write(`${t}\n`);
const RUNS = sized(15, 2);
const WARMUP = sized(2, 1);
const rows = [];
/** UNDO_BENCH=ab runs only those scenarios (default: all four). */
const only = process.env.UNDO_BENCH ?? 'abcd';

function shed(name, valves) {
  const base = path.join(work, name);
  fs.mkdirSync(base, { recursive: true });
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: base, sandbox: 'landlock', ...valves };
  let n = 0;
  return {
    base,
    storage: path.join(base, 'users', 'bench', 'Storage', 'data'),
    async call(fn, args, turn = `t${++n}`) {
      const json = await tools[fn]({ ...args, __user__: { id: 'bench', name: 'Bench' }, __metadata__: { chat_id: 'c', message_id: turn } });
      const r = JSON.parse(json);
      if (!r.success) throw new Error(`${fn}: ${json}`);
      return r;
    },
  };
}

function makeFiles(dir, dirs, per) {
  for (let d = 0; d < dirs; d++) {
    const sub = path.join(dir, `d${String(d).padStart(2, '0')}`);
    fs.mkdirSync(sub, { recursive: true });
    for (let f = 0; f < per; f++) fs.writeFileSync(path.join(sub, `f${String(f).padStart(2, '0')}.txt`), `file ${d}/${f}\nsecond line\n`);
  }
}

const row = (scenario, ours, anchor, anchorValue, ratio, target) => {
  const r = { scenario, ours, anchor, anchorValue, ratio: ratio.toFixed(2), target: `<= ${target}x`, result: ratio <= target ? 'PASS' : 'FAIL' };
  log(`   ${scenario}: ${ours} vs ${anchorValue} (${r.ratio}x, ${r.result})`);
  return r;
};
const ms = (x) => `${x.toFixed(1)} ms`;
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

try {
  // a) one changed file in a 10,000-file Storage.
  if (only.includes('a')) {
      const [dirs, per] = sized([100, 100], [3, 5]);
      log(`a) ${dirs * per} files, capture on vs off ...`);
      const on = shed('on', { undo_enabled: true });
      const off = shed('off', { undo_enabled: false });
      for (const s of [on, off]) {
        makeFiles(s.storage, dirs, per);
        await s.call('shed_tree', { zone: 'storage', path: 'd00' }); // usage walked, first capture built (on)
        await s.call('shed_patch_text', { zone: 'storage', path: 'd00/f00.txt', content: 'warm', position: 'end' });
    }
    const patch = (s) => () => s.call('shed_patch_text', { zone: 'storage', path: 'd01/f01.txt', content: 'one more line', position: 'end' });
    const p = await alternating(RUNS, WARMUP, patch(on), patch(off));
    rows.push(row(`a) shed_patch_text, 1 file of ${dirs * per}, capture on vs off`, ms(p.ours), 'capture off', ms(p.anchor), p.ours / p.anchor, 1.2));
    let flip = 0;
    const sed = (s) => () => s.call('shed_exec', { zone: 'storage', cmd: 'sed', args: ['-i', `s/line.*/line ${flip++}/`, 'd02/f02.txt'] });
    const e = await alternating(RUNS, WARMUP, sed(on), sed(off));
    rows.push(row(`a) shed_exec sed -i, 1 file of ${dirs * per}, capture on vs off`, ms(e.ours), 'capture off', ms(e.anchor), e.ours / e.anchor, 1.2));
    // Past the retention count (undo_max_turns, 200 by default), as every user with a history is:
    // each call also drops the oldest turn, and every 20th collects what no kept turn needs (a walk
    // of the current state). Means, so those collections count.
    const [history, measured] = sized([220, 60], [5, 3]);
    for (let i = 0; i < history; i++) await patch(on)();
    const [xs, ys] = [[], []];
    for (let i = 0; i < measured; i++) {
      xs.push(await elapsedMs(patch(on)));
      ys.push(await elapsedMs(patch(off)));
    }
    const [mx, my] = [mean(xs), mean(ys)];
    rows.push(row(`a) shed_patch_text, 1 file of ${dirs * per}, past the retention count (mean of ${measured})`, ms(mx), 'capture off', ms(my), mx / my, 1.2));

  }
  // b) undo of a 1,000-file turn vs git checkout.
  if (only.includes('b')) {
      const [bd, bp] = sized([10, 100], [2, 5]);
      log(`b) undo of a ${bd * bp}-file turn vs git checkout ...`);
      const u = shed('undo', {});
      makeFiles(u.storage, bd, bp);
      await u.call('shed_tree', { zone: 'storage' });
      const repo = path.join(work, 'git');
      makeFiles(repo, bd, bp);
      const git = (...args) => {
        const r = spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: work, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@x', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@x' } });
        if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
      };
      git('init', '-q');
      git('add', '-A');
      git('commit', '-q', '-m', 'base');
      const ours = [];
      const theirs = [];
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const turn = `big${i}`;
        await u.call('shed_exec', { zone: 'storage', cmd: 'sed', args: ['-i', 's/second/SECOND/', ...globAll(bd)] }, turn);
        const a = await elapsedMs(() => u.call('shed_undo', { turn, apply: true }, `undo${i}`));
        spawnSync('sh', ['-c', 'sed -i s/second/SECOND/ d*/f*.txt'], { cwd: repo });
        const b = await elapsedMs(async () => git('checkout', '--', '.'));
        if (i >= WARMUP) {
          ours.push(a);
          theirs.push(b);
        }
    }
    const [mo, mg] = [median(ours), median(theirs)];
    rows.push(row(`b) undo of a ${bd * bp}-file turn vs git checkout`, ms(mo), 'git checkout -- .', ms(mg), mo / mg, 1));

  }
  // c) 100 turns of one-line edits to a 10 MB file.
  if (only.includes('c')) {
    const [mb, turns] = sized([10, 100], [1, 5]);
    log(`c) ${turns} one-line edits of a ${mb} MB file ...`);
    const c = shed('store', {});
    const lines = [];
    for (let i = 0, size = 0; size < mb * 1024 * 1024; i++) {
      lines.push(`row ${i} ${((i * 2654435761) % 1e9).toString(36)} some text for the line`);
      size += lines[i].length + 1;
    }
    fs.mkdirSync(c.storage, { recursive: true });
    fs.writeFileSync(path.join(c.storage, 'big.txt'), `${lines.join('\n')}\n`);
    await c.call('shed_tree', { zone: 'storage' });
    await c.call('shed_patch_text', { zone: 'storage', path: 'big.txt', content: 'start', position: 'end' });
    const storeBytes = () => dirBytes(path.join(c.base, 'users', 'bench', 'Storage', 'undo'));
    const startBytes = storeBytes();
    const edits = [];
    for (let i = 0; i < turns; i++) {
      const text = `edited line ${i} at ${Date.now()}`;
      // What the turn's undo must hold at least: the line it replaced (and where), compressed on its own.
      edits.push(zlib.gzipSync(`@@ -${1 + i * 97} +${1 + i * 97} @@\n-${lines[i * 97]}\n+${text}\n`).length);
      await c.call('shed_patch_text', { zone: 'storage', path: 'big.txt', content: text, position: 'replace', line: 1 + i * 97, end_line: 1 + i * 97 });
    }
    const grew = storeBytes() - startBytes;
    const editBytes = edits.reduce((a, b) => a + b, 0);
    // Ours counts everything the store grew by: deltas, commits, trees, turn records, the index.
    rows.push({ scenario: `c) capture store growth, ${turns} one-line edits of a ${mb} MB file`, ours: `${(grew / 1024).toFixed(1)} KiB`, anchor: 'each edit gzipped', anchorValue: `${(editBytes / 1024).toFixed(1)} KiB`, ratio: (grew / editBytes).toFixed(1), target: '<= 2x', result: grew <= 2 * editBytes ? 'PASS' : 'FAIL' });
  }
  // d) 60 rewrites of a 1 MB file under a 10 MB budget, against no byte limit.
  if (only.includes('d')) {
    const [turns, kib, budgetMb] = sized([60, 1024, 10], [6, 300, 1]);
    log(`d) ${turns} rewrites of a ${kib} KiB file, undo_max_store_mb=${budgetMb} vs 0 ...`);
    const texts = Array.from({ length: turns }, (_, i) => `${i}\n${crypto.randomBytes(Math.ceil(kib * 768)).toString('base64').slice(0, kib * 1024)}`);
    const sizes = {};
    for (const [name, limit] of [['bounded', budgetMb], ['unbounded', 0]]) {
      const d = shed(`retention-${name}`, { undo_max_store_mb: limit });
      for (const text of texts) await d.call('shed_patch_text', { zone: 'storage', path: 'big.txt', content: text, overwrite: true });
      sizes[name] = dirBytes(path.join(d.base, 'users', 'bench', 'Storage', 'undo'));
    }
    const current = zlib.deflateSync(texts.at(-1)).length;
    const bound = budgetMb * 1024 * 1024 + 2 * current;
    rows.push({ scenario: `d) store after ${turns} rewrites of ${kib} KiB, undo_max_store_mb=${budgetMb}`, ours: `${(sizes.bounded / 1048576).toFixed(1)} MiB`, anchor: 'no byte limit', anchorValue: `${(sizes.unbounded / 1048576).toFixed(1)} MiB`, ratio: (sizes.bounded / sizes.unbounded).toFixed(2), target: `<= ${(bound / 1048576).toFixed(1)} MiB`, result: sizes.bounded <= bound ? 'PASS' : 'FAIL' });
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
printTable(rows);

function globAll(dirs) {
  return Array.from({ length: dirs }, (_, d) => `d${String(d).padStart(2, '0')}/*.txt`);
}

function dirBytes(dir) {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) total += fs.statSync(path.join(e.parentPath, e.name)).size;
  return total;
}
