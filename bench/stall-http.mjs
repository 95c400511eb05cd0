// No user can stall the others: attacks from one user against `fileshed serve` over HTTP while a
// second user's small shed_read is timed in a loop. Prints, per attack, how long the attack took
// and the reader's p50 / p99 / max (target: p99 < 100 ms during every attack).
// Usage: node bench/stall-http.mjs [path/to/cli.mjs]   (BENCH_SMOKE=1: small trees, 1 round;
// BENCH_ATTACKS=deep, =many or =group: only the deep-folder, the many-files or the group-space attacks)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTable, SMOKE, sized } from './lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.resolve(process.argv[2] ?? path.join(root, 'dist/cli.mjs'));
const KEY = 'stall-bench-key';
const DEPTH = sized(2000, 100);
const PATHS = sized(10, 2);
const MANY = sized(30000, 500);
const TARGET_MS = 100;

export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

/**
 * `fileshed serve` on a free loopback port; resolves once it answers. `held` collects, in ms of
 * CPU, each time the server reports its event loop held past FILESHED_LAG_REPORT_MS (src/hosts/lag-report.ts;
 * 200 unless the caller's environment sets it); its other stderr goes to ours.
 */
export function startServe(cli, base, valves = []) {
  const proc = spawn(process.execPath, [cli, 'serve', '--port', '0', '--base', base, '--auth', 'api-key', '--api-key', KEY, '--access-log', 'off', ...valves.flatMap((v) => ['--valve', v])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FILESHED_LAG_REPORT_MS: process.env.FILESHED_LAG_REPORT_MS ?? '200' },
  });
  const held = [];
  let errBuf = '';
  proc.stderr.on('data', (d) => {
    errBuf += d;
    let nl;
    while ((nl = errBuf.indexOf('\n')) >= 0) {
      const line = errBuf.slice(0, nl + 1);
      errBuf = errBuf.slice(nl + 1);
      const m = /^fileshed: event loop held (\d+) ms/.exec(line);
      if (m) held.push(Number(m[1]));
      process.stderr.write(line);
    }
  });
  const url = new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d;
      const m = /^Fileshed listening on (\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (c) => reject(new Error(`serve exited ${c}`)));
  });
  return { proc, url, held };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/**
 * POST /{fn} as `user`; resolves with the envelope. A kept-alive connection the server closed while
 * idle (its keep-alive timeout, 5 s) can be handed out before this process has read the close (a
 * test's synchronous setup blocks the loop for longer than that): the request then meets a reset
 * without reaching the server, and is sent once more on a new connection (Node's documented remedy).
 */
export function post(url, user, fn, body, retried = false) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(`${url}/${fn}`, {
      method: 'POST',
      agent,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data), Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': user, 'X-OpenWebUI-Chat-Id': 'c1' },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
        }
      });
    });
    req.on('error', (err) => {
      if (!retried && req.reusedSocket && err.code === 'ECONNRESET') resolve(post(url, user, fn, body, true));
      else reject(err);
    });
    req.end(data);
  });
}

/** Runs `attack` while "bob" reads a small file every `pauseMs`; the reader's latencies and the attack's result. */
export async function probe(url, attack, pauseMs = 5) {
  const reads = [];
  let done = false;
  const t0 = performance.now();
  const task = attack().finally(() => (done = true));
  const failures = [];
  while (!done) {
    const t = performance.now();
    try {
      const r = await post(url, 'bob', 'shed_read', { zone: 'storage', path: 'hello.txt' });
      if (!r.success) failures.push(JSON.stringify(r.error));
    } catch (err) {
      failures.push(String(err?.code ?? err)); // a reset connection is a failed read, counted
    }
    reads.push(performance.now() - t);
    await new Promise((res) => setTimeout(res, pauseMs));
  }
  const result = await task.catch((err) => ({ success: false, error: { code: String(err?.code ?? err) } }));
  return { result, ms: performance.now() - t0, reads, failures };
}

