/**
 * Cross-process locks as leases: the call lock of a user or group space, the lock of a database
 * file, the lock of a git repository. One mechanism, two stores:
 *
 * - One host (default): a lock file created with O_EXCL beside what it protects. The holder
 *   refreshes its mtime every second (after checking the file is still its own); a waiter takes it
 *   over when its process is gone (same host), or when the heartbeat has not moved for STALE_MS
 *   (another host: by the lock's mtime, or by what the waiter itself saw not move for that long on
 *   its own clock). Taking over renames the stale file away (atomic: one taker wins).
 * - Several hosts (`--coordination redis://...`): the host injects a Coordinator (useCoordination)
 *   whose leases live in Redis: SET NX PX with a random token, renewed by heartbeat, so a dead
 *   holder's lease ends within seconds; every acquisition gets a fencing token (INCR), strictly
 *   increasing per lock.
 *
 * Fencing: a holder whose lease may have ended must not write. Every lease held by a call is kept
 * in an AsyncLocalStorage context; `assertFence()` (before each rename that publishes a write, a
 * local check without a round trip) and `confirmFence()` (before a commit, asking the store) refuse
 * with LOCK_ERROR once a lease is lost. Residual window: a process frozen between that check and
 * the rename itself (microseconds) for longer than the lease.
 *
 * A lease taken over from a dead holder says so (`tookOver`): the call lock then recovers the
 * space (call-lock.ts), so what the killed call left is committed before the next call's write.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shedError } from '../errors.js';
import { checkBeforePublishing } from '../fs/atomic.js';
import { readAllFd } from '../fs/read.js';

export interface Lease {
  /** Fencing token: strictly increasing per lock across all holders (Redis); 0 for lock files. */
  readonly fence: number;
  /** The previous holder never released it (it died): what it protected may need recovery. */
  readonly tookOver: boolean;
  /** False once the lease may have ended (local clock only: no round trip). */
  held(): boolean;
  /** Asks the store whether the lease is still this holder's. */
  check(): Promise<boolean>;
  release(): Promise<void>;
}

/** Cross-host locks a host provides (fileshed serve --coordination redis://...). */
export interface Coordinator {
  /** Shown in /healthz and shed_parameters, without credentials: "redis://host:6379 (prefix fileshed)". */
  readonly description: string;
  /** One attempt to take the lock `name`; undefined while someone else holds it. */
  tryAcquire(name: string): Promise<Lease | undefined>;
}

let coordinator: { impl: Coordinator; base: string } | undefined;

/** Routes every lock under `base` (and every other lock) through `impl`; undefined: lock files again. */
export function useCoordination(impl: Coordinator | undefined, base = '/'): void {
  coordinator = impl === undefined ? undefined : { impl, base: path.resolve(base) };
}

export function coordinationInUse(): string | undefined {
  return coordinator?.impl.description;
}

export interface LeaseOptions {
  /** How long to wait for another holder before `busy()` is thrown. */
  waitMs: number;
  busy: () => Error;
}

const queues = new Map<string, Promise<unknown>>();
/** The leases the current call holds, innermost last. */
const held = new AsyncLocalStorage<readonly { lockPath: string; lease: Lease }[]>();

/**
 * Runs `fn` holding the lock `lockPath` (a file path: the lock file in one-host mode, the lock's
 * name relative to the storage base with a coordinator). Calls of this process queue in memory
 * first, so they never poll each other.
 */
export async function withLease<T>(lockPath: string, opts: LeaseOptions, fn: (lease: Lease) => Promise<T>): Promise<T> {
  const previous = queues.get(lockPath) ?? Promise.resolve();
  const run = previous.then(() => hold(lockPath, opts, fn));
  const tail = run.catch(() => undefined);
  queues.set(lockPath, tail);
  try {
    return await run;
  } finally {
    if (queues.get(lockPath) === tail) queues.delete(lockPath);
  }
}

