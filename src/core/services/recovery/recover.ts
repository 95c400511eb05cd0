/**
 * Recovery after a process was killed mid-call (kill -9, a crash, a power cut): a server calls
 * `recoverStorage(base)` at start, and shed_maintenance runs the same steps for its caller.
 *
 * What a killed call can leave, and what recovery does with it:
 * - files written in Documents or a group space but not yet committed (the write happens before
 *   the commit): committed as "Recovered changes after an interrupted call", so `git status` is
 *   clean and the history holds what the users' files hold;
 * - entries a killed command's call had set aside (blocked entries out of the zone, group files
 *   made read-only: exec/guards/stash.ts): put back, group files checked against HEAD;
 * - temp files of interrupted atomic writes (`*.shedtmp`, hidden names): removed;
 * - temp objects and refs inside .git: swept under the repository lock;
 * - an index left at the previous commit (killed between the branch update and the index write):
 *   rebuilt from HEAD, so a real git reading the folder sees a clean status;
 * - a repository of an earlier version at `data/.git`: moved to `git/` (vcs/migrate.ts), and the
 *   temp folders of an interrupted repository creation removed.
 * Locks need nothing here: a lock whose holder is gone is taken over by the next caller, who runs
 * recovery for that space first (call-lock.ts, `recoverAfterTakeover`): a holder killed inside a
 * commit left the paths it was recording (vcs/pending.ts), and only those are committed, O(change);
 * otherwise the whole space is recovered as at start.
 *
 * Walks yield to the event loop (the user shapes these trees): a long recovery never stops the
 * heartbeats of the locks it holds, nor other users' calls.
 *
 * Each scope is recovered under its call lock (call-lock.ts): another instance sharing the storage
 * base may be running a call there, and its temp files and uncommitted writes are not leftovers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { TEMP_SUFFIX } from '../../base/fs/atomic.js';
import { dbLockPath, withDbLock } from '../db/dblock.js';
import { ACCESS_DB, accessDbPath } from '../groups/accessdb.js';
import { walkEntriesSliced } from '../../base/fs/walk.js';
import type { Identity } from '../../base/identity.js';
import { withCallLock } from '../../base/locks/call-lock.js';
import { putBackLeftovers } from '../exec/guards/leftovers.js';
import { commitPaths } from '../vcs/commit.js';
import { repairIndex } from '../vcs/gitindex.js';
import { readCommit } from '../vcs/objects.js';
import { readHead } from '../vcs/refs.js';
import { sweepTemps, withRepoLock } from '../vcs/lock.js';
import { pendingChanges, pendingRecords, withPendingPaths } from '../vcs/pending.js';
import { INIT_PREFIX, repoExists, repoFor, type Repo } from '../vcs/repo.js';
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
 * call lock. `deep`: also sweep temp objects where earlier versions wrote them (at start; not on a
 * takeover, which must stay quick).
 */
export async function recoverScope(home: string, report: RecoveryReport = emptyReport(), deep = true): Promise<RecoveryReport> {
  const id = path.basename(home);
  const kindDir = path.dirname(home);
  const base = path.dirname(kindDir);
  if (path.basename(kindDir) === 'users') await recoverUserHome(home, id, base, report, true, deep);
  else await recoverGroupHome(home, id, base, report, deep);
  return report;
}

/**
 * What the dispatcher runs when it takes a call lock over from a dead holder (the caller holds it).
 * A holder killed inside a commit had finished its writes: what it was recording is committed,
 * nothing else is looked at. Otherwise (killed while writing) the whole space, as at start.
 */
export async function recoverAfterTakeover(home: string): Promise<RecoveryReport> {
  await putBackLeftovers(home); // what a killed command had set aside goes back first (cheap when nothing was)
  const zone = versionedZone(home);
  const repo = fs.statSync(zone.root, { throwIfNoEntry: false })?.isDirectory() ? repoFor({ root: fs.realpathSync(zone.root), label: zone.label }) : undefined;
  const pending = repo !== undefined && repoExists(repo) ? pendingChanges(repo) : undefined;
  if (repo === undefined || pending === undefined) return recoverScope(home, emptyReport(), false);
  const report = emptyReport();
  await commitRecovery(repo, zone.author, report, pending.paths, false);
  for (const record of pending.records) fs.rmSync(record, { force: true });
  return report;
}

/** The versioned zone of a user home (Documents) or a group space, and whom its recovery commits are by. */
function versionedZone(home: string): { root: string; label: string; author: Identity } {
  const id = path.basename(home);
  if (path.basename(path.dirname(home)) === 'users') return { root: path.join(home, 'Documents', 'data'), label: 'Documents', author: { id, name: id, email: '', role: 'user' } };
  return { root: path.join(home, 'data'), label: `Group:${id}`, author: SYSTEM };
}

/** A user's home; the caller holds its call lock. */
export async function recoverUserHome(home: string, userId: string, base: string, report: RecoveryReport, temps = true, deep = true): Promise<void> {
  await prepare(home, report);
  await putBackLeftovers(home); // before the commit: entries set aside by a killed command are not deletions
  if (temps) for (const tree of [path.join(home, 'Uploads'), path.join(home, 'Storage', 'data'), path.join(home, 'Documents', 'data')]) await removeTemps(tree, base, report);
  await commitLeftovers(path.join(home, 'Documents', 'data'), 'Documents', { id: userId, name: userId, email: '', role: 'user' }, report, deep);
}

/** A group space; the caller holds its call lock. */
export async function recoverGroupHome(home: string, groupId: string, base: string, report: RecoveryReport, deep = true): Promise<void> {
  await prepare(home, report);
  await putBackLeftovers(home);
  const data = path.join(home, 'data');
  await removeTemps(data, base, report);
  await commitLeftovers(data, `Group:${groupId}`, SYSTEM, report, deep);
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

async function commitLeftovers(root: string, label: string, author: Identity, report: RecoveryReport, deep: boolean): Promise<void> {
  if (!fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) return;
  const repo = repoFor({ root: fs.realpathSync(root), label });
  if (!repoExists(repo)) return; // no history yet: the first commit will take the whole folder
  const records = pendingRecords(repo);
  await commitRecovery(repo, author, report, [''], deep);
  for (const record of records) fs.rmSync(record, { force: true }); // the walk covered them
}

/** Commits `paths` ('' is the whole zone) as a recovery, under the repository lock. */
async function commitRecovery(repo: Repo, author: Identity, report: RecoveryReport, paths: string[], deep: boolean): Promise<void> {
  const oid = await withPendingPaths(repo, paths, () => withRepoLock(repo, async () => {
    sweepTemps(repo.gitdir, deep);
    const made = await commitPaths(repo, paths, author, RECOVERY_MESSAGE);
    if (made === undefined) {
      // Killed between the branch update and the index write: the commit stands, the index lags.
      const head = readHead(repo.gitdir).oid;
      if (head !== undefined) await repairIndex(repo.gitdir, head, (await readCommit(repo.gitdir, head)).tree);
    }
    return made;
  }));
  if (oid !== undefined) report.commits.push({ zone: repo.label, commit: oid.slice(0, 7) });
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}
