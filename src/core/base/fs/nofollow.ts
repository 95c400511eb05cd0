/**
 * Server state (the repositories of versioned zones, lock files, change stamps, usage records) is
 * read and written here without ever following a symbolic link, and special files are refused.
 * No command can reach these folders (they lie outside every zone), so nothing should ever plant a
 * link there; if something does (a bug, an admin's hand, a future way in), the server must not read
 * another user's files through it or write into another user's state: the access fails with
 * IO_ERROR instead.
 *
 * How: a file is opened with O_NOFOLLOW (a final link fails) and O_NONBLOCK (a FIFO cannot hang
 * the server), then `/proc/self/fd/N` says where the descriptor really is: it must be exactly the
 * path asked for, so no folder on the way was a link either, and fstat must say "regular file".
 * A folder is checked the same way (O_PATH, no follow) before anything is created in it or read
 * from it. The paths given must be real paths (no link in the server's own folders above them:
 * zone roots are real paths, see zones.ts). Without /proc (not Linux) the real path of the folder
 * is compared instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../errors.js';
import { readAllFd, writeAll } from './read.js';
import { realLocation } from './dircursor.js';

const C = fs.constants;
const PROC = (() => {
  try {
    return fs.statSync('/proc/self/fd').isDirectory();
  } catch {
    return false;
  }
})();

/** The refusal: never another user's data, never a hang, a clear IO error. */
function unsafeState(abs: string, what: string): Error {
  return shedError('IO_ERROR', `Fileshed found ${what} among its own files (${path.basename(path.dirname(abs))}/${path.basename(abs)}) and did not follow it; nothing was read or written there.`, {
    details: { reason: 'UNSAFE_SERVER_STATE' },
    hint: 'An admin must look at the storage (the server state of this space was changed outside Fileshed).',
  });
}

