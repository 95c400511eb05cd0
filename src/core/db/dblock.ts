/**
 * Serialises writers of one database file, across calls of this process AND across processes (two
 * servers, or a server and the CLI, sharing a storage folder). Every write is read-modify-replace
 * of the whole file, so two unserialised writers would silently lose one update.
 *
 * Mechanism: a lock file per database (named by a hash of the database's real path) under the
 * zone's internal folder, created with O_EXCL so one process wins. The holder refreshes its mtime
 * while it works; a lock whose holder process is gone (same host) or whose mtime stopped moving is
 * stale and is broken by renaming it away (atomic, so only one waiter breaks it). Within a process
 * a queue per lock avoids polling.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shedError } from '../errors.js';
import { errnoCode } from '../paths/resolve.js';

const HEARTBEAT_MS = 5_000;
/** A lock not refreshed for this long belongs to a hung or vanished holder. */
const STALE_MS = 60_000;
/** How long a writer waits for another writer of the same database. */
const WAIT_MS = 120_000;

interface LockBody {
  pid: number;
  host: string;
  nonce: string;
  at: string;
}

const queues = new Map<string, Promise<unknown>>();

/** Lock file of a database: `{internal}/dblocks/{hash}.lock`, never visible inside the zone. */
export function dbLockPath(internalBase: string | undefined, dbAbs: string): string {
  const hash = crypto.createHash('sha256').update(dbAbs).digest('hex').slice(0, 32);
  if (internalBase === undefined) return path.join(path.dirname(dbAbs), `.${path.basename(dbAbs)}.shedlock`);
  return path.join(internalBase, 'dblocks', `${hash}.lock`);
}

/**
 * `what` names the locked thing in the busy error ("The database Storage/x.db" by default); the
 * call lock (locks/call-lock.ts) reuses this lock for whole calls.
 */
export async function withDbLock<T>(lockPath: string, shown: string, fn: () => Promise<T>, waitMs = WAIT_MS, what = `The database ${shown}`): Promise<T> {
  // In-process queue first: calls of this process never poll each other.
  const previous = queues.get(lockPath) ?? Promise.resolve();
  const run = previous.then(() => holdFileLock(lockPath, shown, fn, waitMs, what));
  const tail = run.catch(() => undefined);
  queues.set(lockPath, tail);
  try {
    return await run;
  } finally {
    if (queues.get(lockPath) === tail) queues.delete(lockPath);
  }
}

async function holdFileLock<T>(lockPath: string, shown: string, fn: () => Promise<T>, waitMs: number, what: string): Promise<T> {
  fs.mkdirSync(path.dirname(lockPath), { recursive: true });
  const body: LockBody = { pid: process.pid, host: os.hostname(), nonce: crypto.randomBytes(8).toString('hex'), at: new Date().toISOString() };
  const deadline = Date.now() + waitMs;
  let delay = 5;
  for (;;) {
    if (tryCreate(lockPath, body)) break;
    if (isStale(lockPath)) {
      breakLock(lockPath);
      continue;
    }
    if (Date.now() > deadline) {
      throw shedError('FILE_LOCKED', `${what} is being written by another call and stayed busy for ${Math.round(waitMs / 1000)} s.`, {
        details: { path: shown },
        hint: 'Try again in a moment; a large CSV import into the same database may still be running.',
      });
    }
    await sleep(delay + Math.floor(Math.random() * delay));
    delay = Math.min(delay * 2, 200);
  }
  const beat = setInterval(() => {
    try {
      const now = new Date();
      fs.utimesSync(lockPath, now, now);
    } catch {
      // lost the lock file: the work still finishes; the next writer waits for the stale delay
    }
  }, HEARTBEAT_MS);
  beat.unref();
  try {
    return await fn();
  } finally {
    clearInterval(beat);
    release(lockPath, body.nonce);
  }
}

function tryCreate(lockPath: string, body: LockBody): boolean {
  let fd: number;
  try {
    fd = fs.openSync(lockPath, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    fs.writeSync(fd, JSON.stringify(body));
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

function readBody(lockPath: string): { body: Partial<LockBody> | undefined; mtimeMs: number } | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(lockPath);
  } catch {
    return undefined;
  }
  try {
    return { body: JSON.parse(fs.readFileSync(lockPath, 'utf8')) as Partial<LockBody>, mtimeMs: st.mtimeMs };
  } catch {
    return { body: undefined, mtimeMs: st.mtimeMs }; // being written, or garbage
  }
}

function isStale(lockPath: string): boolean {
  const seen = readBody(lockPath);
  if (seen === undefined) return false; // gone already: the next create attempt wins or waits
  const age = Date.now() - seen.mtimeMs;
  const { body } = seen;
  if (body === undefined) return age > 5_000; // a holder writes its body right after creating the file
  if (body.host === os.hostname() && typeof body.pid === 'number' && !alive(body.pid)) return true;
  return age > STALE_MS;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) === 'EPERM'; // exists but belongs to another user
  }
}

/** Renames the stale lock away (only one breaker can succeed) and removes it. */
function breakLock(lockPath: string): void {
  const aside = `${lockPath}.stale-${crypto.randomBytes(6).toString('hex')}`;
  try {
    fs.renameSync(lockPath, aside);
  } catch {
    return; // someone else broke or released it
  }
  fs.rmSync(aside, { force: true });
}

function release(lockPath: string, nonce: string): void {
  const seen = readBody(lockPath);
  if (seen?.body?.nonce === nonce) fs.rmSync(lockPath, { force: true });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