/** The attacks of the stall probe, each a function of the server URL. */
export const ATTACKS = {
  /** A catastrophic pattern: backtracking engines take 2^27 steps. */
  'patch_text ^(a+)+$ on 27 a + !': async (url) => {
    await post(url, 'alice', 'shed_create_file', { zone: 'storage', path: 'evil.txt', content: `${'a'.repeat(27)}!\n` });
    return () => post(url, 'alice', 'shed_patch_text', { zone: 'storage', path: 'evil.txt', pattern: '^(a+)+$', position: 'replace', content: 'x' });
  },
  [`mkdir -p ${PATHS} paths ${DEPTH} levels deep`]: async (url) => {
    const deep = (i) => Array.from({ length: DEPTH }, () => 'd').join('/').replace(/^d/, `p${i}`);
    return () => post(url, 'alice', 'shed_exec', { zone: 'storage', cmd: 'mkdir', args: ['-p', ...Array.from({ length: PATHS }, (_, i) => deep(i))], timeout: 120 });
  },
  [`same in Documents (committed)`]: async (url) => {
    const deep = (i) => Array.from({ length: DEPTH }, () => 'e').join('/').replace(/^e/, `q${i}`);
    return () => post(url, 'alice', 'shed_exec', { zone: 'documents', cmd: 'mkdir', args: ['-p', ...Array.from({ length: PATHS }, (_, i) => deep(i))], timeout: 120 });
  },
  [`ls of the ${PATHS} deep folders (existing paths as arguments)`]: async (url) => {
    const deep = (i) => Array.from({ length: DEPTH }, () => 'd').join('/').replace(/^d/, `p${i}`);
    return () => post(url, 'alice', 'shed_exec', { zone: 'storage', cmd: 'ls', args: ['-d', ...Array.from({ length: PATHS }, (_, i) => deep(i))] });
  },
  'shed_create_file at the bottom of a deep folder': async (url) => {
    const deep = `${Array.from({ length: DEPTH }, () => 'd').join('/').replace(/^d/, 'p0')}/x.txt`;
    return () => post(url, 'alice', 'shed_create_file', { zone: 'storage', path: deep, content: 'x' });
  },
  'shed_tree of the deep folders': async (url) => () => post(url, 'alice', 'shed_tree', { zone: 'storage', depth: 10000 }),
  'shed_stats after the deep folders': async (url) => () => post(url, 'alice', 'shed_stats', {}),
};

/** One line per file to come: `split -l 1` makes one file of each. */
const LINES = Array.from({ length: MANY }, (_, i) => `line ${i}`).join('\n') + '\n';
const splitInto = (zone, folder) => ({ zone, cmd: 'split', args: ['-l', '1', '-a', '5', 'lines.txt', `${folder}/x`], timeout: 300 });
const ok = (r) => {
  if (!r.success) throw new Error(`setup failed: ${JSON.stringify(r.error)}`);
  return r;
};

/**
 * Many files in ONE folder: the commit's tree walk and blob writes, the quota refresh,
 * unzip and history restore each go through 30,000 entries of one folder. "alice" must be a member
 * of the group "team" (see addTeam).
 */
