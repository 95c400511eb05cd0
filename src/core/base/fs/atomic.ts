/**
 * Atomic file replacement: write a temp file beside the target (created exclusively, so it can
 * never be a pre-planted symlink), fsync it, rename it over the target, fsync the folder. Readers
 * see the old file or the new one, never half of either; a final symlink is replaced, not followed.
 * The data's write and both flushes run on the thread pool: a large file, or a slow disk, holds a
 * pool thread while it settles, never the event loop that answers other users.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { inheritOwner, mkdirInheriting } from './owner.js';
import { readBytes } from './read.js';

/**
 * Checked before each rename that publishes a write. The locks set it (locks/lease.ts): a call
 * whose lease on its space ended (another host took over) must not publish what it wrote.
 */
let assertFence: () => void = () => undefined;
export function checkBeforePublishing(check: () => void): void {
  assertFence = check;
}

/** The same check, for writers that publish a file by their own rename (exec/guards/output-file.ts). */
export function assertPublishable(): void {
  assertFence();
}

/** Suffix of temp files, so tree listings and quotas can recognise leftovers of a crash. */
export const TEMP_SUFFIX = '.shedtmp';

/** A temp file beside `abs` being written; `commit` moves it over `abs`, `abort` removes it. */
export interface AtomicFile {
  fd: number;
  /** fsync, close, rename over the target, fsync the folder (both flushes on the thread pool). */
  commit(): Promise<void>;
  /** The same, synchronous: for writers that already run off the event loop (a pool job, the SQLite child). */
  commitSync(): void;
  /** Close (if open) and remove the temp file; safe to call after a failure at any point. */
  abort(): void;
}

/**
 * Opens the temp file of an atomic replacement of `abs` (created exclusively and without following
 * links, with the mode of the file it replaces). Streaming writers (zip, CSV export, command output)
 * write to `fd`; atomicWrite is the one-buffer case.
 */
export function openAtomic(abs: string, mode?: number): AtomicFile {
  const dir = path.dirname(abs);
  mkdirInheriting(dir);
  const tmp = tempPathFor(abs);
  let fileMode = mode ?? 0o644;
  if (mode === undefined) {
    const old = fs.lstatSync(abs, { throwIfNoEntry: false });
    if (old?.isFile()) fileMode = old.mode & 0o777;
  }
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, fileMode);
  try {
    inheritOwner(fd, dir);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  let open = true;
  const close = () => {
    if (open) fs.closeSync(fd);
    open = false;
  };
  /** After the flush: the temp file takes the target's name (unless this call's lease ended). */
  const publish = () => {
    close();
    assertFence();
    fs.renameSync(tmp, abs);
  };
  return {
    fd,
    async commit() {
      try {
        await fsyncOffLoop(fd);
        publish();
      } catch (err) {
        this.abort();
        throw err;
      }
      await syncDirOffLoop(dir);
    },
    commitSync() {
      try {
        fs.fsyncSync(fd);
        publish();
      } catch (err) {
        this.abort();
        throw err;
      }
      syncDir(dir);
    },
    abort() {
      try {
        close();
      } catch {
        // already closed by the failure being handled
      }
      fs.rmSync(tmp, { force: true });
    },
  };
}

/** A fresh temp name beside `abs`, recognisable by TEMP_SUFFIX. */
export function tempPathFor(abs: string): string {
  return path.join(path.dirname(abs), `.${path.basename(abs).slice(0, 180)}.${crypto.randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
}

/** fsync on the thread pool. */
export function fsyncOffLoop(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
}

/** Writes all of `bytes` at the descriptor's position, on the thread pool. */
export async function writeAllOffLoop(fd: number, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length; ) {
    off += await new Promise<number>((resolve, reject) => fs.write(fd, bytes, off, bytes.length - off, null, (err, n) => (err ? reject(err) : resolve(n))));
  }
}

/** Copies `src` over `dest` atomically (temp copy beside `dest`, fsync, rename, fsync the folder), the copy and flushes on the thread pool. */
export async function atomicCopy(src: string, dest: string): Promise<void> {
  const dir = path.dirname(dest);
  mkdirInheriting(dir);
  const tmp = tempPathFor(dest);
  try {
    await fs.promises.copyFile(src, tmp, fs.constants.COPYFILE_EXCL);
    const fd = fs.openSync(tmp, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      inheritOwner(fd, dir);
      await fsyncOffLoop(fd);
    } finally {
      fs.closeSync(fd);
    }
    assertFence();
    fs.renameSync(tmp, dest);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  await syncDirOffLoop(dir);
}

/** `mode`: of the new file (default: the replaced file's, else 0644 less the umask). */
export async function atomicWrite(abs: string, data: Uint8Array | string, mode?: number): Promise<void> {
  const file = openAtomic(abs, mode);
  try {
    await writeAllOffLoop(file.fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  } catch (err) {
    file.abort();
    throw err;
  }
  await file.commit();
}

/**
 * atomicWrite for writers of many files (a history restore of a folder of 30,000): the file's write
 * and fsync run on the thread pool, so the event loop is free meanwhile and several can be in flight; the
 * folder's fsync is left to the caller (syncDir once per folder after the batch). Each file is still
 * the old one or the new one whatever happens.
 */
export async function atomicWriteDeferred(abs: string, data: Uint8Array): Promise<void> {
  const dir = path.dirname(abs);
  mkdirInheriting(dir);
  const tmp = tempPathFor(abs);
  const old = fs.lstatSync(abs, { throwIfNoEntry: false });
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, old?.isFile() ? old.mode & 0o777 : 0o644);
  try {
    inheritOwner(fd, dir);
    await writeAllOffLoop(fd, data);
    await fsyncOffLoop(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    assertFence();
    fs.renameSync(tmp, abs);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

export function syncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on folders; the rename itself is still atomic.
  }
}

/** syncDir on the thread pool: a slow disk's flush holds a worker, not the event loop. */
export async function syncDirOffLoop(dir: string): Promise<void> {
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fs.promises.open(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    await handle.sync();
  } catch {
    // as syncDir
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Reads a whole file that the caller already resolved and size-checked. */
export function readFile(abs: string): Buffer {
  return readBytes(abs);
}

/** Reads `length` bytes at `offset` without loading the rest of the file. */
export function readRange(abs: string, offset: number, length: number): Buffer {
  const fd = fs.openSync(abs, 'r');
  try {
    return readAt(fd, offset, length);
  } finally {
    fs.closeSync(fd);
  }
}

/** `length` bytes at `offset` of an open file; fewer at its end. */
export function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = fs.readSync(fd, buf, got, length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}
