/**
 * Several instances on a real distributed filesystem, behind a real load balancer.
 *
 * GlusterFS on loopback (replica 2, FUSE), three `fileshed serve` instances each with its own FUSE
 * client in its own mount namespace (and its own host name: lock holders cannot be judged by pid),
 * coherent client settings, HAProxy round-robin in front (the worst case: every call of a user may
 * land elsewhere), four users writing through two conversations each (Documents and group appends,
 * new files, Storage appends, SQLite rows), one instance killed with SIGKILL in the middle; then
 * every acknowledged write exactly once on disk and in exactly one commit, nothing doubled,
 * `git fsck --strict` and `git status` clean, `PRAGMA integrity_check` ok, the quota exact across
 * instances, and the time until a crashed instance's lock is taken over (killed during a slow call,
 * and killed inside a Documents commit: call lock and repository lock). Once with lock files, once
 * through Redis coordination; a smaller run through nginx; a stale-handle storm on a file read
 * through another client; one undo turn whose calls landed on three instances (each its own FUSE
 * client), undone as one through the balancer; the health thread while a brick is stopped.
 *
 * Costs about two minutes: it runs when FILESHED_SCALE=1 (CI's .ci/run sets it, once), as root
 * with FUSE; otherwise it is skipped with the reason.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFunction, cannotRun, CLI, COHERENT_MOUNT, glusterUp, startBalancer, startInstance, startRedis, tmpRoot, type Gluster } from './cluster.mjs';
import { hashTree } from '../undo/helpers.js';
import { measureStall, row, runScenario } from './scenario.mjs';

const reason = process.env.FILESHED_SCALE !== '1' ? 'set FILESHED_SCALE=1 to run it (CI does; it needs root, FUSE, GlusterFS, Redis, HAProxy and nginx)' : cannotRun();
if (reason !== undefined) console.log(`test/scale skipped: ${reason}`);

describe.skipIf(reason !== undefined)('N instances on GlusterFS behind a balancer', () => {
  let root: string;
  let gluster: Gluster;
  let logDir: string;
  const log = (line: string) => console.log(line);

  beforeAll(() => {
    root = tmpRoot();
    gluster = glusterUp(root, log);
    logDir = path.join(root, 'gluster', 'log');
  }, 120_000);
  afterAll(() => {
    gluster?.down();
    fs.rmSync(root, { recursive: true, force: true });
  }, 120_000);

  const scenario = (name: string, extra: Partial<Parameters<typeof runScenario>[0]> = {}) =>
    runScenario({ name, base: path.join(gluster.mnt, name), client: 'own', mnt: gluster.mnt, mountOptions: COHERENT_MOUNT, logDir, balancer: 'haproxy', policy: 'roundrobin', ops: 6, log, ...extra });

  function expectClean(r: Awaited<ReturnType<typeof runScenario>>): void {
    console.log(row(r));
    expect(r.verify.lost).toEqual([]);
    expect(r.verify.doubled).toEqual([]);
    expect(r.verify.missingCommitWhy).toEqual([]);
    expect(r.verify.doubleCommit).toEqual([]);
    expect(r.verify.fsck).toEqual([]);
    expect(r.verify.dirty).toEqual([]);
    expect(r.verify.integrity).toBe('ok');
    expect(r.verify.walDatabases).toEqual([]);
    expect(r.verify.acked).toBeGreaterThan(r.verify.attempts / 2);
  }

  it('lock files: a killed instance loses nothing; quota exact; its lock taken over after the heartbeat stops', async () => {
    const r = await scenario('files');
    expectClean(r);
    expect(r.quota).toEqual({ accepted: 10, refused: 10, others: [], diskBytes: 1_000_000, expected: 10 });
    expect(r.takeoverOk).toBe(true);
    // Lock files across hosts: the heartbeat's silence, then the call itself (recovery of the space included).
    // More than 3 s: the killed call did hold the lock (another host cannot tell a dead holder sooner).
    expect(r.takeoverMs).toBeGreaterThan(3_000);
    expect(r.takeoverMs).toBeLessThan(10_000);
    // Killed inside a Documents commit (call lock and repository lock held, the commit half written):
    // the next call succeeds within 10 s as well.
    expect(r.commitTakeoverOk, r.commitTakeoverError).toBe(true);
    expect(r.commitTakeoverMs).toBeGreaterThan(3_000);
    expect(r.commitTakeoverMs).toBeLessThan(10_000);
  }, 300_000);

  it('Redis coordination: the same, and a crashed instance blocks its user for less than 10 s', async () => {
    const redis = await startRedis(path.join(root, 'redis'));
    try {
      const r = await scenario('redis', { redisUrl: redis.url });
      expectClean(r);
      expect(r.quota).toEqual({ accepted: 10, refused: 10, others: [], diskBytes: 1_000_000, expected: 10 });
      expect(r.takeoverOk).toBe(true);
      expect(r.takeoverMs).toBeGreaterThan(3_000);
      expect(r.takeoverMs).toBeLessThan(10_000);
      expect(r.commitTakeoverOk, r.commitTakeoverError).toBe(true);
      expect(r.commitTakeoverMs).toBeGreaterThan(3_000);
      expect(r.commitTakeoverMs).toBeLessThan(10_000);
    } finally {
      await redis.stop();
    }
  }, 300_000);

  it('nginx (round robin, the repository configuration): a smaller run loses nothing', async () => {
    const r = await scenario('nginx', { balancer: 'nginx', ops: 3, full: false });
    expectClean(r);
  }, 300_000);

  it('a file replaced through one client and read through another: stale handles never abort nor fail the safe reads', async () => {
    const dir = path.join(gluster.mnt, 'estale');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 't.txt'), 'v0');
    const script = path.join(root, 'estale-reader.mjs');
    fs.writeFileSync(
      script,
      `import fs from 'node:fs';
import { serving } from ${JSON.stringify(CLI.replace(/cli\.mjs$/, 'fileshed.mjs'))};
const file = process.argv[2];
const out = { reads: 0, raw: {}, safe: 0, torn: 0 };
const until = Date.now() + 8000;
while (Date.now() < until) {
  try { fs.readFileSync(file); } catch (e) { out.raw[e.code] = (out.raw[e.code] ?? 0) + 1; }
  try { const t = serving.readText(file); out.reads++; if (!/^v\\d+$/.test(t)) out.torn++; } catch (e) { out.safe++; out.last = String(e.code); }
}
console.log(JSON.stringify(out));
`,
    );
    const opts = `log-file=${logDir}/estale-reader.log,${COHERENT_MOUNT}`;
    const reader = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `{ umount -l '${gluster.mnt}' 2>/dev/null || true; } && mount -t glusterfs -o '${opts}' 127.0.0.1:/vol '${gluster.mnt}' && exec "$@"`, 'sh', process.execPath, script, path.join(dir, 't.txt')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    reader.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    reader.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = new Promise<number | null>((r) => reader.on('exit', (c) => r(c)));
    // The writer: replace the file by rename, through this process's client, as fast as it can.
    let i = 0;
    const writing = (async () => {
      await new Promise((r) => setTimeout(r, 1500)); // the reader mounts first
      const until = Date.now() + 6000;
      while (Date.now() < until) {
        fs.writeFileSync(path.join(dir, 't.tmp'), `v${++i}`);
        fs.renameSync(path.join(dir, 't.tmp'), path.join(dir, 't.txt'));
        if (i % 50 === 0) await new Promise((r) => setImmediate(r));
      }
    })();
    await writing;
    expect(await code, stderr).toBe(0);
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as { reads: number; raw: Record<string, number>; safe: number; torn: number };
    console.log(`stale handles: ${i} renames through one client; through another, ${result.reads} safe reads (${result.safe} failed, ${result.torn} torn), plain readFileSync errors ${JSON.stringify(result.raw)}`);
    expect(result.safe).toBe(0);
    expect(result.torn).toBe(0);
    expect(result.reads).toBeGreaterThan(100);
  }, 120_000);

  it('undo by turn: one turn whose calls land on three instances is undone as one, through the balancer', async () => {
    const base = path.join(gluster.mnt, 'undo');
    const dir = path.join(root, 'undo-lb');
    // Commands run as the user's own uid (identity separation: serve runs as root here): the folders
    // above the storage base must be passable by it, as a real deployment's are.
    fs.chmodSync(root, 0o711);
    const start = (i: number) => startInstance({ name: `undo-${i}`, base, client: 'own', mnt: gluster.mnt, mountOptions: COHERENT_MOUNT, logDir });
    const instances = await Promise.all([0, 1, 2].map(start));
    const lb = await startBalancer({ kind: 'haproxy', instances, policy: 'roundrobin', dir });
    try {
      type Answer = { success: boolean; turn?: string; error?: unknown; data?: Record<string, unknown> };
      const on = async (url: string, fn: string, body: Record<string, unknown>, turn: string) => {
        const r = await callFunction(url, fn, body, 'ann', { headers: { 'X-OpenWebUI-Chat-Id': 'c1', 'X-OpenWebUI-Message-Id': turn } });
        if ('error' in r) throw new Error(`${fn}: ${r.error}`);
        const answer = r.envelope as Answer;
        if (!answer.success) console.log(`${fn} answered: ${JSON.stringify(answer)}`);
        return answer;
      };
      const [a, b, c] = instances.map((i) => i.url) as [string, string, string];
      expect((await on(a, 'shed_create_file', { zone: 'storage', path: 'conf.ini', content: 'mode=old\n' }, 'p')).success).toBe(true);
      expect((await on(b, 'shed_create_file', { zone: 'documents', path: 'plan.md', content: '# Plan\n' }, 'p')).success).toBe(true);
      const home = path.join(base, 'users', 'ann');
      const trees = () => ({ storage: hashTree(path.join(home, 'Storage', 'data')), documents: hashTree(path.join(home, 'Documents', 'data')) });
      const before = trees();
      // One turn, m: a file on the first instance, a command on the second, a Documents edit on the third.
      expect(await on(a, 'shed_create_file', { zone: 'storage', path: 'from-a.txt', content: 'a' }, 'm')).toMatchObject({ success: true, turn: 'm' });
      expect(await on(b, 'shed_exec', { zone: 'storage', cmd: 'sed', args: ['-i', 's/old/new/', 'conf.ini'] }, 'm')).toMatchObject({ success: true, turn: 'm' });
      expect(await on(c, 'shed_patch_text', { zone: 'documents', path: 'plan.md', content: 'step 1', position: 'end' }, 'm')).toMatchObject({ success: true, turn: 'm' });
      expect(fs.readFileSync(path.join(home, 'Storage', 'data', 'conf.ini'), 'utf8')).toBe('mode=new\n');

      const list = await on(lb.url, 'shed_undo', {}, 'l');
      const turns = (list.data!.turns as { turn: string }[]).map((t) => t.turn);
      expect(turns.filter((t) => t === 'm')).toHaveLength(1);
      const undo = await on(lb.url, 'shed_undo', { turn: 'm', apply: true }, 'u');
      expect(undo.success, JSON.stringify(undo)).toBe(true);
      expect(trees()).toEqual(before);
      console.log(`undo on GlusterFS: turn m of 3 calls on 3 instances undone through the balancer; list: ${turns.join(', ')}`);
    } finally {
      await lb.stop();
      await Promise.all(instances.map((i) => i.stop()));
    }
  }, 180_000);

  it('the storage stalls (a brick stopped): /healthz keeps answering from the health thread, /readyz says 503', async () => {
    const r = await measureStall({ gluster, base: path.join(gluster.mnt, 'stall'), logDir, mountOptions: COHERENT_MOUNT });
    console.log(`storage stalled ${r.samples} × /healthz: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms, ${r.failed} failed; /readyz 503 ${r.notReady} times; the stuck call answered ${r.callOk ? 'success' : 'an error'} after ${r.callMs} ms`);
    expect(r.failed).toBe(0);
    expect(r.p99).toBeLessThan(50);
    expect(r.notReady).toBeGreaterThan(0);
    expect(r.callOk).toBe(true);
  }, 120_000);
});