function code(err: unknown): string | undefined {
  return err !== null && typeof err === 'object' && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

function missing(err: unknown): boolean {
  const c = code(err);
  return c === 'ENOENT' || c === 'ENOTDIR';
}

/** Where descriptor `fd` really is (undefined without /proc). */
function fdPath(fd: number): string | undefined {
  if (!PROC) return undefined;
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** True when the descriptor opened for `abs` is really at `abs` (no folder on the way was a link). */
function isAt(fd: number, abs: string): boolean {
  const real = fdPath(fd);
  if (real !== undefined) return real === abs;
  try {
    return fs.realpathSync.native(path.dirname(abs)) === path.dirname(abs);
  } catch {
    return false;
  }
}

/**
 * Throws unless `dir` is a real folder reached through real folders; false when it does not exist
 * (and the nearest folder above it that exists is a real one: a dangling link on the way is refused too).
 */
export function checkStateDir(dir: string): boolean {
  const st = lstatOrUndefined(dir);
  if (st === undefined) {
    checkMissing(dir);
    return false;
  }
  if (!st.isDirectory()) throw unsafeState(dir, st.isSymbolicLink() ? 'a symbolic link' : 'a special file');
  const real = PROC ? realLocation(dir, false) : safeRealpath(dir);
  if (real !== undefined && real !== dir) throw unsafeState(dir, 'a symbolic link on the way');
  return true;
}

/** `abs` does not exist: the nearest existing folder above it must be real (not a link that leads nowhere). */
function checkMissing(abs: string): void {
  for (let up = path.dirname(abs); up !== path.dirname(up); up = path.dirname(up)) {
    if (lstatOrUndefined(up) !== undefined) {
      checkStateDir(up);
      return;
    }
  }
}

function safeRealpath(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    // throwIfNoEntry: a missing path (the common case for optional state) costs no exception.
    return fs.lstatSync(p, { throwIfNoEntry: false });
  } catch (err) {
    if (missing(err)) return undefined;
    throw err;
  }
}

/** A regular file's bytes, or undefined when nothing is there; a link or special file is refused. */
export function readStateFile(abs: string): Buffer | undefined {
  const fd = openStateFile(abs, C.O_RDONLY);
  if (fd === undefined) return undefined;
  try {
    return readAllFd(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Opens a regular file of server state with `flags` (O_NOFOLLOW and O_NONBLOCK added): never
 * through a link, never a special file. Undefined when it does not exist (and `flags` do not create it).
 */
export function openStateFile(abs: string, flags: number, mode = 0o644): number | undefined {
  let fd: number;
  try {
    fd = fs.openSync(abs, flags | C.O_NOFOLLOW | C.O_NONBLOCK, mode);
  } catch (err) {
    if (code(err) === 'ELOOP') throw unsafeState(abs, 'a symbolic link');
    if (!missing(err)) throw err;
    checkMissing(abs);
    return undefined;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw unsafeState(abs, 'a special file');
    if (!isAt(fd, abs)) throw unsafeState(abs, 'a symbolic link on the way');
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}

export function readStateText(abs: string): string | undefined {
  return readStateFile(abs)?.toString('utf8');
}

/**
 * What is at `abs`: 'file', 'dir' or undefined (nothing); a link or special file is refused.
 * `folderChecked`: the caller has just checked the folder holding it (checkStateDir).
 */
export function stateKind(abs: string, folderChecked = false): 'file' | 'dir' | undefined {
  if (!folderChecked && !checkStateDir(path.dirname(abs))) return undefined;
  const st = lstatOrUndefined(abs);
  if (st === undefined) return undefined;
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  throw unsafeState(abs, st.isSymbolicLink() ? 'a symbolic link' : 'a special file');
}

/** Metadata of a regular file (undefined when missing); a link or special file is refused. */
export function stateFileStat(abs: string): fs.BigIntStats | undefined {
  if (stateKind(abs) !== 'file') return undefined;
  return fs.lstatSync(abs, { bigint: true });
}

/** The names in a folder ([] when it does not exist); the folder must be real. */
export function listStateDir(dir: string): string[] {
  let fd: number;
  try {
    fd = fs.openSync(dir, C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
  } catch (err) {
    if (code(err) === 'ELOOP' || (code(err) === 'ENOTDIR' && lstatOrUndefined(dir)?.isSymbolicLink())) throw unsafeState(dir, 'a symbolic link');
    if (!missing(err)) throw err;
    checkMissing(dir);
    return [];
  }
  try {
    if (!isAt(fd, dir)) throw unsafeState(dir, 'a symbolic link on the way');
    return fs.readdirSync(PROC ? `/proc/self/fd/${fd}` : dir);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes `dir` (and missing folders above it, up to an existing real one) as real folders. */
export function makeStateDir(dir: string): void {
  if (checkStateDir(dir)) return;
  const parent = path.dirname(dir);
  if (parent !== dir) makeStateDir(parent);
  try {
    fs.mkdirSync(dir);
  } catch (err) {
    if (code(err) !== 'EEXIST') throw err; // made meanwhile by another writer: checked below
  }
  if (!checkStateDir(dir)) throw unsafeState(dir, 'a folder that vanished');
}

/**
 * Creates a new file exclusively (never through a link) and returns its descriptor, open for
 * writing. `folderChecked`: the caller has just checked the folder (then renaming the file within
 * it needs no new check either).
 */
export function createStateFile(abs: string, mode = 0o644, folderChecked = false): number {
  if (!folderChecked && !checkStateDir(path.dirname(abs))) throw Object.assign(new Error(`ENOENT: no such folder for '${path.basename(abs)}'`), { code: 'ENOENT' });
  let fd: number;
  try {
    fd = fs.openSync(abs, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode);
  } catch (err) {
    if (code(err) === 'ELOOP') throw unsafeState(abs, 'a symbolic link');
    throw err;
  }
  if (!isAt(fd, abs)) {
    fs.closeSync(fd);
    throw unsafeState(abs, 'a symbolic link on the way');
  }
  return fd;
}

/** Writes a whole new file exclusively (see createStateFile). */
export function writeNewStateFile(abs: string, data: string | Uint8Array, mode = 0o644): void {
  const fd = createStateFile(abs, mode);
  try {
    writeAll(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Moves `from` over `to` (a rename replaces a link at `to`, it never follows it); both folders
 * must be real. A folder at `to` is never replaced.
 */
export function renameState(from: string, to: string): void {
  if (!checkStateDir(path.dirname(to)) || !checkStateDir(path.dirname(from))) throw Object.assign(new Error(`ENOENT: no such folder for '${path.basename(to)}'`), { code: 'ENOENT' });
  fs.renameSync(from, to);
}
