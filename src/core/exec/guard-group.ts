/**
 * Group files the caller may not change (mode `owner` of another member, `owner_ro`) stay as they
 * are, whatever a command does, in every sandbox mode:
 *
 * - by the kernel: before the command each such file is made read-only (0444). The command has no
 *   capabilities and may not chmod (the launcher's seccomp flag, RunRequest.noModeChanges), so
 *   writing or truncating it in place is refused by the kernel's file modes;
 * - by comparison: its name can still be unlinked, renamed or replaced in a writable folder (and
 *   where file modes do not bind, it could be written), so after the command each file's identity
 *   and times (device, inode, size, mtime, ctime) are compared with what they were, and a file
 *   that changed or went missing is restored from the repository's HEAD (server state out of the
 *   command's reach; the work tree equals HEAD before every command, since every modifying call
 *   commits), with its mode and times. What the command had put at its place is moved aside
 *   (`<name>.~N~`, put-back.ts): nothing the caller made is lost, it just does not replace another
 *   member's file.
 *
 * Modes are set per call and journalled (stash.ts: a hard link of each file is kept in the call's
 * stash, so its mode is set back wherever the command moved it): a kill leaves at worst read-only
 * files, which the next call, recovery or maintenance sets back, comparing content with HEAD.
 */
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite } from '../fs/atomic.js';
import { readBytes } from '../fs/read.js';
import { lstatIfAny } from '../fs/stat.js';
import { TimeSlice } from '../fs/slice.js';
import { moveAside, realFolders, type MovedAside } from '../fs/put-back.js';
import type { OwnershipRecord } from '../groups/access.js';
import { FILE_MODE, EXEC_MODE, toKey } from '../vcs/names.js';
import { readBlob, readCommit } from '../vcs/objects.js';
import { readHead } from '../vcs/refs.js';
import { repoFor } from '../vcs/repo.js';
import { entryAt } from '../vcs/history/trees.js';
import { closeStash, itemPath, openStash, safeRel, type Stash } from './stash.js';

const READ_ONLY = 0o444;

export interface GuardEntry {
  rel: string;
  owner: string;
  mode: OwnershipRecord['mode'];
  /** The file's permission bits before the command (set back afterwards). */
  perm: number;
}

/** What a command had done to a file it may not change, undone. */
export interface RestoredFile {
  path: string;
  owner: string;
  mode: OwnershipRecord['mode'];
  /** Where what the command had put at its place now is (the caller's version), if anything. */
  kept_as?: string;
}

export interface GuardReport {
  restored: RestoredFile[];
  /** Every zone-relative path the restore wrote or moved (for the commit). */
  touched: string[];
}

interface Baseline {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  atime: Date;
  mtime: Date;
}

export interface GroupGuard {
  files: number;
  /** Compares, restores what changed, sets the modes back; the stash is removed once done. */
  restore(): Promise<GuardReport>;
}

/** Makes the files the caller may not change read-only, remembering each (zone `root`, real; scope at `home`). */
export async function guardGroupFiles(home: string, root: string, label: string, locked: readonly OwnershipRecord[]): Promise<GroupGuard | undefined> {
  // As many files as the other members made: every loop yields within a slice.
  const slice = new TimeSlice();
  const entries: GuardEntry[] = [];
  for (const r of locked) {
    await slice.tick();
    const st = lstatIfAny(path.join(root, r.path));
    if (st?.isFile()) entries.push({ rel: r.path, owner: r.owner, mode: r.mode, perm: st.mode & 0o777 });
  }
  if (entries.length === 0) return undefined;
  const stash = openStash(home, 'guard', root, entries);
  const baselines: (Baseline | undefined)[] = [];
  try {
    // All links first, then all modes: a kill before the modes leaves links only (nothing to set back).
    for (let i = 0; i < entries.length; i++) {
      await slice.tick();
      fs.linkSync(path.join(root, entries[i]!.rel), itemPath(stash, i));
    }
    for (let i = 0; i < entries.length; i++) {
      await slice.tick();
      fs.chmodSync(itemPath(stash, i), READ_ONLY);
    }
    for (const e of entries) {
      await slice.tick();
      baselines.push(baseline(path.join(root, e.rel)));
    }
  } catch (err) {
    await restoreGuarded(root, label, stash, []).catch(() => undefined);
    throw err;
  }
  return { files: entries.length, restore: () => restoreGuarded(root, label, stash, baselines) };
}

