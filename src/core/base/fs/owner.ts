/**
 * The rule for what the server writes into a zone whose commands run as the user's kernel identity
 * (src/core/services/ids): a file or folder the server makes takes the owner and group of the folder it lands
 * in, so the user's own commands can change it as anything they made themselves. In a folder the
 * server owns (its state, Uploads, every zone where identities are off) nothing changes. The atomic
 * writers (atomic.ts: named writes, output files, copies, restores) apply it to their temp file before
 * it is renamed into place, through its descriptor: no path is followed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readBytes } from './read.js';
import { TimeSlice } from './slice.js';

const me = typeof process.geteuid === 'function' ? process.geteuid() : -1;
/** Only a server that may give files away (root, or CAP_CHOWN) tries. */
const canChown = me === 0 || hasChownCapability();

function hasChownCapability(): boolean {
  try {
    const eff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readBytes('/proc/self/status').toString('utf8'))?.[1];
    return eff !== undefined && (BigInt(`0x${eff}`) & 1n) === 1n;
  } catch {
    return false;
  }
}

/** The folder's owner, when it is someone else. */
function foreignOwner(dir: string): { uid: number; gid: number } | undefined {
  if (!canChown) return undefined;
  const st = fs.statSync(dir, { throwIfNoEntry: false });
  return st && st.uid !== me ? { uid: st.uid, gid: st.gid } : undefined;
}

/** Gives the open file `fd` the owner of `dir` when that is not the server. */
export function inheritOwner(fd: number, dir: string): void {
  const owner = foreignOwner(dir);
  if (owner) fs.fchownSync(fd, owner.uid, owner.gid);
}

/**
 * A file some other writer made in place (SQLite's database, its -wal and -shm, through the file
 * engine): when it is the server's in a folder owned by someone else, it becomes that owner's. Not
 * followed if it is a link.
 */
export function adoptFile(file: string): void {
  const owner = foreignOwner(path.dirname(file));
  if (!owner) return;
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st?.isFile() && st.uid === me) fs.lchownSync(file, owner.uid, owner.gid);
}

/** mkdir -p, each folder made taking the owner of the one it is made in. */
export function mkdirInheriting(dir: string): void {
  if (!canChown) {
    fs.mkdirSync(dir, { recursive: true });
    return;
  }
  const missing: string[] = [];
  let at = dir;
  while (!fs.existsSync(at)) {
    missing.unshift(at);
    const up = path.dirname(at);
    if (up === at) break;
    at = up;
  }
  for (const d of missing) {
    try {
      fs.mkdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      continue;
    }
    const owner = foreignOwner(path.dirname(d));
    if (owner) fs.lchownSync(d, owner.uid, owner.gid);
  }
}

/**
 * A tree the server moved or copied into a folder of someone else's (a bridge, an extracted
 * archive): every entry given that folder's owner, in slices, no link followed (lchown). Nothing to
 * do in the server's own folders.
 */
export async function adoptTree(top: string): Promise<void> {
  const owner = foreignOwner(path.dirname(top));
  if (!owner) return;
  const slice = new TimeSlice();
  const todo = [top];
  while (todo.length > 0) {
    const p = todo.pop()!;
    await slice.tick();
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.uid !== owner.uid || st.gid !== owner.gid) fs.lchownSync(p, owner.uid, owner.gid);
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) todo.push(path.join(p, n));
  }
}
