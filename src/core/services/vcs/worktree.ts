/**
 * Turning working-tree entries into objects: a file becomes a blob (mode 100755 when its owner may
 * execute it), a symbolic link becomes a link blob holding its text (never followed), a folder
 * becomes a tree of what it holds. Anything else (fifo, socket, device) is not tracked.
 */
import { TimeSlice } from '../../base/fs/slice.js';
import { DirCursor } from '../../base/fs/dircursor.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { isInside } from '../../base/paths/resolve.js';
import { EXEC_MODE, FILE_MODE, LINK_MODE, TREE_MODE } from '../../formats/git/names.js';
import { isTrackableName } from './names.js';
import { type TreeEntry } from '../../formats/git/objects.js';
import { hasLoose, loosePath, tempObjectPath, writeObject, writeTreeSliced } from './objects.js';
import { writeAll } from '../../base/fs/read.js';
import { createStateFile, makeStateDir, renameState } from '../../base/fs/nofollow.js';
import { listSliced } from '../../base/fs/list.js';

/** A file or link as it went into the history, with the stat the index records for it. */
export interface WorkBlob {
  /** Zone-relative UTF-8 path. */
  path: string;
  mode: string;
  oid: string;
  stat: fs.BigIntStats;
}

/**
 * Files above this size are hashed and deflated in chunks (zlib on the thread pool, a turn of the
 * event loop between chunks) instead of being loaded and deflated whole, which holds the loop for
 * tens of ms per 10 MB.
 */
const STREAM_ABOVE = 1024 * 1024;
const CHUNK = 1024 * 1024;

/**
 * The blob of one working-tree entry, written to the object store; undefined when there is nothing
 * trackable at `abs` (missing, a folder, a special file).
 */
export async function blobFor(gitdir: string, abs: string, rel: string): Promise<WorkBlob | undefined> {
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(abs, { bigint: true });
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink()) {
    // git fsck refuses a .gitmodules link; such a link simply stays out of the history.
    if (path.basename(rel) === '.gitmodules') return undefined;
    let text: Buffer;
    try {
      text = Buffer.from(fs.readlinkSync(abs, { encoding: 'buffer' }));
    } catch {
      return undefined; // replaced or removed since the lstat: what is there now is not a link
    }
    return { path: rel, mode: LINK_MODE, oid: writeObject(gitdir, 'blob', text), stat: st };
  }
  if (!st.isFile()) return undefined;
  let fd: number;
  try {
    // No-follow and non-blocking: if the entry was swapped for a link or a fifo since lstat, we do not read through it.
    fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const fst = fs.fstatSync(fd, { bigint: true });
    if (!fst.isFile()) return undefined;
    const mode = (fst.mode & 0o100n) !== 0n ? EXEC_MODE : FILE_MODE;
    const oid = fst.size > BigInt(STREAM_ABOVE) ? await writeLargeBlob(gitdir, fd, Number(fst.size)) : writeObject(gitdir, 'blob', readAllFd(fd, Number(fst.size)));
    return { path: rel, mode, oid, stat: fst };
  } finally {
    fs.closeSync(fd);
  }
}

