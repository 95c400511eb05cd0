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
 * Every step after the command reaches the files beneath the zone by descriptor, never following a
 * link (fs/beneath.ts): a command that renames the folder holding such a file and leaves a link
 * under its old name does not make the comparison look through the link (the file is "gone" from
 * its place and restored there, the link moved aside), nor the restore write through it.
 *
 * Modes are set per call and journalled (stash.ts: a hard link of each file is kept in the call's
 * stash, so its mode is set back wherever the command moved it): a kill leaves at worst read-only
 * files, which the next call, recovery or maintenance sets back, comparing content with HEAD.
 *
 * Under identity separation (`kernel`: ids/group-owner.ts) the files already have their record's
 * owner and mode, every folder is sticky and the command may change no mode: the kernel refuses a
 * write, rename or removal of another member's file, so nothing is made read-only and nothing of
 * theirs is linked (a link and a mode change each cost the file a new ctime, which the commit after
 * the command would then hash: every command in a space of 1,000 such files paid ~90 ms for it).
 * Only the caller's own owner_ro files, which as their owner it may rename or remove, are saved in
 * the stash; the comparison after the command stays for every file, the second wall.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BeneathWalk, lstatBeneath, makeBeneath, readBeneath, replaceFileIn, type MovedAside } from '../../../base/fs/beneath.js';
import { TimeSlice } from '../../../base/fs/slice.js';
import type { OwnershipRecord } from '../../groups/access.js';
import { FILE_MODE, EXEC_MODE, toKey } from '../../../formats/git/names.js';
import { readBlob, readCommit } from '../../vcs/objects.js';
import { readHead } from '../../vcs/refs.js';
import { repoFor } from '../../vcs/repo.js';
import { entryAt } from '../../vcs/history/trees.js';
import { closeStash, itemPath, openStash, safeRel, type Stash } from './stash.js';

const READ_ONLY = 0o444;

export interface GuardEntry {
  rel: string;
  owner: string;
  mode: OwnershipRecord['mode'];
  /** The file's permission bits before the command (set back afterwards). */
  perm: number;
  /** Saved under identity separation: its mode was left as it was (nothing to set back). */
  modeKept?: boolean;
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
  /** 0 where the filesystem keeps no birth time: a new file that reuses the inode number has another. */
  birthNs: bigint;
  atime: Date;
  mtime: Date;
}

export interface GroupGuard {
  files: number;
  /** Compares, restores what changed, sets the modes back; the stash is removed once done. */
  restore(): Promise<GuardReport>;
}

/**
 * Makes the files the caller may not change read-only, remembering each (zone `root`, real; scope at
 * `home`); with `kernel`, only remembers them (see above).
 */
export async function guardGroupFiles(home: string, root: string, label: string, locked: readonly OwnershipRecord[], kernel?: { caller: string }): Promise<GroupGuard | undefined> {
  // As many files as the other members made: every loop yields within a slice.
  const slice = new TimeSlice();
  const entries: GuardEntry[] = [];
  // Before the command nothing changes the tree: each folder is opened once for all its files.
  const walk = new BeneathWalk(root);
  let opened: Stash<GuardEntry> | undefined;
  try {
    for (const r of locked) {
      await slice.tick();
      const st = walk.lstat(r.path);
      if (st?.isFile()) entries.push({ rel: r.path, owner: r.owner, mode: r.mode, perm: Number(st.mode & 0o777n), ...(kernel ? { modeKept: true } : {}) });
    }
    const saved = kernel ? entries.filter((e) => e.owner === kernel.caller) : entries;
    opened = saved.length === 0 ? undefined : await openStash(home, 'guard', root, saved);
  } catch (err) {
    walk.forget();
    throw err;
  }
  if (entries.length === 0) {
    walk.forget();
    return undefined;
  }
  const stash = opened;
  const unsaved = kernel ? entries.filter((e) => e.owner !== kernel.caller) : [];
  const baselines: (Baseline | undefined)[] = [];
  const unsavedBaselines: (Baseline | undefined)[] = [];
  try {
    if (stash !== undefined) {
      const saved = stash.journal.entries;
      // All links first, then all modes: a kill before the modes leaves links only (nothing to set back).
      for (let i = 0; i < saved.length; i++) {
        await slice.tick();
        const linked = walk.at(saved[i]!.rel, (dir, name) => {
          fs.linkSync(dir.child(name), itemPath(stash, i));
          return true;
        });
        if (linked === undefined) throw Object.assign(new Error(`a folder on the way to ${saved[i]!.rel} is not a real folder`), { code: 'ENOTDIR' });
      }
      for (let i = 0; i < saved.length; i++) {
        await slice.tick();
        if (!saved[i]!.modeKept) fs.chmodSync(itemPath(stash, i), READ_ONLY);
      }
      for (const e of saved) {
        await slice.tick();
        baselines.push(baseline(walk, e.rel));
      }
    }
    for (const e of unsaved) {
      await slice.tick();
      unsavedBaselines.push(baseline(walk, e.rel));
    }
  } catch (err) {
    walk.forget();
    if (stash !== undefined) await restoreGuarded(root, label, stash, []).catch(() => undefined);
    throw err;
  }
  walk.forget();
  return {
    files: entries.length,
    async restore() {
      const report = stash === undefined ? { restored: [], touched: [] } : await restoreGuarded(root, label, stash, baselines);
      const more = await restoreUnsaved(root, label, unsaved, unsavedBaselines);
      return { restored: [...report.restored, ...more.restored], touched: [...report.touched, ...more.touched] };
    },
  };
}

