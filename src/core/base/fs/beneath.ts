/**
 * Beneath a zone, by descriptor: how every server step that runs after a command or script (the
 * group guard's comparison and restore, moving stdout_file/stderr_file into place, putting blocked
 * entries back) reaches a place in the zone. The command may have renamed any folder and left a
 * symbolic link under its old name, in the middle of a path or at its end; a step that used the
 * path would follow that link (to another folder, another member's file, outside the zone).
 *
 * Node has no openat(), so a folder is opened from the zone root one component at a time with
 * O_DIRECTORY | O_NOFOLLOW, each next one addressed as `/proc/self/fd/<fd of the folder>/<name>`:
 * the kernel jumps to the folder the descriptor holds and looks up one name, and O_NOFOLLOW
 * refuses a link in that name. Whatever the command renamed meanwhile, the descriptor is the folder
 * that really is at that place, and every later operation (lstat, rename, link, write) names its
 * entries through it. No link is ever followed, and nothing is reached outside the zone root.
 * Without /proc (not Linux) the same walk uses full paths and lstat: the command has ended by then,
 * so nothing moves during the walk, but a link made by a process that outlived it would not be seen.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { assertPublishable, fsyncOffLoop, TEMP_SUFFIX, writeAllOffLoop } from './atomic.js';

const C = fs.constants;
const DIR_FLAGS = C.O_RDONLY | (C.O_DIRECTORY ?? 0) | (C.O_NOFOLLOW ?? 0);

const PROC_FD = (() => {
  try {
    return process.platform === 'linux' && fs.statSync('/proc/self/fd').isDirectory();
  } catch {
    return false;
  }
})();

/** A newcomer moved aside: it was at `from`, it is now at `to` (zone-relative). */
export interface MovedAside {
  from: string;
  to: string;
}

/** A folder of a zone held open (or, without /proc, named by its real path). */
export class BeneathDir {
  constructor(
    /** Its descriptor (undefined without /proc). */
    readonly fd: number | undefined,
    /** Zone-relative path of the folder ('' for the root). */
    readonly rel: string,
    /** Absolute path where it was found (for the fallback only: never used to reach it with /proc). */
    private readonly abs: string,
  ) {}

  /** A path naming the entry `name` of this folder, good for one system call (no link on the way). */
  child(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/')) throw new Error(`not a name in a folder: ${JSON.stringify(name)}`);
    return this.fd !== undefined ? `/proc/self/fd/${this.fd}/${name}` : path.join(this.abs, name);
  }

  /** The path naming the folder itself (for fsync, readdir). */
  self(): string {
    return this.fd !== undefined ? `/proc/self/fd/${this.fd}` : this.abs;
  }

  /** Zone-relative path of the entry `name`. */
  relOf(name: string): string {
    return this.rel === '' ? name : `${this.rel}/${name}`;
  }

  /** What is at `name` (never following a link there), or undefined. */
  lstat(name: string): fs.Stats | undefined {
    try {
      return fs.lstatSync(this.child(name), { throwIfNoEntry: false });
    } catch {
      return undefined;
    }
  }

  lstatBig(name: string): fs.BigIntStats | undefined {
    try {
      return fs.lstatSync(this.child(name), { bigint: true, throwIfNoEntry: false });
    } catch {
      return undefined;
    }
  }