function readAllFd(fd: number, size: number): Buffer {
  const chunks: Buffer[] = [];
  let buf = Buffer.allocUnsafe(Math.max(size, 1));
  let got = 0;
  for (;;) {
    if (got === buf.length) {
      chunks.push(buf);
      buf = Buffer.allocUnsafe(CHUNK);
      got = 0;
    }
    const n = fs.readSync(fd, buf, got, buf.length - got, null);
    if (n === 0) break;
    got += n;
  }
  chunks.push(buf.subarray(0, got));
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * A big file in one pass: hash and deflate the same bytes as they are read, straight into a temp
 * object file. The header needs the size up front, so a file that changes size meanwhile is read again.
 */
async function writeLargeBlob(gitdir: string, fd: number, size: number): Promise<string> {
  const objects = path.join(gitdir, 'objects');
  for (let attempt = 0; ; attempt++) {
    const tmp = tempObjectPath(objects);
    const out = createStateFile(tmp, 0o444);
    let total = 0;
    let oid: string;
    try {
      const hash = crypto.createHash('sha1');
      const deflate = zlib.createDeflate({ level: 1 });
      deflate.on('data', (c: Buffer) => writeAll(out, c));
      const ended = new Promise<void>((resolve, reject) => {
        deflate.on('end', resolve);
        deflate.on('error', reject);
      });
      const header = Buffer.from(`blob ${size}\0`);
      hash.update(header);
      deflate.write(header);
      const slice = new TimeSlice();
      for (;;) {
        await slice.tick();
        const chunk = Buffer.allocUnsafe(CHUNK);
        const n = fs.readSync(fd, chunk, 0, CHUNK, total);
        if (n === 0) break;
        total += n;
        hash.update(chunk.subarray(0, n));
        if (!deflate.write(chunk.subarray(0, n))) await new Promise((resolve) => deflate.once('drain', resolve));
      }
      deflate.end();
      await ended;
      oid = hash.digest('hex');
    } catch (err) {
      fs.closeSync(out);
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    fs.closeSync(out);
    if (total !== size) {
      fs.rmSync(tmp, { force: true });
      if (attempt >= 2) throw new Error('a file kept changing while it was committed');
      size = total;
      continue;
    }
    if (hasLoose(gitdir, oid)) {
      fs.rmSync(tmp, { force: true });
    } else {
      makeStateDir(path.dirname(loosePath(gitdir, oid)));
      renameState(tmp, loosePath(gitdir, oid));
    }
    return oid;
  }
}

/**
 * The tree of a folder (written with all its blobs and subtrees), or undefined when it holds
 * nothing trackable. Each file that went in is appended to `blobs` (for the index). The user shapes
 * the folder (thousands of levels, or 30,000 files in one folder): the walk yields to the event loop
 * between entries once a slice is used up, and an entry that vanishes or changes kind meanwhile is
 * simply what the folder holds now.
 */
export async function folderTree(gitdir: string, absDir: string, relDir: string, blobs: WorkBlob[], slice = new TimeSlice()): Promise<string | undefined> {
  await slice.tick();
  let names: fs.Dirent[];
  try {
    names = await listSliced(absDir, slice);
  } catch {
    return undefined;
  }
  const entries: TreeEntry[] = [];
  for (const d of names) {
    await slice.tick();
    if (!isTrackableName(d.name)) continue;
    const abs = path.join(absDir, d.name);
    const rel = relDir === '' ? d.name : `${relDir}/${d.name}`;
    if (d.isDirectory()) {
      const sub = await folderTree(gitdir, abs, rel, blobs, slice);
      if (sub !== undefined) entries.push({ mode: TREE_MODE, name: Buffer.from(d.name).toString('latin1'), oid: sub });
      continue;
    }
    // A folder can hold thousands of files: yield between them too (lock heartbeats and other users' calls wait otherwise).
    await slice.tick();
    const blob = await blobFor(gitdir, abs, rel);
    if (blob === undefined) continue;
    blobs.push(blob);
    entries.push({ mode: blob.mode, name: Buffer.from(d.name).toString('latin1'), oid: blob.oid });
  }
  return entries.length === 0 ? undefined : writeTreeSliced(gitdir, entries, slice);
}

/**
 * The path of what `rel` names on disk, with folder links on the way replaced by their real
 * location ("alias/a.txt" → "real/a.txt"): the history stores links as links, so a change made
 * through one belongs to the real path. Undefined when the path leads outside the root or into an
 * untrackable name. The last component is never resolved (a link is itself the entry).
 */
export function canonicalRel(root: string, rel: string, folders?: Map<string, string | undefined>): string | undefined {
  if (rel === '') return '';
  const cut = rel.lastIndexOf('/');
  const folderRel = cut < 0 ? '' : rel.slice(0, cut);
  // Paths of one call share their folders (30,000 files of one folder): each folder is walked once.
  let current = folders?.get(folderRel);
  if (current === undefined && !folders?.has(folderRel)) {
    current = realFolder(root, folderRel);
    folders?.set(folderRel, current);
  }
  if (current === undefined) return undefined;
  const abs = path.join(current, rel.slice(cut + 1));
  if (abs === root || !isInside(abs, root)) return undefined;
  const out = path.relative(root, abs).split(path.sep).join('/');
  return out.split('/').every(isTrackableName) ? out : undefined;
}

/** Where the folder `rel` really is (links on the way replaced), or undefined when that leads outside. */
function realFolder(root: string, rel: string): string | undefined {
  if (rel === '') return root;
  const parts = rel.split('/');
  // One component at a time at constant cost (fs/dircursor.ts), whatever the depth.
  const cursor = new DirCursor(root);
  try {
    let i = 0;
    for (; i < parts.length; i++) {
      const st = cursor.lstat(parts[i]!);
      if (st === undefined) break; // the rest does not exist (any more): keep it as written
      if (st.isSymbolicLink()) {
        let real: string;
        try {
          real = fs.realpathSync(path.join(cursor.here, parts[i]!));
        } catch {
          return undefined;
        }
        if (!isInside(real, root)) return undefined;
        cursor.reset(real);
      } else {
        cursor.enter(parts[i]!);
      }
    }
    return path.join(cursor.here, ...parts.slice(i));
  } finally {
    cursor.close();
  }
}