export const MANY_ATTACKS = {
  [`split -l 1: ${MANY} files in one Documents folder (committed)`]: async (url) => {
    ok(await post(url, 'alice', 'shed_create_file', { zone: 'documents', path: 'lines.txt', content: LINES }));
    ok(await post(url, 'alice', 'shed_exec', { zone: 'documents', cmd: 'mkdir', args: ['big'] }));
    return () => post(url, 'alice', 'shed_exec', splitInto('documents', 'big'));
  },
  [`split -l 1: ${MANY} files in one folder of a group space`]: async (url) => {
    ok(await post(url, 'alice', 'shed_create_file', { zone: 'group', group: 'team', path: 'lines.txt', content: LINES }));
    ok(await post(url, 'alice', 'shed_exec', { zone: 'group', group: 'team', cmd: 'mkdir', args: ['big'] }));
    return () => post(url, 'alice', 'shed_exec', { ...splitInto('group', 'big'), group: 'team' });
  },
  [`shed_unzip of a ${MANY}-entry zip into Documents`]: async (url) => {
    ok(await post(url, 'alice', 'shed_create_file', { zone: 'storage', path: 'lines.txt', content: LINES }));
    ok(await post(url, 'alice', 'shed_exec', { zone: 'storage', cmd: 'mkdir', args: ['many'] }));
    ok(await post(url, 'alice', 'shed_exec', splitInto('storage', 'many')));
    ok(await post(url, 'alice', 'shed_exec', { zone: 'storage', cmd: 'zip', args: ['-qr', 'many.zip', 'many'], timeout: 300 }));
    return () => post(url, 'alice', 'shed_unzip', { zone: 'documents', src: 'many.zip', src_zone: 'storage', dest: 'unz' });
  },
  [`shed_delete of the ${MANY}-file Documents folder (committed)`]: async (url) => () => post(url, 'alice', 'shed_delete', { zone: 'documents', path: 'big' }),
  [`git restore of that folder from the commit before`]: async (url) => () => post(url, 'alice', 'shed_exec', { zone: 'documents', cmd: 'git', args: ['restore', '--source=HEAD~1', '--', 'big'], timeout: 300 }),
};

/**
 * Many files through a group space, where every file has an ownership record in the access
 * database: a copy of `n` files into the group, an unzip of `n` entries there by a command, the
 * deletion of the copied folder, then a script writing n/10 files and the commands after it. Before,
 * each record was a whole-database rewrite on the event loop (2,000 files: 11 s of stall).
 * `base`: the server's storage folder; the source files and the zip are then made there directly
 * (a test's fixture, quicker on a loaded machine) instead of by calls.
 */
export function groupAttacks(n, base) {
  const lines = Array.from({ length: n }, (_, i) => `line ${i}`).join('\n') + '\n';
  const g = { zone: 'group', group: 'team' };
  const script = Math.max(1, Math.round(n / 10));
  return {
    [`shed_copy_to_group of a ${n}-file folder`]: async (url) => {
      if (base !== undefined) {
        const storage = path.join(base, 'users', 'alice', 'Storage', 'data');
        fs.mkdirSync(path.join(storage, 'gmany'), { recursive: true });
        for (let i = 0; i < n; i++) fs.writeFileSync(path.join(storage, 'gmany', `x${String(i).padStart(5, '0')}`), `line ${i}\n`);
        const zipped = spawnSync('zip', ['-qr', 'gmany.zip', 'gmany'], { cwd: storage });
        if (zipped.status !== 0) throw new Error(`setup failed: zip: ${zipped.stderr}`);
        return () => post(url, 'alice', 'shed_copy_to_group', { src_zone: 'storage', src_path: 'gmany', group: 'team', dest_path: 'gmany' });
      }
      ok(await post(url, 'alice', 'shed_create_file', { zone: 'storage', path: 'glines.txt', content: lines }));
      ok(await post(url, 'alice', 'shed_exec', { zone: 'storage', cmd: 'mkdir', args: ['gmany'] }));
      ok(await post(url, 'alice', 'shed_exec', { zone: 'storage', cmd: 'split', args: ['-l', '1', '-a', '5', 'glines.txt', 'gmany/x'], timeout: 300 }));
      return () => post(url, 'alice', 'shed_copy_to_group', { src_zone: 'storage', src_path: 'gmany', group: 'team', dest_path: 'gmany' });
    },
    [`unzip of a ${n}-entry zip by a command in the group space`]: async (url) => {
      if (base === undefined) ok(await post(url, 'alice', 'shed_exec', { zone: 'storage', cmd: 'zip', args: ['-qr', 'gmany.zip', 'gmany'], timeout: 300 }));
      ok(await post(url, 'alice', 'shed_copy_to_group', { src_zone: 'storage', src_path: 'gmany.zip', group: 'team', dest_path: 'gmany.zip' }));
      return () => post(url, 'alice', 'shed_exec', { ...g, cmd: 'unzip', args: ['-q', 'gmany.zip', '-d', 'unzipped'], timeout: 300 });
    },
    [`shed_delete of the ${n}-file group folder (records dropped)`]: async (url) => () => post(url, 'alice', 'shed_delete', { ...g, path: 'gmany' }),
    [`a shell script writing ${script} files in the group space`]: async (url) => () =>
      post(url, 'alice', 'shed_run_shell', { ...g, script: `mkdir -p made && for i in $(seq 1 ${script}); do echo $i > made/f$i.txt; done`, timeout: 300 }),
    [`a command in the group space after them`]: async (url) => () => post(url, 'alice', 'shed_exec', { ...g, cmd: 'ls', args: ['made'] }),
    [`another command in the group space`]: async (url) => () => post(url, 'alice', 'shed_exec', { ...g, cmd: 'wc', args: ['-l', 'made/f1.txt'] }),
  };
}

