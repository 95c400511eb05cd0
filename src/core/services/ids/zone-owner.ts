/**
 * A user's zones belong to their kernel identity (issue 31, SPEC section 8): the layout, made on the
 * first command a user runs as that identity in a zone, and the conversion of what is already there.
 *
 *   base/                    server, 0711: no listing; access_auth.sqlite and the rest stay 0600/0700
 *   users/                   server, 0711: no listing, no inotify (read permission), only search
 *   users/<id>/              server:<user gid>, 0710: only the user (and the server) pass
 *   users/<id>/<Zone>/       server:<user gid>, 0710; its git/ and locks/ 0700 (server state)
 *   Storage|Documents/data/  the user's (uid:gid), every entry in it too (modes kept)
 *   Uploads/<conv>/          server:<user gid>; folders 0750, files g+r: readable, never theirs to
 *                            change (no chmod: they are not the owner)
 *   users/<id>/.identity/    server, 0700: one stamp per converted zone, naming the uid
 *
 * Crash-safe and idempotent: the walk only sets owners and modes (each step can run again), and the
 * stamp is written once it is complete; without a stamp, the next call walks again. The walk yields
 * to the event loop in slices (TimeSlice): a zone of 30,000 files never stalls other users.
 * After it, what the server writes in the zone takes the folder's owner (src/core/base/fs/owner.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { atomicWrite } from '../../base/fs/atomic.js';
import { readBytes } from '../../base/fs/read.js';
import { TimeSlice } from '../../base/fs/slice.js';
import type { Zone } from '../../base/zones/zones.js';
import type { UserIds } from './allocate.js';

const me = typeof process.geteuid === 'function' ? process.geteuid() : 0;
const myGid = typeof process.getegid === 'function' ? process.getegid() : 0;

/** Zones this process has seen converted (their stamp read or written), by stamp path. */
const done = new Set<string>();

/** Sets a folder's owner and mode unless it already has them; never follows a link. */
function setDir(dir: string, uid: number, gid: number, mode: number): void {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st?.isDirectory()) return;
  if (st.uid !== uid || st.gid !== gid) fs.lchownSync(dir, uid, gid);
  if ((st.mode & 0o7777) !== mode) fs.chmodSync(dir, mode);
}

/** Closes a folder of the server's to everyone else (0700 or 0711), if it is the server's. */
function closeDir(dir: string, mode: number): void {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (st?.isDirectory() && st.uid === me && (st.mode & 0o777) !== mode) fs.chmodSync(dir, mode);
}

/**
 * Every entry under `root` (and root itself) given to `uid:gid`, or (`readOnly`) the server's with the
 * user's group reading it; sliced, no link followed.
 */
async function walkOwn(root: string, ids: UserIds, readOnly: boolean): Promise<void> {
  const slice = new TimeSlice();
  const todo = [root];
  while (todo.length > 0) {
    const dir = todo.pop()!;
    await slice.tick();
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      throw err;
    }
    for (const p of [dir, ...names.map((n) => path.join(dir, n))]) {
      await slice.tick();
      const st = fs.lstatSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (p !== dir && st.isDirectory()) {
        todo.push(p);
        continue;
      }
      if (readOnly) {
        if (st.uid !== me || st.gid !== ids.gid) fs.lchownSync(p, me, ids.gid);
        if (st.isSymbolicLink()) continue;
        const mode = st.isDirectory() ? 0o750 : (st.mode & 0o7777 & ~0o7027) | 0o040;
        if ((st.mode & 0o7777) !== mode) fs.chmodSync(p, mode);
      } else if (st.uid !== ids.uid || st.gid !== ids.gid) {
        fs.lchownSync(p, ids.uid, ids.gid);
      }
    }
  }
}

/** The folders from `top` down to `dir` (both included), when `dir` is beneath `top`. */
function chain(top: string, dir: string): string[] {
  const rel = path.relative(top, dir);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return [];
  const out = [top];
  let at = top;
  for (const part of rel.split(path.sep).filter(Boolean)) out.push((at = path.join(at, part)));
  return out;
}

/**
 * Makes `zone` (a personal zone of `userId`, or a folder made for one command under it: a locked
 * edit's scratch folder) the user's, as the layout above says. `scratch`: the folder the command
 * runs in instead of the zone (always walked: it is made for the call). With `mayConvert` false (a
 * call without the call lock), a zone not yet converted is left as it is: false then.
 */
export async function claimZone(base: string, userId: string, zone: Zone, ids: UserIds, scratch?: string, mayConvert = true): Promise<boolean> {
  const users = path.join(base, 'users');
  const home = path.join(users, userId);
  closeDir(base, 0o711);
  closeDir(users, 0o711);
  setDir(home, me, ids.gid, 0o710);
  // A locked edit's view has no workBase: its scratch folder lies in <zone folder>/scratch/.
  const first = scratch === undefined ? undefined : path.relative(home, scratch).split(path.sep)[0];
  const top = zone.name === 'uploads' ? path.join(home, 'Uploads') : (zone.workBase ?? (first && first !== '..' ? path.join(home, first) : undefined));
  if (top === undefined || chain(home, top).length === 0) throw new Error(`claimZone: ${zone.root} is not a zone folder of ${home}`);
  setDir(top, me, ids.gid, 0o710);
  for (const state of ['git', 'locks']) closeDir(path.join(top, state), 0o700);
  if (scratch !== undefined) {
    // The folders holding it (scratch/) are passed through; the scratch folder is the user's.
    for (const dir of chain(top, path.dirname(scratch)).slice(1)) setDir(dir, me, ids.gid, 0o710);
    await walkOwn(scratch, ids, false);
    return true;
  }
  const stamps = path.join(home, '.identity');
  const stamp = path.join(stamps, zone.name === 'uploads' ? `Uploads-${path.basename(zone.root)}` : zone.label);
  if (done.has(`${stamp}\0${ids.uid}`)) return true;
  if (readStamp(stamp) === ids.uid) {
    done.add(`${stamp}\0${ids.uid}`);
    return true;
  }
  if (!mayConvert) return false;
  if (zone.name === 'uploads') {
    await walkOwn(zone.root, ids, true);
  } else {
    await walkOwn(zone.root, ids, false);
    // The data root itself stays open to its owner only.
    setDir(zone.root, ids.uid, ids.gid, fs.lstatSync(zone.root).mode & 0o7777 & ~0o077);
  }
  fs.mkdirSync(stamps, { recursive: true, mode: 0o700 });
  if (fs.lstatSync(stamps).uid === me) fs.chownSync(stamps, me, myGid);
  await atomicWrite(stamp, `${ids.uid}\n`, 0o600);
  done.add(`${stamp}\0${ids.uid}`);
  return true;
}

function readStamp(stamp: string): number | undefined {
  try {
    return Number(readBytes(stamp).toString('utf8').trim());
  } catch {
    return undefined;
  }
}

/** Tests only: forget which zones this process saw converted. */
export function forgetClaims(): void {
  done.clear();
}
