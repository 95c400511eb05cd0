/**
 * A group space under identity separation (issue 31, "Group ownership as file permissions"; SPEC
 * section 11 "Ownership is the kernel's"): members' commands run as their own uid with the group's gid
 * (for-call.ts), and the ownership record of each file is expressed as its owner and mode, so the
 * kernel refuses what the record refuses while the command runs, not after it:
 *
 *   base/, groups/             server, 0711: no listing
 *   groups/<id>/               server:<group gid>, 0710; git/ and locks/ 0700 (server state)
 *   data/ and every folder     server:<group gid>, 03770 (setgid: what is made in it is the group's;
 *                              sticky: a member renames, replaces or deletes only their own files)
 *   a file, mode owner         <owner uid>:<group gid>, 0640 (0750 executable): owner writes, group reads
 *   a file, mode group / none  <owner uid or server>:<group gid>, 0660 (0770): every member writes
 *                              in place (where fs.protected_regular=2, an O_CREAT open of another
 *                              member's file in these group-writable sticky folders is refused: the
 *                              owner keeps the right to rename and delete their file, at that cost)
 *   a file, mode owner_ro      <owner uid>:<group gid>, 0440 (0550): nobody writes
 *   groups/<id>/.identity      server, 0600: the stamp of the first complete conversion
 *
 * The command itself may change no mode or owner (the launcher's filter, noModeChanges), so the owner
 * cannot turn their owner_ro file writable behind the record's back. Owners and modes are set here,
 * by descriptor (O_NOFOLLOW, the type checked on the open file), in one place:
 * - before each command (syncGroupSpace): the first time, every folder and file (in slices, each step
 *   repeatable, the stamp written once complete: a crash walks again); afterwards every record's file
 *   and the folders holding them (what the server wrote since: named writes, copies, restores,
 *   set_mode, chown);
 * - after each command (takeOverFolders): a folder the command made becomes the server's (sticky,
 *   setgid), so its maker cannot later remove another member's file placed in it.
 * The after-call guard (exec/guards/guard-group.ts) stays as the second wall.
 */
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite } from '../../base/fs/atomic.js';
import { readBytes } from '../../base/fs/read.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { allRecords, type OwnershipRecord } from '../groups/access.js';
import type { Zone } from '../../base/zones/zones.js';
import { userIds } from './allocate.js';
import type { IdRange } from './range.js';

const me = typeof process.geteuid === 'function' ? process.geteuid() : 0;

/** The mode of every folder of a group space: group rwx, setgid, sticky. */
export const GROUP_DIR_MODE = 0o3770;

/** The permission bits a file with this record has (exec: the file is executable). */
export function groupFileMode(mode: OwnershipRecord['mode'] | undefined, exec: boolean): number {
  const bits = mode === 'owner' ? 0o640 : mode === 'owner_ro' ? 0o440 : 0o660;
  return exec ? bits | ((bits & 0o444) >> 2) : bits;
}

const O_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;

/**
 * Sets `uid:gid` and `mode` on the entry at `abs` through a descriptor opened without following a
 * link (a link or special file is left alone). `uid` undefined: the owner is kept.
 */