async function hold<T>(lockPath: string, opts: LeaseOptions, fn: (lease: Lease) => Promise<T>): Promise<T> {
  const c = coordinator;
  const acquire = c !== undefined ? () => c.impl.tryAcquire(lockName(lockPath, c.base)) : () => fileStore.tryAcquire(lockPath);
  const deadline = Date.now() + opts.waitMs;
  let delay = 5;
  let lease: Lease | undefined;
  for (;;) {
    try {
      lease = await acquire();
    } catch (err) {
      throw c !== undefined ? unreachable(err) : err; // a lock file's error is the storage's (IO_ERROR)
    }
    if (lease !== undefined) break;
    if (Date.now() > deadline) throw opts.busy();
    await sleep(delay + Math.floor(Math.random() * delay));
    delay = Math.min(delay * 2, 100);
  }
  const mine = lease;
  try {
    return await held.run([...(held.getStore() ?? []), { lockPath, lease: mine }], () => fn(mine));
  } finally {
    await mine.release().catch(() => undefined);
  }
}

/** The coordinator's name of a lock: its path relative to the storage base, the same on every host. */
function lockName(lockPath: string, base: string): string {
  const rel = path.relative(base, path.resolve(lockPath));
  return rel.startsWith('..') || path.isAbsolute(rel) ? path.resolve(lockPath) : rel.split(path.sep).join('/');
}

/** Before a rename that publishes a write: refuses when a lease of this call may have ended. */
export function assertFence(): void {
  for (const { lease } of held.getStore() ?? []) if (!lease.held()) throw lostError();
}

checkBeforePublishing(assertFence);

/**
 * Before a commit: asks the store that every lease of this call is still held (and renews it: a
 * holder whose event loop stalled but whose lease nobody took may go on).
 */
export async function confirmFence(): Promise<void> {
  for (const { lease } of held.getStore() ?? []) {
    if (!(await lease.check().catch(() => false))) throw lostError();
  }
}

/** The lease of `lockPath` when this async context (this call) holds it. */
export function leaseHeld(lockPath: string): Lease | undefined {
  return (held.getStore() ?? []).find((h) => h.lockPath === lockPath)?.lease;
}

/** The highest fencing token this call holds (recorded in the change stamp), 0 without one. */
export function currentFence(): number {
  return Math.max(0, ...(held.getStore() ?? []).map((h) => h.lease.fence));
}

function lostError(): Error {
  return shedError('LOCK_ERROR', 'This call lost its lock on the space (its lease ended: the coordination service or the storage did not answer in time), so it stopped before writing more.', {
    hint: 'Retry the call: it runs again from the start under a new lock. If it keeps failing, an admin checks the coordination service (Redis) and the storage.',
  });
}

