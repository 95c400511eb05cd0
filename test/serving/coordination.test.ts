/**
 * Coordination across hosts (`--coordination redis://...`) against a real redis-server, and the
 * lock-file leases used without it: mutual exclusion, fencing tokens that only grow, a dead
 * holder's lease ending within its TTL (and the next holder told so, to recover), a holder that
 * lost its lease refusing to publish; two `fileshed serve` instances through Redis, one killed
 * with SIGKILL in the middle of a call holding its user's lock; Redis unreachable answered with a
 * clean envelope and /readyz 503, never a hang.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCoordinator } from '../../src/hosts/coordination/redis.js';
import { parseReply } from '../../src/core/formats/resp.js';
import { parseRedisUrl, redact, RespClient } from '../../src/hosts/coordination/resp.js';
import { assertFence, STALE_MS, useCoordination, withLease } from '../../src/core/base/locks/lease.js';
import { serve, tempBase, type Served } from '../hosts/helpers.js';

const haveRedis = spawnSync('sh', ['-c', 'command -v redis-server']).status === 0;
if (!haveRedis) console.log('coordination tests skipped: redis-server is not installed (apt-get install redis-server)');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    if (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG') return proc;
    await new Promise((r) => setTimeout(r, 30));
  }
  throw new Error('redis-server did not start');
}

async function stopProc(p: ChildProcess | undefined): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const done = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  await done;
}

describe('the RESP client', () => {
  it('parses every RESP2 reply, and waits for incomplete ones', () => {
    const b = (s: string) => Buffer.from(s);
    expect(parseReply(b('+OK\r\n'), 0)).toEqual(['OK', 5]);
    expect(parseReply(b(':42\r\n'), 0)).toEqual([42, 5]);
    expect(parseReply(b('$-1\r\n'), 0)).toEqual([null, 5]);
    expect(parseReply(b('$5\r\nhé\r\n\r\n'), 0)).toEqual(['hé\r\n', 11]);
    expect(parseReply(b('*2\r\n:1\r\n$1\r\nx\r\n'), 0)).toEqual([[1, 'x'], 15]);
    expect(parseReply(b('*2\r\n:1\r\n$1\r\n'), 0)).toBeUndefined();
    expect(parseReply(b('$5\r\nab'), 0)).toBeUndefined();
    expect(String((parseReply(b('-ERR wrong\r\n'), 0)![0] as Error).message)).toBe('ERR wrong');
    expect(() => parseReply(b('?x\r\n'), 0)).toThrow(/not a Redis reply/);
  });

  it('reads URLs with credentials and databases, and never shows the password', () => {
    expect(parseRedisUrl('redis://u:p%40ss@h:7000/2')).toEqual({ host: 'h', port: 7000, tls: false, user: 'u', password: 'p@ss', db: 2 });
    expect(parseRedisUrl('rediss://:secret@h')).toEqual({ host: 'h', port: 6379, tls: true, password: 'secret', db: 0 });
    expect(() => parseRedisUrl('http://h')).toThrow(/redis:\/\//);
    expect(redact('redis://u:secret@h:1/0')).not.toContain('secret');
  });

  it('an unreachable server fails the command within its deadline (no hang, no queue)', async () => {
    const port = await freePort();
    const c = new RespClient(`redis://127.0.0.1:${port}`, { timeoutMs: 500 });
    const t0 = Date.now();
    await expect(c.call(['PING'])).rejects.toThrow();
    expect(Date.now() - t0).toBeLessThan(2000);
    c.close();
  });
});

describe.skipIf(!haveRedis)('Redis leases', () => {
  let redis: ChildProcess;
  let url: string;
  const coordinators: RedisCoordinator[] = [];
  const coordinator = (ttlMs?: number) => {
    const c = new RedisCoordinator(url, { prefix: `t${Date.now()}`, ...(ttlMs ? { ttlMs } : {}) });
    coordinators.push(c);
    return c;
  };
  beforeAll(async () => {
    const port = await freePort();
    redis = await startRedis(port);
    url = `redis://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    for (const c of coordinators) c.close();
    await stopProc(redis);
  });

  it('one holder at a time; fencing tokens grow; a clean release is not a takeover', async () => {
    const prefix = `p${Date.now()}`;
    const a = new RedisCoordinator(url, { prefix });
    const b = new RedisCoordinator(url, { prefix });
    coordinators.push(a, b);
    const first = (await a.tryAcquire('users/alice/lock'))!;
    expect(first).toBeDefined();
    expect(first.held()).toBe(true);
    expect(await b.tryAcquire('users/alice/lock')).toBeUndefined();
    expect(await b.tryAcquire('users/bob/lock')).toBeDefined();
    await first.release();
    const second = (await b.tryAcquire('users/alice/lock'))!;
    expect(second.fence).toBe(first.fence + 1);
    expect(second.tookOver).toBe(false);
    expect(await first.check()).toBe(false);
    expect(await second.check()).toBe(true);
    expect(await a.fenceOf('users/alice/lock')).toBe(second.fence);
    await second.release();
  });

  it('an event-loop stall longer than the deadline does not fail a command whose reply arrived in time; a server that does not answer still fails it', async () => {
    // The loop blocked (a synchronous flush on slow storage) while Redis answered: the expired
    // timer runs before the socket is read, and must not call the answered command lost.
    const stall = (ms: number) => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        // busy: nothing else runs, the reply waits in the socket
      }
    };
    const ticks = async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve(); // the command's own steps run, up to its write
    };
    const fresh = new RespClient(url, { timeoutMs: 200 });
    const connecting = fresh.call(['PING']);
    stall(700); // the handshake completes during the stall
    expect(await connecting).toBe('PONG');
    const answered = fresh.call(['ECHO', 'in time']);
    await ticks();
    stall(700);
    expect(await answered).toBe('in time');
    // A server that really does not answer (stopped): the command fails within about its deadline.
    redis.kill('SIGSTOP');
    try {
      const t0 = Date.now();
      await expect(fresh.call(['PING'])).rejects.toThrow(/did not answer within 200 ms/);
      expect(Date.now() - t0).toBeLessThan(1500);
    } finally {
      redis.kill('SIGCONT');
    }
    expect(await fresh.call(['PING'])).toBe('PONG'); // a new connection after the poisoned one
    fresh.close();
  });

  it("a dead holder's lease ends within its TTL; the next holder is told it took over; the dead one stopped counting itself a holder first", async () => {
    const prefix = `d${Date.now()}`;
    const dying = new RedisCoordinator(url, { prefix, ttlMs: 800 });
    const next = new RedisCoordinator(url, { prefix, ttlMs: 800 });
    coordinators.push(next);
    const lease = (await dying.tryAcquire('space'))!;
    dying.close(); // the process dies: no renewal, no release
    const t0 = Date.now();
    let taken;
    while (!(taken = await next.tryAcquire('space'))) await new Promise((r) => setTimeout(r, 20));
    const waited = Date.now() - t0;
    expect(waited).toBeLessThan(800 + 300);
    expect(taken.tookOver).toBe(true);
    expect(taken.fence).toBe(lease.fence + 1);
    expect(lease.held()).toBe(false); // its local validity ended before Redis expired it
    await taken.release();
  });

  it('withLease through a coordinator: a lost lease refuses to publish (LOCK_ERROR), never writes on', async () => {
    const c = coordinator(600);
    useCoordination(c, os.tmpdir());
    try {
      await expect(
        withLease(path.join(os.tmpdir(), 'x.lock'), { waitMs: 1000, busy: () => new Error('busy') }, async () => {
          c.close(); // Redis unreachable from now on: renewals fail
          await new Promise((r) => setTimeout(r, 700));
          assertFence();
        }),
      ).rejects.toMatchObject({ code: 'LOCK_ERROR' });
    } finally {
      useCoordination(undefined);
    }
  });
});

describe('lock-file leases (one host, or hosts without a coordinator)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lease-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const busy = () => Object.assign(new Error('busy'), { code: 'FILE_LOCKED' });

  it("another host's lock whose heartbeat stopped is taken over (and said so); a fresh one is respected", async () => {
    const file = path.join(dir, 'a.lock');
    fs.writeFileSync(file, JSON.stringify({ pid: 1, host: 'another-host', nonce: 'n1', at: new Date().toISOString() }));
    await expect(withLease(file, { waitMs: 300, busy }, async () => 'got it')).rejects.toThrow('busy');
    const old = new Date(Date.now() - STALE_MS - 1000);
    fs.utimesSync(file, old, old);
    const seen = await withLease(file, { waitMs: 300, busy }, async (lease) => lease.tookOver);
    expect(seen).toBe(true);
    expect(fs.existsSync(file)).toBe(false); // released
  });

  it('a holder touches its lock every second while it works (the heartbeat others judge it by)', async () => {
    const file = path.join(dir, 'b.lock');
    await withLease(file, { waitMs: 300, busy }, async () => {
      const before = fs.statSync(file).mtimeMs;
      await new Promise((r) => setTimeout(r, 1300));
      expect(fs.statSync(file).mtimeMs).toBeGreaterThan(before);
    });
  });

  it('a holder whose lock was taken over stops publishing', async () => {
    const file = path.join(dir, 'c.lock');
    await expect(
      withLease(file, { waitMs: 300, busy }, async (lease) => {
        fs.writeFileSync(file, JSON.stringify({ pid: 1, host: 'another-host', nonce: 'thief', at: '' })); // someone else's now
        expect(await lease.check()).toBe(false);
        assertFence();
      }),
    ).rejects.toMatchObject({ code: 'LOCK_ERROR' });
  });
});

describe.skipIf(!haveRedis)('two instances through Redis', () => {
  const KEY = 'fs_coordination_key';
  let redis: ChildProcess | undefined;
  let redisPort: number;
  let a: Served;
  let b: Served;
  const base = tempBase();
  const flags = () => ['--auth', 'api-key', '--api-key', KEY, '--access-log', 'off', '--valve', 'sandbox=validated', '--allow-unconfined', '--coordination', `redis://127.0.0.1:${redisPort}`];
  const call = async (s: Served, user: string, fn: string, args: Record<string, unknown>) => {
    const res = await s.post(fn, args, { Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': user });
    return (await res.json()) as { success: boolean; error?: { code: string; message: string }; data?: Record<string, unknown> };
  };
  beforeAll(async () => {
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    [a, b] = await Promise.all([serve(flags(), { base }), serve(flags(), { base })]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await stopProc(redis);
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('an instance killed mid-call (holding its user lock) blocks that user for less than 10 s; nothing is lost', async () => {
    expect((await call(a, 'kim', 'shed_sqlite', { zone: 'storage', path: 's.db', query: 'CREATE TABLE t(a)' })).success).toBe(true);
    expect((await call(a, 'kim', 'shed_patch_text', { zone: 'documents', path: 'log.md', content: 'before', position: 'end' })).success).toBe(true);
    const holding = call(a, 'kim', 'shed_sqlite', { zone: 'storage', path: 's.db', query: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c' }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 800));
    a.proc.kill('SIGKILL');
    await holding;
    const t0 = Date.now();
    const after = await call(b, 'kim', 'shed_patch_text', { zone: 'documents', path: 'log.md', content: 'after', position: 'end' });
    const waited = Date.now() - t0;
    console.log(`lock takeover after kill -9 through Redis: ${waited} ms`);
    expect(after.success, JSON.stringify(after.error)).toBe(true);
    expect(waited).toBeLessThan(10_000);
    expect(fs.readFileSync(path.join(base, 'users', 'kim', 'Documents', 'data', 'log.md'), 'utf8')).toBe('before\nafter\n');
    // The change stamp records the fencing token of the call that wrote it.
    const stamp = JSON.parse(fs.readFileSync(path.join(base, 'users', 'kim', 'Storage', 'locks', '.shed-stamp'), 'utf8')) as { fence: number };
    expect(stamp.fence).toBeGreaterThan(1);
    a = await serve(flags(), { base });
  }, 60_000);

  it('Redis unreachable: calls answer LOCK_ERROR promptly, /readyz says 503; back when Redis is back', async () => {
    expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
    await stopProc(redis);
    redis = undefined;
    const down = Date.now();
    // Readiness follows within about 2 s (the docs' promise): polled from the moment Redis is gone.
    let notReadyAfter: number | undefined;
    while (Date.now() - down < 10_000) {
      const ready = await fetch(`${b.url}/readyz`);
      if (ready.status === 503) {
        notReadyAfter = Date.now() - down;
        expect((await ready.json()).reason).toMatch(/coordination service/);
        break;
      }
      await new Promise((res) => setTimeout(res, 50));
    }
    console.log(`/readyz said 503 ${notReadyAfter} ms after Redis went down`);
    expect(notReadyAfter).toBeLessThan(2_500);
    const t0 = Date.now();
    const r = await call(b, 'lee', 'shed_create_file', { zone: 'storage', path: 'x.txt', content: 'x' });
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(r.error?.code).toBe('LOCK_ERROR');
    expect(r.error?.message).toMatch(/coordination service/);
    redis = await startRedis(redisPort);
    await new Promise((res) => setTimeout(res, 1500));
    expect((await call(b, 'lee', 'shed_create_file', { zone: 'storage', path: 'x.txt', content: 'x' })).success).toBe(true);
    expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
  }, 60_000);
});