function setByFd(abs: string, uid: number | undefined, gid: number, mode: (st: fs.Stats) => number | undefined, dirs: boolean): void {
  let fd: number;
  try {
    fd = fs.openSync(abs, O_FLAGS | (dirs ? fs.constants.O_DIRECTORY : 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENXIO') return;
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (dirs ? !st.isDirectory() : !st.isFile()) return;
    const owner = uid ?? st.uid;
    if (st.uid !== owner || st.gid !== gid) fs.fchownSync(fd, owner, gid);
    const want = mode(st);
    // chown clears setuid/setgid bits: the mode is set after it.
    if (want !== undefined && (fs.fstatSync(fd).mode & 0o7777) !== want) fs.fchmodSync(fd, want);
  } finally {
    fs.closeSync(fd);
  }
}

function setDir(abs: string, gid: number, mode: number): void {
  setByFd(abs, me, gid, () => mode, true);
}

/** A file given the owner and mode its record says (no record: mode group, owner kept). */
function setFile(abs: string, gid: number, rec: OwnershipRecord | undefined, ownerUid: number | undefined): void {
  // The usual case (nothing to change) costs one lstat; a change is made through a descriptor.
  const st = fs.lstatSync(abs, { throwIfNoEntry: false });
  if (!st?.isFile()) return;
  if ((ownerUid === undefined || st.uid === ownerUid) && st.gid === gid && (st.mode & 0o7777) === groupFileMode(rec?.mode, (st.mode & 0o100) !== 0)) return;
  setByFd(abs, ownerUid, gid, (st) => groupFileMode(rec?.mode, (st.mode & 0o100) !== 0), false);
}

/** Closes a folder of the server's to everyone else (0700 or 0711), if it is the server's. */
function closeDir(dir: string, mode: number): void {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (st?.isDirectory() && st.uid === me && (st.mode & 0o777) !== mode) fs.chmodSync(dir, mode);
}

/** Group spaces this process has seen converted, by stamp path and gid. */
const done = new Set<string>();

/** Resolves owners' uids, each allocated once. */
function ownerUids(base: string, range: IdRange): (owner: string) => Promise<number> {
  const seen = new Map<string, Promise<number>>();
  return (owner) => {
    let uid = seen.get(owner);
    if (uid === undefined) seen.set(owner, (uid = userIds(base, range, owner).then((ids) => ids.uid)));
    return uid;
  };
}

/**
 * A locked edit's scratch folder in a group space (`<home>/scratch/<conv>-…`, made by the server a
 * moment ago, holding only the working copy): the member's, reached through the space's home, so
 * the command runs as the member like any other of theirs. Nothing of the space is in it.
 */
export async function claimGroupScratch(base: string, home: string, scratch: string, uid: number, gid: number): Promise<void> {
  closeDir(base, 0o711);
  closeDir(path.join(base, 'groups'), 0o711);
  setDir(home, gid, 0o710);
  const rel = path.relative(home, scratch).split(path.sep);
  if (rel.length !== 2 || rel[0] !== 'scratch') throw new Error(`claimGroupScratch: ${scratch} is not a scratch folder of ${home}`);
  setDir(path.join(home, 'scratch'), gid, 0o710);
  // The scratch folder and what it holds (the folders of the file's path, the working copy's link).
  const own = async (abs: string): Promise<void> => {
    const st = fs.lstatSync(abs);
    if (st.isDirectory()) {
      setByFd(abs, uid, gid, () => 0o700, true);
      for (const name of fs.readdirSync(abs)) await own(path.join(abs, name));
    } else if (st.isFile()) setByFd(abs, uid, gid, (f) => f.mode & 0o700, false);
  };
  await own(scratch);
}

/**
 * Before a command in a group space: the layout above, every record's file given its owner and mode,
 * and the first time every folder and file (conversion of a space made before identities).
 */
export async function syncGroupSpace(base: string, range: IdRange, zone: Zone, gid: number): Promise<void> {
  const g = zone.group;
  if (g === undefined) throw new Error('syncGroupSpace: not a group space');
  const home = path.dirname(zone.root);
  closeDir(base, 0o711);
  closeDir(path.join(base, 'groups'), 0o711);
  setDir(home, gid, 0o710);
  for (const state of ['git', 'locks']) closeDir(path.join(home, state), 0o700);
  const uidOf = ownerUids(base, range);
  const records = await allRecords(g.base, g.id);
  const slice = new TimeSlice();
  const stamp = path.join(home, '.identity');
  const key = `${stamp}\0${gid}`;
  if (!done.has(key) && readStamp(stamp) !== gid) {
    const byPath = new Map(records.map((r) => [r.path, r]));
    await walkAll(zone.root, async (rel, isDir) => {
      await slice.tick();
      const abs = rel === '' ? zone.root : path.join(zone.root, rel);
      if (isDir) return setDir(abs, gid, GROUP_DIR_MODE);
      const rec = byPath.get(rel);
      setFile(abs, gid, rec, rec ? await uidOf(rec.owner) : me);
    });
    await atomicWrite(stamp, `${gid}\n`, 0o600);
    done.add(key);
    return;
  }
  done.add(key);
  setDir(zone.root, gid, GROUP_DIR_MODE);
  // The folders holding each record's file too: one the server made since (a named write's new
  // folder, under umask 077) is the group's to pass and write in.
  const folders = new Set<string>(['']);
  for (const rec of records) {
    await slice.tick();
    for (let dir = path.posix.dirname(rec.path); dir !== '.' && !folders.has(dir); dir = path.posix.dirname(dir)) {
      folders.add(dir);
      fixDir(zone.root, dir, gid);
    }
    setFile(path.join(zone.root, rec.path), gid, rec, await uidOf(rec.owner));
  }
}

/** Every entry under `root` (root included, as ''), folders before what they hold; no link followed. */
async function walkAll(root: string, visit: (rel: string, isDir: boolean) => Promise<void>): Promise<void> {
  const todo = [''];
  while (todo.length > 0) {
    const rel = todo.pop()!;
    await visit(rel, true);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(rel === '' ? root : path.join(root, rel), { withFileTypes: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw err;
    }
    for (const e of entries) {
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) todo.push(child);
      else if (e.isFile()) await visit(child, false);
    }
  }
}

/**
 * After a command in a group space: every folder at or below the paths it changed, and the folders
 * holding them, becomes the server's again (sticky, setgid), so a folder's maker cannot later remove
 * another member's file placed in it; every file there gets the group's gid and the mode its record
 * says (no record yet: mode group; the owner is kept, the next sync sets it from the record), since
 * commands run with umask 077 and the group must read what a member made. `changed` holds
 * zone-relative paths; '' (or undefined: not known) means the whole space.
 */
export async function takeOverFolders(root: string, gid: number, changed: readonly string[] | undefined, records: () => Promise<readonly OwnershipRecord[]>): Promise<void> {
  const slice = new TimeSlice();
  const whole = changed === undefined || changed.includes('');
  const tops = whole ? [''] : [...new Set(changed.map((c) => path.posix.dirname(c)).map((d) => (d === '.' ? '' : d)))];
  const seen = new Set<string>();
  for (const top of tops) {
    // The folders holding a changed path (a new folder's parents may be new too).
    const parts = top === '' ? [] : top.split('/');
    for (let i = 0; i <= parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      if (seen.has(rel)) continue;
      seen.add(rel);
      await slice.tick();
      fixDir(root, rel, gid);
    }
  }
  let byPath: Map<string, OwnershipRecord> | undefined;
  const recordOf = async (rel: string) => (byPath ??= new Map((await records()).map((r) => [r.path, r]))).get(rel);
  // Changed paths themselves and everything below the folders among them.
  for (const rel of whole ? [''] : changed) {
    await slice.tick();
    const abs = rel === '' ? root : path.join(root, rel);
    const st = fs.lstatSync(abs, { throwIfNoEntry: false });
    if (st?.isFile()) {
      setFile(abs, gid, await recordOf(rel), undefined);
      continue;
    }
    if (!st?.isDirectory()) continue;
    await walkAll(abs, async (sub, isDir) => {
      await slice.tick();
      if (isDir) return fixDir(abs, sub, gid);
      const full = rel === '' ? sub : `${rel}/${sub}`;
      setFile(path.join(abs, sub), gid, await recordOf(full), undefined);
    });
  }
}

function fixDir(root: string, rel: string, gid: number): void {
  const abs = rel === '' ? root : path.join(root, rel);
  const st = fs.lstatSync(abs, { throwIfNoEntry: false });
  if (!st?.isDirectory()) return;
  if (st.uid === me && st.gid === gid && (st.mode & 0o7777) === GROUP_DIR_MODE) return;
  setDir(abs, gid, GROUP_DIR_MODE);
}

function readStamp(stamp: string): number | undefined {
  try {
    return Number(readBytes(stamp).toString('utf8').trim());
  } catch {
    return undefined;
  }
}

/** Tests only: forget which spaces this process saw converted. */
export function forgetGroupClaims(): void {
  done.clear();
}
