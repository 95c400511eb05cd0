// One topology of the scale test: three instances on one storage base behind a balancer, the
// mixed workload with a kill -9 in the middle, a lock takeover after a kill -9, a quota race
// across instances, then the checks (workload.mjs verify).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { callFunction, CLI, startBalancer, startInstance } from './cluster.mjs';
import { prepare, quotaRace, runWorkload, verify } from './workload.mjs';

export const USERS = ['u0', 'u1', 'u2', 'u3'];

/**
 * opts: name, base, client ('shared' | 'own' | 'local'), mnt, mountOptions, logDir, redisUrl,
 * balancer ('haproxy' | 'nginx'), policy ('roundrobin' | 'sticky'), ops (per conversation),
 * cli (build to run), health (instances have --health-port), log.
 */
export async function runScenario(opts) {
  const { base } = opts;
  const began = performance.now();
  const log = (text) => opts.log?.(`[${((performance.now() - began) / 1000).toFixed(1)} s] ${text}`);
  const cli = opts.cli ?? CLI;
  fs.rmSync(base, { recursive: true, force: true });
  fs.mkdirSync(base, { recursive: true });
  execFileSync(process.execPath, [cli, 'groups', 'add', 'team', '--base', base], { stdio: 'ignore' });
  for (const u of USERS) execFileSync(process.execPath, [cli, 'groups', 'members', 'team', 'add', u, '--base', base], { stdio: 'ignore' });
  const flags = ['--valve', 'quota_per_user_mb=1', '--valve', 'sqlite_timeout_seconds=30', ...(opts.redisUrl ? ['--coordination', opts.redisUrl] : [])];
  const start = (i) => startInstance({ name: `${opts.name}-${i + 1}`, base, client: opts.client, mnt: opts.mnt, mountOptions: opts.mountOptions, logDir: opts.logDir, flags, cli, health: opts.health !== false });
  const instances = await Promise.all([0, 1, 2].map(start));
  log(`${opts.name}: 3 instances up`);
  const dir = path.join(opts.logDir, `lb-${opts.name}`);
  let lb = await startBalancer({ kind: opts.balancer ?? 'haproxy', instances, policy: opts.policy ?? 'roundrobin', dir, check: opts.health !== false });
  const out = { name: opts.name };
  try {
    await prepare(lb.url, USERS);
    // The workload, with instance 2 killed (kill -9) once a third of the writes are acknowledged.
    const total = USERS.length * 2 * (opts.ops ?? 8);
    let killed;
    const attempts = await runWorkload({
      url: lb.url,
      users: USERS,
      ops: opts.ops ?? 8,
      tagPrefix: opts.name,
      onProgress: (n) => {
        if (opts.full !== false && killed === undefined && n >= total / 3) killed = instances[1].kill9();
      },
    });
    await killed;
    log(`${opts.name}: workload ${attempts.filter((a) => a.ok).length}/${attempts.length} acknowledged`);
    if (opts.full === false) {
      await lb.stop();
      lb = undefined;
      await Promise.all(instances.map((i) => i.stop()));
      out.verify = verify(base, USERS, attempts);
      out.ok = clean(out.verify);
      return out;
    }
    // The killed instance comes back (as an orchestrator restarts it): recovery at start.
    instances[1] = await start(1);
    log(`${opts.name}: killed instance restarted`);

    // Lock takeover: a call holding the user's call lock (a runaway write: reads take no call lock)
    // dies with its instance; the user's next call, on another instance, must take the lock over.
    await callFunction(instances[0].url, 'shed_sqlite', { zone: 'storage', path: 'slow.db', query: 'CREATE TABLE IF NOT EXISTS x(a)' }, 'tk');
    const holder = callFunction(instances[0].url, 'shed_sqlite', { zone: 'storage', path: 'slow.db', query: 'INSERT INTO x(a) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c' }, 'tk');
    await new Promise((r) => setTimeout(r, 1500));
    await instances[0].kill9();
    const held = await holder;
    log(`${opts.name}: lock holder killed (${held.error ?? held.envelope?.error?.code ?? 'answered'})`);
    const t0 = performance.now();
    const after = await callFunction(instances[2].url, 'shed_patch_text', { zone: 'documents', path: 'after.md', content: 'after the kill', position: 'end', message: 'after the kill' }, 'tk');
    out.takeoverMs = Math.round(performance.now() - t0);
    out.takeoverOk = after.envelope?.success === true;
    log(`${opts.name}: takeover ${out.takeoverMs} ms`);
    instances[0] = await start(0);

    // A holder killed inside a Documents commit: its call lock and the repository lock die with it,
    // the commit half written. The user's next call, on another instance, takes both over, commits
    // what the killed call wrote, then its own change.
    Object.assign(out, await killInsideCommit({ base, kill: instances[0], next: instances[2], redisUrl: opts.redisUrl, log }));
    instances[0] = await start(0);

    // Quota across instances: parallel writes spread over all three, exactly 10 fit in 1 MiB.
    out.quota = await quotaRace(instances.map((i) => i.url), base, 'q');
    log(`${opts.name}: quota race done`);
    await lb.stop();
    lb = undefined;
    await Promise.all(instances.map((i) => i.stop()));
    out.verify = verify(base, USERS, attempts, ['tk', 'tc']);
    out.ok =
      clean(out.verify) &&
      out.quota.accepted === out.quota.expected &&
      out.quota.diskBytes === out.quota.expected * 100_000 &&
      out.takeoverOk &&
      out.commitTakeoverOk;
    return out;
  } finally {
    await lb?.stop();
    await Promise.all(instances.map((i) => i.stop().catch(() => undefined)));
  }
}