/** Valves the probes need: archives of MANY entries. */
export const MANY_VALVES = [`zip_max_entries=${MANY * 2}`];

/** The group "team" with alice (the attacker) in it, through the plugin beside the CLI. */
export async function addTeam(cli, base) {
  const plugin = await import(path.join(path.dirname(cli), 'fileshed.mjs'));
  await plugin.admin.groups.add(base, 'team', 'Team');
  await plugin.admin.groups.addMember(base, 'team', 'alice');
}

async function main() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-stall-http-'));
  await addTeam(CLI, base);
  const { proc, url: urlP } = startServe(CLI, base, [...MANY_VALVES, 'allow_shell=true']);
  const rows = [];
  try {
    const url = await urlP;
    await post(url, 'bob', 'shed_create_file', { zone: 'storage', path: 'hello.txt', content: 'hello\n' });
    // Warm-up: the reader's path, the worker pool, the sandbox probe.
    for (let i = 0; i < 20; i++) await post(url, 'bob', 'shed_read', { zone: 'storage', path: 'hello.txt' });
    await post(url, 'alice', 'shed_exec', { zone: 'storage', cmd: 'ls' });
    const idle = await probe(url, () => new Promise((r) => setTimeout(r, sized(1000, 200))));
    rows.push(row('(no attack)', idle));
    const only = process.env.BENCH_ATTACKS;
    const chosen = only === 'group' ? {} : { ...(only === 'many' ? {} : ATTACKS), ...(only === 'deep' ? {} : MANY_ATTACKS) };
    for (const [label, arrange] of Object.entries({ ...chosen, ...(only === 'deep' || only === 'many' ? {} : groupAttacks(sized(20000, 500))) })) {
      const attack = await arrange(url);
      const p = await probe(url, attack);
      rows.push(row(label, p));
    }
    const stats = await post(url, 'alice', 'shed_stats', {});
    console.log(`module: ${CLI}`);
    printTable(rows);
    console.log(`attacker's usage after the deep folders: ${stats.data?.total?.size_human ?? JSON.stringify(stats.error)}`);
  } finally {
    proc.kill('SIGTERM');
    agent.destroy();
    await new Promise((r) => proc.once('exit', r));
    spawnSync('rm', ['-rf', base]); // fs.rmSync recurses per level: 2,000 levels overflow its stack
  }
  if (!SMOKE && rows.some((r) => r.result.startsWith('missed'))) process.exitCode = 0; // a bench reports, it does not fail
}

function row(label, p) {
  const p99 = percentile(p.reads, 99);
  const outcome = p.result === undefined ? '' : p.result.success ? 'ok' : p.result.error.code;
  return {
    scenario: `${label}${outcome ? ` [${outcome}]` : ''}`,
    ours: `p99 ${p99.toFixed(1)} ms`,
    anchor: `${p.reads.length} reads${p.failures.length ? ` (${p.failures.length} FAILED)` : ''}, max ${Math.max(...p.reads).toFixed(1)} ms`,
    anchorValue: `p50 ${percentile(p.reads, 50).toFixed(1)} ms`,
    ratio: `attack ${(p.ms / 1000).toFixed(2)} s`,
    target: `< ${TARGET_MS} ms`,
    result: p99 < TARGET_MS && p.failures.length === 0 ? 'met' : 'missed',
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