function baseline(abs: string): Baseline | undefined {
  try {
    const st = fs.lstatSync(abs, { bigint: true });
    return { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, atime: st.atime, mtime: st.mtime };
  } catch {
    return undefined; // gone, or a folder on the way is a file now
  }
}

function same(a: Baseline | undefined, b: Baseline | undefined): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/**
 * Undoes a guard: each file whose identity or times differ from its baseline is restored from
 * HEAD. Without baselines (recovery after a kill) content is compared with HEAD instead. The
 * saved names' modes are set back and the stash removed.
 */
export async function restoreGuarded(root: string, label: string, stash: Stash<unknown>, baselines: readonly (Baseline | undefined)[]): Promise<GuardReport> {
  const report: GuardReport = { restored: [], touched: [] };
  const entries = stash.journal.entries as GuardEntry[];
  let left = 0;
  const slice = new TimeSlice();
  for (let i = 0; i < entries.length; i++) {
    await slice.tick();
    const entry = entries[i]!;
    const rel = safeRel(entry?.rel);
    const saved = itemPath(stash, i);
    if (!fs.existsSync(saved)) continue;
    if (rel === undefined) {
      left++; // a journal entry we cannot read: its saved name stays
      continue;
    }
    try {
      const abs = path.join(root, rel);
      const before = baselines[i];
      const now = baseline(abs);
      const changed = before !== undefined ? !same(before, now) : !(await equalsHead(root, label, rel, abs));
      // The file's own inode, wherever the command moved it, gets its mode back.
      fs.chmodSync(saved, typeof entry.perm === 'number' ? entry.perm & 0o777 : 0o600);
      if (changed) {
        const moved = await restoreFile(root, label, entry, saved, before);
        const aside = moved.find((m) => m.from === rel)?.to;
        report.restored.push({ path: rel, owner: entry.owner, mode: entry.mode, ...(aside !== undefined ? { kept_as: aside } : {}) });
        report.touched.push(rel, ...moved.flatMap((m) => [m.from, m.to]));
      }
      fs.rmSync(saved, { force: true });
    } catch {
      left++; // the disk refused: the stash stays, the next call or recovery tries again
    }
  }
  if (left === 0) closeStash(stash);
  return report;
}

/**
 * Puts the file back at its place: HEAD's content (or, when HEAD has no such file, its saved
 * inode), with its mode and times. Folders on the way are made real; what stands at the place,
 * unless it is the file's own inode changed in place, is moved aside.
 */
async function restoreFile(root: string, label: string, entry: GuardEntry, saved: string, before: Baseline | undefined): Promise<MovedAside[]> {
  const moved: MovedAside[] = [];
  const place = realFolders(root, entry.rel, moved);
  const there = baseline(place);
  const own = there !== undefined && before !== undefined && there.dev === before.dev && there.ino === before.ino;
  if (there !== undefined && !own) moveAside(root, place, moved);
  const head = await headFile(root, label, entry.rel);
  const perm = typeof entry.perm === 'number' ? entry.perm & 0o777 : 0o600;
  if (head !== undefined) atomicWrite(place, head, perm);
  else if (!own) fs.linkSync(saved, place); // no copy in HEAD: the file's own inode, as the command left it
  if (before !== undefined) fs.utimesSync(place, before.atime, before.mtime);
  return moved;
}

/** HEAD's content of a regular file of the zone, or undefined when HEAD has none. */
async function headFile(root: string, label: string, rel: string): Promise<Buffer | undefined> {
  const repo = repoFor({ root, label });
  if (!fs.existsSync(path.join(repo.gitdir, 'HEAD'))) return undefined;
  const oid = readHead(repo.gitdir).oid;
  if (oid === undefined) return undefined;
  const entry = await entryAt(repo, (await readCommit(repo.gitdir, oid)).tree, toKey(rel));
  if (entry === undefined || (entry.mode !== FILE_MODE && entry.mode !== EXEC_MODE)) return undefined;
  return readBlob(repo.gitdir, entry.oid);
}

/** Recovery's check (no baseline survives a kill): the file at `abs` holds HEAD's content. */
async function equalsHead(root: string, label: string, rel: string, abs: string): Promise<boolean> {
  const head = await headFile(root, label, rel);
  if (head === undefined) return true; // nothing to compare with: left as it is
  const st = lstatIfAny(abs);
  return st !== undefined && st.isFile() && st.size === head.length && readBytes(abs, { noFollow: true }).equals(head);
}