function unreachable(err: unknown): Error {
  return shedError('LOCK_ERROR', `The coordination service did not answer (${err instanceof Error ? err.message : String(err)}), so no lock could be taken and nothing was changed.`, {
    hint: 'Retry in a moment; if it persists, an admin checks the coordination service (fileshed serve --coordination).',
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------
// Lock files (one host, or several hosts on a coherent shared filesystem without a coordinator).

/** The holder touches its lock this often. */
const HEARTBEAT_MS = 1_000;
/**
 * A lock whose heartbeat has not moved for this long is taken over (the holder died on another
 * host, or froze): a killed instance blocks its users for about this plus the next call (a Redis
 * lease ends 6 s after its last renewal). A holder whose own last heartbeat is
 * older than STALE_MS - HOLDER_MARGIN_MS (its event loop or the storage stalled) looks at the lock
 * again before it publishes a write: still its own, it touches it and goes on (nobody took it, so
 * the stall cost nothing); taken over, it stops (LOCK_ERROR).
 */
export const STALE_MS = 5_000;
const HOLDER_MARGIN_MS = 2_000;
/** A holder alive on this host (its pid checked) keeps its lock unless its heartbeat stopped this long. */
const SAME_HOST_STALE_MS = 60_000;
/** A lock file still empty this long after its creation belongs to a holder killed while creating it. */
const EMPTY_STALE_MS = 3_000;

interface LockBody {
  pid: number;
  host: string;
  nonce: string;
  at: string;
}

const HOST = os.hostname();
/** What a waiter saw of a lock it could not take: signature → when it first saw it (its own clock). */
const observed = new Map<string, { sig: string; since: number }>();

const fileStore = {
  async tryAcquire(lockPath: string): Promise<Lease | undefined> {
    const body: LockBody = { pid: process.pid, host: HOST, nonce: crypto.randomBytes(8).toString('hex'), at: new Date().toISOString() };
    let tookOver = false;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (tryCreate(lockPath, body)) {
        observed.delete(lockPath);
        return new FileLease(lockPath, body.nonce, tookOver);
      }
      const stale = staleLock(lockPath);
      if (stale === undefined) return undefined;
      // Whoever breaks it, its holder died: the winner of the next create recovers (recovery is idempotent).
      breakLock(lockPath, stale);
      tookOver = true;
    }
    return undefined;
  },
};

class FileLease implements Lease {
  readonly fence = 0;
  private lastBeat = Date.now();
  private lost = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly lockPath: string,
    private readonly nonce: string,
    readonly tookOver: boolean,
  ) {
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Touches the lock if it is still ours; true when it did. */
  private beat(): boolean {
    if (this.lost) return false;
    try {
      if (readBody(this.lockPath)?.body?.nonce !== this.nonce) {
        this.lost = true; // taken over: never touch the new holder's file
        return false;
      }
      const now = new Date();
      fs.utimesSync(this.lockPath, now, now);
      this.lastBeat = Date.now();
      return true;
    } catch {
      return false; // the storage did not answer: held() turns false once the margin is used up
    }
  }

  held(): boolean {
    if (!this.lost && Date.now() - this.lastBeat >= STALE_MS - HOLDER_MARGIN_MS) this.beat(); // a stall: is it still ours?
    return !this.lost && Date.now() - this.lastBeat < STALE_MS - HOLDER_MARGIN_MS;
  }

  /** A heartbeat is the check: the lock file still holds our nonce (nobody took it over). */
  async check(): Promise<boolean> {
    return this.beat();
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    if (readBody(this.lockPath)?.body?.nonce !== this.nonce) return;
    try {
      fs.unlinkSync(this.lockPath); // a file (read just now): one unlink, not rmSync's lstat + unlink
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // already gone: as rmSync's force
    }
  }
}

function tryCreate(lockPath: string, body: LockBody): boolean {
  const create = () => fs.openSync(lockPath, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
  let fd: number;
  try {
    try {
      fd = create();
    } catch (err) {
      // Its folder is made only when missing (once per space), not tried at every call.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      fs.mkdirSync(path.dirname(lockPath), { recursive: true });
      fd = create();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    fs.writeSync(fd, JSON.stringify(body));
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // written; a failing close (network filesystem) changes nothing here
    }
  }
  return true;
}

/** A lock file that is a link or a special file: never followed nor read, taken over at once (its mtime says "long dead"). */
const NOT_A_LOCK = { body: undefined, mtimeMs: 0, size: -1 };

function readBody(lockPath: string): { body: Partial<LockBody> | undefined; mtimeMs: number; size: number } | undefined {
  let fd: number;
  try {
    // No-follow and non-blocking: a planted link or FIFO must neither lead elsewhere nor hang the server.
    fd = fs.openSync(lockPath, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ELOOP' ? NOT_A_LOCK : undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return NOT_A_LOCK;
    const body = st.size > 0 && st.size < 4096 ? parseBody(readAllFd(fd, st.size).toString('utf8')) : undefined;
    return { body, mtimeMs: st.mtimeMs, size: st.size };
  } catch {
    return undefined;
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // stale handle on a network filesystem: what was read stands
    }
  }
}

/** A lock's body: JSON, or the "pid host time nonce" text of repository locks of earlier versions. */
function parseBody(text: string): Partial<LockBody> | undefined {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Partial<LockBody>) : undefined;
  } catch {
    const legacy = /^(\d+) (\S+) /.exec(text);
    return legacy ? { pid: Number(legacy[1]), host: legacy[2]!, nonce: text } : undefined; // else being written, or garbage
  }
}

/**
 * A lock file whose holder is gone (dead on this host, or a heartbeat stopped on another), judged
 * without waiting or remembering anything: a caller that does not take the lock (a read) asks
 * whether the next one to take it would recover the space first.
 */
export function abandonedLockFile(lockPath: string): boolean {
  // Almost always there is none: one lstat, not a thrown ENOENT (this runs before every read).
  if (fs.lstatSync(lockPath, { throwIfNoEntry: false }) === undefined) return false;
  const seen = readBody(lockPath);
  if (seen === undefined) return false;
  const { body } = seen;
  // Our own pid: held by a call of this process (it queues here), else left by an earlier process with our pid (a restarted container).
  if (body?.host === HOST && typeof body.pid === 'number') return body.pid === process.pid ? !queues.has(lockPath) : !alive(body.pid);
  return Date.now() - seen.mtimeMs > (body === undefined && seen.size === 0 ? EMPTY_STALE_MS : STALE_MS);
}

/** The lock's signature (mtime, size, nonce) when it is stale, else undefined. */
function staleLock(lockPath: string): string | undefined {
  const seen = readBody(lockPath);
  if (seen === undefined) return undefined; // gone already: the next attempt creates it or waits
  const now = Date.now();
  const { body } = seen;
  let limit = body === undefined && seen.size === 0 ? EMPTY_STALE_MS : STALE_MS;
  if (body?.host === HOST && typeof body.pid === 'number') {
    // Our own pid: the in-process queue means we do not hold it, so an earlier process with our pid (a restarted container) left it.
    if (body.pid === process.pid || !alive(body.pid)) return signature(seen);
    limit = SAME_HOST_STALE_MS; // alive on this host: only a holder hung for a minute loses it
  }
  // The heartbeat, judged two ways: by the holder's clock (mtime), and by what this waiter saw not
  // move on its own clock (immune to clock skew between hosts, at the cost of waiting STALE_MS).
  const sig = signature(seen);
  const prior = observed.get(lockPath);
  const since = prior?.sig === sig ? prior.since : now;
  if (prior?.sig !== sig) {
    observed.set(lockPath, { sig, since });
    if (observed.size > 10_000) observed.delete(observed.keys().next().value as string);
  }
  return now - seen.mtimeMs > limit || now - since > limit ? sig : undefined;
}

function signature(seen: { body: Partial<LockBody> | undefined; mtimeMs: number; size: number }): string {
  return `${seen.mtimeMs}:${seen.size}:${seen.body?.nonce ?? ''}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by another user
  }
}

/**
 * Renames the stale lock away (only one breaker can succeed) and removes it. A lock that changed
 * between the judgement (signature `judged`) and the rename (a fresh lock, or a heartbeat of a
 * holder that was only slow) is put back.
 */
function breakLock(lockPath: string, judged: string): void {
  const aside = `${lockPath}.stale-${crypto.randomBytes(6).toString('hex')}`;
  try {
    fs.renameSync(lockPath, aside);
  } catch {
    return; // someone else broke or released it
  }
  observed.delete(lockPath);
  const moved = readBody(aside);
  if (moved === undefined || signature(moved) !== judged) {
    try {
      fs.linkSync(aside, lockPath);
    } catch {
      // a third process holds the name now; the moved lock's holder finds its nonce gone and stops writing
    }
  }
  fs.rmSync(aside, { force: true });
}
