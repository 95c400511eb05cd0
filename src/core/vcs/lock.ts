/**
 * One writer per repository: an in-process queue (calls of this process wait their turn without
 * touching the disk) plus a lock file `.git/fileshed.lock` created with O_EXCL for other processes.
 *
 * A lock left by a killed process is broken when its process is gone (same host) or when it is
 * older than STALE_MS; breaking it also sweeps the temp files such a crash can leave behind.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shedError } from '../errors.js';
import type { Repo } from './repo.js';

const STALE_MS = 10 * 60 * 1000;
const WAIT_MS = 60 * 1000;
const tails = new Map<string, Promise<unknown>>();

export async function withRepoLock<T>(repo: Repo, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(repo.gitdir) ?? Promise.resolve();
  const run = previous.then(async () => {
    const release = await acquire(repo);
    try {
      return await fn();
    } finally {
      release();
    }
  });
  const tail = run.catch(() => undefined);
  tails.set(repo.gitdir, tail);
  try {
    return await run;
  } finally {
    if (tails.get(repo.gitdir) === tail) tails.delete(repo.gitdir);
  }
}

async function acquire(repo: Repo): Promise<() => void> {
  const file = path.join(repo.gitdir, 'fileshed.lock');
  const token = `${process.pid} ${os.hostname()} ${Date.now()} ${crypto.randomBytes(8).toString('hex')}`;
  const deadline = Date.now() + WAIT_MS;
  let pause = 1;
  let broke = false;
  for (;;) {
    try {
      const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o644);
      try {
        fs.writeSync(fd, token);
      } finally {
        fs.closeSync(fd);
      }
      // Temp files of a dead writer are swept only once we hold the lock: nobody else is writing.
      if (broke) sweepTemps(repo.gitdir);
      return () => {
        if (readText(file) === token) fs.rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const held = readText(file);
    if (held !== undefined && isStale(file, held)) {
      breakLock(file, held);
      broke = true;
      continue;
    }
    if (Date.now() > deadline) {
      throw shedError('FILE_LOCKED', `The version history of ${repo.label} is busy: another process has been committing for over ${WAIT_MS / 1000} s.`, {
        hint: 'Try the call again in a minute; if it keeps failing, ask an admin.',
      });
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 25);
  }
}

function isStale(file: string, held: string): boolean {
  const [pid, host] = held.split(' ');
  // Our own pid: the in-process queue means we do not hold it, so an earlier process with our pid (a restarted container) left it.
  if (host === os.hostname() && pid !== undefined && (Number(pid) === process.pid || !isAlive(Number(pid)))) return true;
  try {
    // An empty lock is a writer killed between creating and filling it.
    return Date.now() - fs.statSync(file).mtimeMs > (held === '' ? 5000 : STALE_MS);
  } catch {
    return false; // released meanwhile: just retry
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Moves the stale lock aside under a unique name, so two breakers cannot both remove a fresh lock. */
function breakLock(file: string, held: string): void {
  const aside = `${file}.${crypto.randomBytes(6).toString('hex')}.stale`;
  try {
    fs.renameSync(file, aside);
  } catch {
    return; // someone else broke it first
  }
  if (readText(aside) !== held) {
    // We moved a lock taken after our check: put it back if the place is still free.
    try {
      fs.linkSync(aside, file);
    } catch {
      // a third writer holds it now; the moved lock's owner will find its token gone and not delete theirs
    }
  }
  fs.rmSync(aside, { force: true });
}

/** What a killed writer may leave: temp ref/index files and temp objects (all ignored by git). */

export function sweepTemps(gitdir: string): void {
  for (const name of safeList(gitdir)) {
    if (/^fileshed-.*\.tmp$/.test(name) || /^fileshed\.lock\..*\.stale$/.test(name)) fs.rmSync(path.join(gitdir, name), { force: true });
  }
  const objects = path.join(gitdir, 'objects');
  for (const dir of safeList(objects)) {
    if (dir.startsWith('tmp_obj_fileshed_')) fs.rmSync(path.join(objects, dir), { force: true });
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    for (const name of safeList(path.join(objects, dir))) {
      if (name.startsWith('tmp_obj_fileshed_')) fs.rmSync(path.join(objects, dir, name), { force: true });
    }
  }
}

function safeList(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