  /** The bytes of the regular file `name` (a link, FIFO or device there is not opened or followed), or undefined. */
  readFile(name: string): Buffer | undefined {
    let fd: number;
    try {
      fd = fs.openSync(this.child(name), C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
    } catch {
      return undefined;
    }
    try {
      if (!fs.fstatSync(fd).isFile()) return undefined;
      const chunks: Buffer[] = [];
      const buf = Buffer.alloc(1 << 16);
      for (let n = fs.readSync(fd, buf); n > 0; n = fs.readSync(fd, buf)) chunks.push(Buffer.from(buf.subarray(0, n)));
      return Buffer.concat(chunks);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The sub-folder `name`, if a real folder is there (a link is not entered). */
  enter(name: string): BeneathDir | undefined {
    const rel = this.relOf(name);
    const abs = path.join(this.abs, name);
    if (this.fd === undefined) return this.lstat(name)?.isDirectory() ? new BeneathDir(undefined, rel, abs) : undefined;
    try {
      return new BeneathDir(fs.openSync(this.child(name), DIR_FLAGS), rel, abs);
    } catch {
      return undefined; // missing, a link (ELOOP), a file (ENOTDIR): no folder here
    }
  }

  /** Moves whatever is at `name` to the first free `<name>.~N~` beside it (GNU's numbered-backup form), noting it. */
  moveAside(name: string, moved: MovedAside[]): void {
    let aside = '';
    for (let n = 1; ; n++) {
      aside = `${name}.~${n}~`;
      if (this.lstat(aside) === undefined) break;
    }
    fs.renameSync(this.child(name), this.child(aside));
    moved.push({ from: this.relOf(name), to: this.relOf(aside) });
  }

  /** The entry `name` made free: whatever stands there is moved aside. */
  makeRoom(name: string, moved: MovedAside[]): string {
    if (this.lstat(name) !== undefined) this.moveAside(name, moved);
    return this.child(name);
  }

  close(): void {
    if (this.fd !== undefined) {
      try {
        fs.closeSync(this.fd);
      } catch {
        // closed already
      }
    }
  }
}

function parts(rel: string): string[] {
  const list = rel.split('/').filter((p) => p !== '' && p !== '.');
  if (list.includes('..')) throw new Error(`not a place inside the zone: ${rel}`);
  return list;
}

/** The zone root itself (a real path, see zones.ts). */
export function openRoot(root: string): BeneathDir {
  return new BeneathDir(PROC_FD ? fs.openSync(root, DIR_FLAGS) : undefined, '', root);
}

/** The folder `relDir` of the zone, reached without following any link; undefined when the way is not all real folders. */
export function openBeneath(root: string, relDir: string): BeneathDir | undefined {
  let dir: BeneathDir | undefined = openRoot(root);
  for (const name of parts(relDir)) {
    const next: BeneathDir | undefined = dir.enter(name);
    dir.close();
    if (next === undefined) return undefined;
    dir = next;
  }
  return dir;
}

/**
 * The folder `relDir` of the zone, its way made real: a missing folder is made; anything else
 * standing where a folder belongs (a link, a file) is moved aside first (noted in `moved`). So the
 * place is where the path says, whatever the command made of it, and nothing it made is lost.
 */
export function makeBeneath(root: string, relDir: string, moved: MovedAside[], mode = 0o755): BeneathDir {
  let dir = openRoot(root);
  try {
    for (const name of parts(relDir)) {
      let next = dir.enter(name);
      if (next === undefined) {
        if (dir.lstat(name) !== undefined) dir.moveAside(name, moved);
        fs.mkdirSync(dir.child(name), mode);
        next = dir.enter(name);
        if (next === undefined) throw Object.assign(new Error(`the folder ${dir.relOf(name)} could not be made`), { code: 'EIO' });
      }
      dir.close();
      dir = next;
    }
  } catch (err) {
    dir.close();
    throw err;
  }
  return dir;
}

/** Folders a walk keeps open at most; past it they are closed and opened again as needed (descriptors are few). */
const WALK_OPEN_MAX = 128;

/**
 * Many places of one zone in one pass (the guard's thousand files of one folder): each folder is
 * opened once, by descriptor from the root as above, and reused for every entry in it. Only while
 * nothing changes the tree between two uses (before a command, or after it, between the server's
 * own changes: call `forget()` after each of them).
 */
export class BeneathWalk {
  private readonly dirs = new Map<string, BeneathDir | undefined>();
  constructor(private readonly root: string) {}

  /** The folder `relDir` ('' for the root), or undefined when the way is not all real folders. */
  dir(relDir: string): BeneathDir | undefined {
    if (this.dirs.has(relDir)) return this.dirs.get(relDir);
    if (this.dirs.size >= WALK_OPEN_MAX) this.forget();
    let found: BeneathDir | undefined;
    if (relDir === '') found = openRoot(this.root);
    else {
      const cut = relDir.lastIndexOf('/');
      const name = relDir.slice(cut + 1);
      if (name === '.' || name === '..' || name === '') throw new Error(`not a place inside the zone: ${relDir}`);
      const parent = this.dir(cut < 0 ? '' : relDir.slice(0, cut));
      found = parent?.enter(name);
    }
    this.dirs.set(relDir, found);
    return found;
  }

  /** Runs `fn` on the folder holding `rel` and the entry's name (undefined when the way is not all real folders). */
  at<T>(rel: string, fn: (dir: BeneathDir, name: string) => T): T | undefined {
    const list = parts(rel);
    if (list.length === 0) throw new Error('the zone root has no parent here');
    const dir = this.dir(list.slice(0, -1).join('/'));
    return dir === undefined ? undefined : fn(dir, list.at(-1)!);
  }

  lstat(rel: string): fs.BigIntStats | undefined {
    return this.at(rel, (dir, name) => dir.lstatBig(name));
  }

  /** Closes every folder held (the tree may have changed: the next use opens them again). */
  forget(): void {
    for (const d of this.dirs.values()) d?.close();
    this.dirs.clear();
  }
}

/** Runs `fn` on the folder holding `rel` and the entry's name (undefined when the way is not all real folders). */
export function atParent<T>(root: string, rel: string, fn: (dir: BeneathDir, name: string) => T): T | undefined {
  const list = parts(rel);
  if (list.length === 0) throw new Error('the zone root has no parent here');
  const dir = openBeneath(root, list.slice(0, -1).join('/'));
  if (dir === undefined) return undefined;
  try {
    return fn(dir, list.at(-1)!);
  } finally {
    dir.close();
  }
}

/** What is at `rel` in the zone, only if every folder on the way is a real one (a link is never followed, final or not). */
export function lstatBeneath(root: string, rel: string): fs.BigIntStats | undefined {
  return atParent(root, rel, (dir, name) => dir.lstatBig(name));
}

/** A regular file's bytes at `rel`, reached without following any link; undefined when it is not one. */
export function readBeneath(root: string, rel: string): Buffer | undefined {
  return atParent(root, rel, (dir, name) => dir.readFile(name));
}

/**
 * Replaces the entry `name` of `dir` with a regular file holding `data` (mode `mode`), atomically:
 * a temp file made exclusively in the same folder (never through a link), fsynced, renamed over it.
 * A link standing at `name` is replaced, not followed.
 */
export async function replaceFileIn(dir: BeneathDir, name: string, data: Uint8Array, mode: number): Promise<void> {
  const tmp = `.${name.slice(0, 180)}.${crypto.randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
  const fd = fs.openSync(dir.child(tmp), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode);
  try {
    await writeAllOffLoop(fd, data);
    fs.fchmodSync(fd, mode); // the umask took bits the file had
    await fsyncOffLoop(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(dir.child(tmp), { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    assertPublishable();
    fs.renameSync(dir.child(tmp), dir.child(name));
  } catch (err) {
    fs.rmSync(dir.child(tmp), { force: true });
    throw err;
  }
  await syncBeneath(dir);
}

/** fsync of a folder held open, on the thread pool (some filesystems refuse it: the rename is atomic all the same). */
export async function syncBeneath(dir: BeneathDir): Promise<void> {
  try {
    const fd = fs.openSync(dir.self(), C.O_RDONLY | (C.O_DIRECTORY ?? 0));
    try {
      await fsyncOffLoop(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // refused: the rename itself is still atomic
  }
}