/**
 * The second wall for files nothing was saved of (identity separation: the kernel kept the command
 * from them): one that changed all the same is put back from HEAD, what stood there moved aside.
 */
async function restoreUnsaved(root: string, label: string, entries: readonly GuardEntry[], baselines: readonly (Baseline | undefined)[]): Promise<GuardReport> {
  const report: GuardReport = { restored: [], touched: [] };
  const walk = new BeneathWalk(root);
  const slice = new TimeSlice();
  try {
    for (let i = 0; i < entries.length; i++) {
      await slice.tick();
      const entry = entries[i]!;
      const before = baselines[i];
      if (same(before, baseline(walk, entry.rel))) continue;
      walk.forget();
      let moved: MovedAside[] | undefined;
      try {
        moved = await restoreFile(root, label, entry, undefined, before);
      } catch {
        continue; // the disk refused: the file stays as the command left it (its commit records it)
      }
      if (moved !== undefined) recordRestored(report, entry, entry.rel, moved);
    }
  } finally {
    walk.forget();
  }
  return report;
}

/** A restored file in the guard's report: where what stood there went, and every name it touched. */
function recordRestored(report: GuardReport, entry: GuardEntry, rel: string, moved: readonly MovedAside[]): void {
  const aside = moved.find((m) => m.from === rel)?.to;
  report.restored.push({ path: rel, owner: entry.owner, mode: entry.mode, ...(aside !== undefined ? { kept_as: aside } : {}) });
  report.touched.push(rel, ...moved.flatMap((m) => [m.from, m.to]));
}

/** The file at `rel`, reached without following any link (a link on the way: undefined, as gone). */
function baseline(walk: BeneathWalk, rel: string): Baseline | undefined {
  let st: fs.BigIntStats | undefined;
  try {
    st = walk.lstat(rel);
  } catch {
    return undefined; // gone, or a folder on the way is a file now
  }
  return st === undefined ? undefined : fromStat(st);
}

function fromStat(st: fs.BigIntStats): Baseline {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, birthNs: st.birthtimeNs, atime: st.atime, mtime: st.mtime };
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
  // After the command: folders opened once and reused until the restore itself changes the tree.
  const walk = new BeneathWalk(root);
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
      const before = baselines[i];
      const now = baseline(walk, rel);
      const changed = before !== undefined ? !same(before, now) : !(await equalsHead(root, label, rel));
      // The file's own inode, wherever the command moved it, gets its mode back.
      if (entry.modeKept !== true) fs.chmodSync(saved, typeof entry.perm === 'number' ? entry.perm & 0o777 : 0o600);
      if (changed) {
        walk.forget();
        recordRestored(report, entry, rel, (await restoreFile(root, label, entry, saved, before)) ?? []);
      }
      fs.rmSync(saved, { force: true });
    } catch {
      left++; // the disk refused: the stash stays, the next call or recovery tries again
    }
  }
  walk.forget();
  if (left === 0) closeStash(stash);
  return report;
}

/**
 * Puts the file back at its place: HEAD's content (or, when HEAD has no such file, its saved
 * inode), with its mode and times. Folders on the way are made real (a link standing for one is
 * moved aside, never followed); what stands at the place, unless it is the file's own inode changed
 * in place, is moved aside. Undefined, and nothing touched, when there is nothing to put back (no
 * copy in HEAD, none saved).
 */
async function restoreFile(root: string, label: string, entry: GuardEntry, saved: string | undefined, before: Baseline | undefined): Promise<MovedAside[] | undefined> {
  const moved: MovedAside[] = [];
  const head = await headFile(root, label, entry.rel);
  if (head === undefined && saved === undefined) return undefined; // nothing to put back: left as it is
  const dir = makeBeneath(root, path.posix.dirname(entry.rel) === '.' ? '' : path.posix.dirname(entry.rel), moved);
  try {
    const name = path.posix.basename(entry.rel);
    const st = dir.lstatBig(name);
    const there = st === undefined ? undefined : fromStat(st);
    // The same inode number is not enough: a file removed and another made reuses it at once (ext4).
    const own = there !== undefined && before !== undefined && there.dev === before.dev && there.ino === before.ino && there.birthNs === before.birthNs;
    if (there !== undefined && !own) dir.moveAside(name, moved);
    const perm = typeof entry.perm === 'number' ? entry.perm & 0o777 : 0o600;
    const place = dir.child(name);
    if (head !== undefined) await replaceFileIn(dir, name, head, perm);
    else if (!own && saved !== undefined) fs.linkSync(saved, place); // no copy in HEAD: the file's own inode, as the command left it
    if (before !== undefined) fs.lutimesSync(place, before.atime, before.mtime);
  } finally {
    dir.close();
  }
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

/** Recovery's check (no baseline survives a kill): the file at `rel`, reached without following any link, holds HEAD's content. */
async function equalsHead(root: string, label: string, rel: string): Promise<boolean> {
  const head = await headFile(root, label, rel);
  if (head === undefined) return true; // nothing to compare with: left as it is
  const st = lstatBeneath(root, rel);
  return st !== undefined && st.isFile() && st.size === BigInt(head.length) && readBeneath(root, rel)?.equals(head) === true;
}