/**
 * Writes to one user's Documents through `kill` until its repository lock is seen held (the lock
 * file, or the Redis lease with coordination), kills that instance at once (kill -9), then times
 * the user's next Documents write on `next`. Where the repository (and its lock) lives is found,
 * not assumed: a `fileshed.lock` in a folder of the user's Documents, or a lease naming one.
 */
export async function killInsideCommit({ base, kill, next, redisUrl, log = () => {}, user = 'tc' }) {
  const docs = path.join(base, 'users', user, 'Documents');
  const redisPort = redisUrl ? new URL(redisUrl).port : undefined;
  const lockSeen = () => {
    if (redisPort) return execFileSync('redis-cli', ['-p', redisPort, '--scan', '--pattern', `*:lock:users/${user}/Documents/*fileshed.lock`], { encoding: 'utf8' }).trim() !== '';
    const dirs = fs.readdirSync(docs, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => path.join(docs, d.name));
    return dirs.some((d) => fs.existsSync(path.join(d, 'fileshed.lock')));
  };
  for (let i = 0; i < 5; i++) await callFunction(kill.url, 'shed_create_file', { zone: 'documents', path: `notes/n${i}.md`, content: `note ${i}\n`.repeat(50) }, user);
  let writes = 0;
  let stop = false;
  const writer = (async () => {
    while (!stop && writes < 500) {
      await callFunction(kill.url, 'shed_patch_text', { zone: 'documents', path: 'log.md', content: `line ${writes}`, position: 'end', message: `line ${writes}` }, user);
      writes++;
    }
  })();
  let seen = false;
  while (!seen && !stop && writes < 500) {
    seen = lockSeen();
    if (!seen) await new Promise((r) => setTimeout(r, 2));
  }
  await kill.kill9();
  stop = true;
  await writer;
  log(`commit kill: ${seen ? 'repository lock held' : 'NO repository lock seen'} after ${writes} writes; instance killed`);
  const t0 = performance.now();
  const after = await callFunction(next.url, 'shed_patch_text', { zone: 'documents', path: 'after-commit-kill.md', content: 'after', position: 'end', message: 'after the commit kill' }, user, { timeoutMs: 120_000 });
  const commitTakeoverMs = Math.round(performance.now() - t0);
  const commitTakeoverOk = seen && after.envelope?.success === true;
  log(`commit kill: next call ${commitTakeoverMs} ms, ${after.envelope?.success ? 'success' : JSON.stringify(after.envelope?.error ?? after.error)}`);
  return { commitTakeoverMs, commitTakeoverOk, commitTakeoverError: after.envelope?.error?.code ?? after.error };
}

function clean(v) {
  return v.lost.length === 0 && v.doubled.length === 0 && v.missingCommit.length === 0 && v.doubleCommit.length === 0 && v.fsck.length === 0 && v.dirty.length === 0 && v.integrity === 'ok';
}

/** One line of the correctness table. */
export function row(r) {
  const v = r.verify;
  const tail = r.quota ? `, quota ${r.quota.accepted}/${r.quota.expected} (${r.quota.diskBytes} B), takeover ${r.takeoverMs} ms${r.takeoverOk ? '' : ' (FAILED)'}, inside a commit ${r.commitTakeoverMs} ms${r.commitTakeoverOk ? '' : ` (FAILED: ${r.commitTakeoverError})`}` : '';
  return `${r.name}: acknowledged ${v.acked}/${v.attempts}, lost ${v.lost.length}, doubled ${v.doubled.length}, commits ${v.commitsOk}/${v.versioned} (+${v.recoveryCommits} recovery), fsck ${v.fsck.length === 0 ? 'clean' : 'FAILED'}, status ${v.dirty.length === 0 ? 'clean' : 'DIRTY'}, integrity ${v.integrity}${tail}`;
}

/**
 * The storage stalls (a brick process stopped with SIGSTOP) while a call waits for it inside the
 * instance's main thread: /healthz on the health thread is polled every 50 ms meanwhile.
 */
export async function measureStall({ gluster, base, logDir, mountOptions, seconds = 6 }) {
  fs.mkdirSync(base, { recursive: true });
  const inst = await startInstance({ name: 'stall', base, client: 'own', mnt: gluster.mnt, mountOptions, logDir });
  const get = async (url) => {
    const t0 = performance.now();
    const status = await fetch(url, { signal: AbortSignal.timeout(5000) }).then((r) => r.status, () => 0);
    return { status, ms: performance.now() - t0 };
  };
  try {
    await inst.call('shed_patch_text', { zone: 'storage', path: 'warm.txt', content: 'warm', position: 'end' }, 'stall');
    for (let i = 0; i < 10; i++) await get(`${inst.healthUrl}/healthz`);
    const brick = gluster.brickPid();
    process.kill(brick, 'SIGSTOP');
    let stuck;
    const health = [];
    const ready = [];
    try {
      stuck = inst.call('shed_patch_text', { zone: 'storage', path: 'stalled.txt', content: 'written while the storage stalls', position: 'end' }, 'stall', { timeoutMs: 60_000 });
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) {
        const [h, r] = await Promise.all([get(`${inst.healthUrl}/healthz`), get(`${inst.healthUrl}/readyz`)]);
        health.push(h);
        ready.push(r.status);
        await sleep(50);
      }
    } finally {
      process.kill(brick, 'SIGCONT');
    }
    const call = await stuck;
    const ms = health.map((h) => h.ms).sort((a, b) => a - b);
    const pct = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))];
    return {
      samples: ms.length,
      failed: health.filter((h) => h.status !== 200).length,
      p50: pct(0.5),
      p99: pct(0.99),
      max: ms[ms.length - 1],
      notReady: ready.filter((s) => s === 503).length,
      callOk: call.envelope?.success === true,
      callMs: Math.round(call.ms),
    };
  } finally {
    await inst.stop();
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
