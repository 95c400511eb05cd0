/**
 * One writer per repository: a lease (locks/lease.ts) on `.git/fileshed.lock`: an in-process
 * queue (calls of this process wait their turn without touching the disk), then the lock file
 * (one host) or the coordination service's lease (several hosts).
 *
 * A lock left by a killed process is taken over once its process is gone (same host) or its
 * heartbeat stopped (lease.ts STALE_MS; with Redis, when its lease expires); taking it over also
 * sweeps the temp files such a crash can leave behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../base/errors.js';
import { checkStateDir, listStateDir } from '../../base/fs/nofollow.js';
import { withLease } from '../../base/locks/lease.js';
import type { Repo } from './repo.js';

const WAIT_MS = 60 * 1000;

export async function withRepoLock<T>(repo: Repo, fn: () => Promise<T>): Promise<T> {
  const busy = () =>
    shedError('FILE_LOCKED', `The version history of ${repo.label} is busy: another process has been committing for over ${WAIT_MS / 1000} s.`, {
      hint: 'Try the call again in a minute; if it keeps failing, ask an admin.',
    });
  // The lock file lives in the repository: never reached through a link (fs/nofollow.ts).
  checkStateDir(repo.gitdir);
  return withLease(path.join(repo.gitdir, 'fileshed.lock'), { waitMs: WAIT_MS, busy }, async (lease) => {
    // Temp files of a dead writer are swept only once we hold the lock: nobody else is writing.
    if (lease.tookOver) sweepTemps(repo.gitdir);
    return fn();
  });
}

/**
 * What a killed writer may leave: temp ref/index files and temp objects (all ignored by git). Temp
 * objects are written in objects/ itself, so one listing finds them; `deep` also looks in the
 * 256 fan-out folders, where earlier versions wrote them (at start and in maintenance, not on the
 * takeover of a lock, which must stay O(1)).
 */
export function sweepTemps(gitdir: string, deep = false): void {
  for (const name of safeList(gitdir)) {
    if (/^fileshed-.*\.tmp$/.test(name) || /^fileshed\.lock\..*stale/.test(name)) fs.rmSync(path.join(gitdir, name), { force: true });
  }
  const objects = path.join(gitdir, 'objects');
  for (const dir of safeList(objects)) {
    if (dir.startsWith('tmp_obj_fileshed_')) fs.rmSync(path.join(objects, dir), { force: true });
    if (!deep || !/^[0-9a-f]{2}$/.test(dir)) continue;
    for (const name of safeList(path.join(objects, dir))) {
      if (name.startsWith('tmp_obj_fileshed_')) fs.rmSync(path.join(objects, dir, name), { force: true });
    }
  }
}

function safeList(dir: string): string[] {
  try {
    return listStateDir(dir);
  } catch {
    return []; // a folder that is not a real one is not swept (nothing is removed through a link)
  }
}
