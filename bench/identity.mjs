// The identity switch's own cost: `node bench/identity.mjs` (dist/fileshed.mjs must be built; root, or
// CAP_SETUID+CAP_SETGID, for the switch to happen).
//
// In landlock and bwrap modes, `shed_exec cat small.txt` and `shed_run_python pass` with valve
// identity_separation=auto (the command's process takes the caller's uid and gid, bubblewrap runs
// unprivileged as it) against the same calls with identity_separation=off (the server's uid), and both
// against a bare spawn of the same program. Calls alternate (medians of RUNS after WARMUP). The zone
// is converted to the user's identity once, before the measurement (its first-use cost is apart).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { alternating, BUNDLE, ensureBuilt, sized, spawnOutput } from './lib.mjs';

const RUNS = Number(process.env.RUNS ?? sized(40, 3));
const WARMUP = sized(8, 1);

ensureBuilt();
const { Tools } = await import(pathToFileURL(BUNDLE).href);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-bench-id-'));
// The users' uids pass the folders above the storage base (docs/deployment.md).
fs.chmodSync(work, 0o711);
const python = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => fs.existsSync(p));
const cat = ['/usr/bin/cat', '/bin/cat'].find((p) => fs.existsSync(p));
const rows = [];
try {
  for (const mode of ['landlock', 'bwrap']) {
    const make = (identity) => {
      const t = new Tools();
      t.valves = { ...t.valves, storage_base_path: path.join(work, mode), sandbox: mode, allow_python: true, identity_separation: identity, identity_id_first: 2_500_000 };
      return t;
    };
    const on = make('auto');
    const off = make('off');
    // Two users: a zone made one user's is no longer the server's (identity off would not reach it).
    const call = async (t, fn, args) => {
      const user = t === on ? 'bench' : 'bench-off';
      const r = JSON.parse(await t[fn]({ ...args, __user__: { id: user, name: user }, __metadata__: { chat_id: 'c' } }));
      if (!r.success || (r.data?.returncode ?? 0) !== 0) throw new Error(`${fn}: ${JSON.stringify(r.error ?? r.data)}`);
      return r;
    };
    await call(off, 'shed_create_file', { zone: 'storage', path: 'small.txt', content: 'hello\n' });
    await call(on, 'shed_create_file', { zone: 'storage', path: 'small.txt', content: 'hello\n' });
    // The first use converts the zone: measured once, apart.
    const t0 = performance.now();
    await call(on, 'shed_exec', { zone: 'storage', cmd: 'cat', args: ['small.txt'] });
    const firstUse = performance.now() - t0;
    const zone = path.join(work, mode, 'users', 'bench', 'Storage', 'data');
    const catOn = await alternating(RUNS, WARMUP, () => call(on, 'shed_exec', { zone: 'storage', cmd: 'cat', args: ['small.txt'] }), () => call(off, 'shed_exec', { zone: 'storage', cmd: 'cat', args: ['small.txt'] }));
    const catBare = await alternating(RUNS, WARMUP, () => call(on, 'shed_exec', { zone: 'storage', cmd: 'cat', args: ['small.txt'] }), () => spawnOutput(cat, ['small.txt'], zone));
    rows.push({ mode, call: 'shed_exec cat', identity_ms: catOn.ours.toFixed(2), server_uid_ms: catOn.anchor.toFixed(2), switch_ms: (catOn.ours - catOn.anchor).toFixed(2), bare_ms: catBare.anchor.toFixed(2), ratio_to_bare: (catBare.ours / catBare.anchor).toFixed(2), first_use_ms: firstUse.toFixed(1) });
    if (python) {
      const pyOn = await alternating(RUNS, WARMUP, () => call(on, 'shed_run_python', { zone: 'storage', code: 'pass' }), () => call(off, 'shed_run_python', { zone: 'storage', code: 'pass' }));
      const pyBare = await alternating(RUNS, WARMUP, () => call(on, 'shed_run_python', { zone: 'storage', code: 'pass' }), () => spawnOutput(python, ['-c', 'pass'], zone));
      rows.push({ mode, call: 'shed_run_python pass', identity_ms: pyOn.ours.toFixed(2), server_uid_ms: pyOn.anchor.toFixed(2), switch_ms: (pyOn.ours - pyOn.anchor).toFixed(2), bare_ms: pyBare.anchor.toFixed(2), ratio_to_bare: (pyBare.ours / pyBare.anchor).toFixed(2), first_use_ms: '' });
    }
  }
  console.log(`Identity switch (medians of ${RUNS}, alternating; the server's uid ${process.geteuid?.()})`);
  const cols = Object.keys(rows[0] ?? {});
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells) => cells.map((c, i) => String(c).padEnd(width[i])).join('  ');
  console.log(line(cols));
  for (const r of rows) console.log(line(cols.map((c) => r[c])));
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
