/**
 * Recovery after a process was killed mid-call (kill -9, a crash, a power cut): a server calls
 * `recoverStorage(base)` at start, and shed_maintenance runs the same steps for its caller.
 *
 * What a killed call can leave, and what recovery does with it:
 * - files written in Documents or a group space but not yet committed (the write happens before
 *   the commit): committed as "Recovered changes after an interrupted call", so `git status` is
 *   clean and the history holds what the users' files hold;
 * - temp files of interrupted atomic writes (`*.shedtmp`, hidden names): removed;
 * - temp objects and refs inside .git: swept under the repository lock;
 * - an index left at the previous commit (killed between the branch update and the index write):
 *   rebuilt from HEAD, so a real git reading the folder sees a clean status;
 * - a repository of an earlier version at `data/.git`: moved to `git/` (vcs/migrate.ts), and the
 *   temp folders of an interrupted repository creation removed.
 * Locks need nothing here: a lock whose holder is gone is taken over by the next caller, who runs
 * the same recovery for that space first (call-lock.ts).
 *
 * Each scope is recovered under its call lock (call-lock.ts): another instance sharing the storage
 * base may be running a call there, and its temp files and uncommitted writes are not leftovers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { TEMP_SUFFIX } from '../fs/atomic.js';
import { dbLockPath, withDbLock } from '../db/dblock.js';
import { ACCESS_DB, accessDbPath } from '../groups/accessdb.js';
import { walkEntriesSliced } from '../fs/walk.js';
import type { Identity } from '../identity.js';
import { withCallLock } from '../locks/call-lock.js';
import { commitPaths } from '../vcs/commit.js';
import { repairIndex } from '../vcs/gitindex.js';
import { readCommit } from '../vcs/objects.js';
import { readHead } from '../vcs/refs.js';
import { sweepTemps, withRepoLock } from '../vcs/lock.js';
import { INIT_PREFIX, repoExists, repoFor } from '../vcs/repo.js';
import { prepareHome, type Migration } from '../vcs/migrate.js';

export const RECOVERY_MESSAGE = 'Recovered changes after an interrupted call';

const SYSTEM: Identity = { id: 'fileshed', name: 'Fileshed recovery', email: '', role: 'admin' };

export interface RecoveryReport {
  /** Scopes (user homes and group spaces) looked at. */
  scopes: number;
  /** Recovery commits made: zone label and short commit id. */
  commits: { zone: string; commit: string }[];
  /** Temp files removed, as "users/alice/Documents/data/.x.shedtmp" relative to the base. */
  temp_files: string[];
  /** Repositories of an earlier version moved out of their zone (or left as user data when untrusted). */
  migrations: Migration[];
}

export function emptyReport(): RecoveryReport {
  return { scopes: 0, commits: [], temp_files: [], migrations: [] };
}

/** Recovers every user and group under the storage base. Never throws for one broken scope. */
export async function recoverStorage(base: string): Promise<RecoveryReport> {
  const report = emptyReport();
  const root = path.resolve(base);
  for (const dir of [path.join(root, 'users'), path.join(root, 'groups')]) {
    for (const id of listDir(dir)) {
      const home = path.join(dir, id);
      if (!fs.statSync(home, { throwIfNoEntry: false })?.isDirectory()) continue;
      report.scopes++;
      try {
        await withCallLock([home], () => recoverScope(home, report));
      } catch {
        // one unreadable scope must not stop the others (the next start tries again)
      }
    }
  }
  // Temp copies of the access database left by a killed write, taken under that database's lock
  // (another instance may be writing it right now: its temp file is not a leftover).
  try {
    const db = accessDbPath(root);
    await withDbLock(dbLockPath(root, db), ACCESS_DB, async () => {
      for (const name of listDir(root)) {
        if (!name.startsWith(`.${ACCESS_DB}.`) || !name.endsWith(TEMP_SUFFIX)) continue;
        fs.rmSync(path.join(root, name), { force: true });
        report.temp_files.push(name);
      }
    });
  } catch {
    // the next start tries again; maintenance removes old ones too
  }
  return report;
}

/**
 * One user home or group space (`{base}/users/{id}` or `{base}/groups/{id}`); the caller holds its
 * call lock. Also what the dispatcher runs when it takes a call lock over from a dead holder.
 */
export async function recoverScope(home: string, report: RecoveryReport = emptyReport()): Promise<RecoveryReport> {
  const id = path.basename(home);
  const kindDir = path.dirname(home);
  const base = path.dirname(kindDir);
  if (path.basename(kindDir) === 'users') await recoverUserHome(home, id, base, report);
  else await recoverGroupHome(home, id, base, report);
  return report;
}

/** A user's home; the caller holds its call lock. */
export async function recoverUserHome(home: string, userId: string, base: string, report: RecoveryReport, temps = true): Promise<void> {
  await prepare(home, report);
  if (temps) for (const tree of [path.join(home, 'Uploads'), path.join(home, 'Storage', 'data'), path.join(home, 'Documents', 'data')]) await removeTemps(tree, base, report);
  await commitLeftovers(path.join(home, 'Documents', 'data'), 'Documents', { id: userId, name: userId, email: '', role: 'user' }, report);
}

/** A group space; the caller holds its call lock. */
export async function recoverGroupHome(home: string, groupId: string, base: string, report: RecoveryReport): Promise<void> {
  await prepare(home, report);
  const data = path.join(home, 'data');
  await removeTemps(data, base, report);
  await commitLeftovers(data, `Group:${groupId}`, SYSTEM, report);
}

/** The space's repository at git/ (moved from an earlier version's data/.git); leftovers of an interrupted creation go. */
async function prepare(home: string, report: RecoveryReport): Promise<void> {
  const workBase = path.basename(path.dirname(home)) === 'users' ? path.join(home, 'Documents') : home;
  for (const name of listDir(workBase)) {
    if (name.startsWith(INIT_PREFIX)) fs.rmSync(path.join(workBase, name), { recursive: true, force: true });
  }
  report.migrations.push(...(await prepareHome(home)));
}

/** Temp files of interrupted writes: a walk of a tree the user shaped, sliced. */
async function removeTemps(tree: string, base: string, report: RecoveryReport): Promise<void> {
  if (!fs.statSync(tree, { throwIfNoEntry: false })?.isDirectory()) return;
  for await (const { full } of walkEntriesSliced(tree)) {
    if (!path.basename(full).endsWith(TEMP_SUFFIX)) continue;
    try {
      fs.rmSync(full, { force: true });
      report.temp_files.push(path.relative(base, full).split(path.sep).join('/'));
    } catch {
      // gone already
    }
  }
}

async function commitLeftovers(root: string, label: string, author: Identity, report: RecoveryReport): Promise<void> {
  if (!fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) return;
  const repo = repoFor({ root: fs.realpathSync(root), label });
  if (!repoExists(repo)) return; // no history yet: the first commit will take the whole folder
  const oid = await withRepoLock(repo, async () => {
    sweepTemps(repo.gitdir);
    const made = await commitPaths(repo, [''], author, RECOVERY_MESSAGE);
    if (made === undefined) {
      // Killed between the branch update and the index write: the commit stands, the index lags.
      const head = readHead(repo.gitdir).oid;
      if (head !== undefined) await repairIndex(repo.gitdir, head, (await readCommit(repo.gitdir, head)).tree);
    }
    return made;
  });
  if (oid !== undefined) report.commits.push({ zone: label, commit: oid.slice(0, 7) });
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}
