/**
 * The one way the core reads and writes whole files by name: through a descriptor we open and
 * close ourselves, never `fs.readFileSync(name)` / `fs.writeFileSync(name)`.
 *
 * Why: on a network filesystem (GlusterFS, NFS) a file replaced through another client can make
 * `close` fail with ESTALE. Node's fast paths for whole-file reads and writes by name
 * (`readFileSync(path, 'utf8')`, `writeFileSync(path, string)`) assert that close succeeds and
 * abort the whole process (exit 134, "Assertion failed: (0) == (uv_fs_close(...))"). Here every
 * step is a catchable error, and ESTALE (the file was replaced under us: the name now leads to
 * another file) is retried a few times, since opening the name again reaches the new file.
 * `test/unit/safe-fs.test.ts` scans the sources so that no such call comes back.
 */
import fs from 'node:fs';

/** Linux errno of ESTALE; libuv has no name for it, so Node reports "Unknown system error -116". */
const ESTALE_ERRNO = -116;
const ATTEMPTS = 5;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** True for "stale file handle": the name was replaced through another client of a network filesystem. */
export function isStale(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const e = err as { code?: unknown; errno?: unknown };
  return e.code === 'ESTALE' || e.errno === ESTALE_ERRNO;
}

/** Runs `fn` again (up to 5 times, a few ms apart) while it fails with ESTALE. */
export function retryStale<T>(fn: () => T): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return fn();
    } catch (err) {
      if (!isStale(err) || attempt >= ATTEMPTS) throw err;
      Atomics.wait(sleeper, 0, 0, attempt * 2);
    }
  }
}

/** Closes a descriptor; a failing close (ESTALE on a network filesystem) is reported, never fatal. */
function closeQuietly(fd: number): unknown {
  try {
    fs.closeSync(fd);
    return undefined;
  } catch (err) {
    return err;
  }
}

function readOnce(file: string, flags: number): Buffer {
  const fd = fs.openSync(file, flags);
  let data: Buffer;
  try {
    data = readAllFd(fd);
  } catch (err) {
    closeQuietly(fd);
    throw err;
  }
  const closeError = closeQuietly(fd);
  // The bytes are a whole version of the file; a stale close means a newer one exists: read it.
  if (closeError !== undefined && isStale(closeError)) throw closeError;
  return data;
}

/**
 * Everything from an open descriptor's start to its end (the size may change while reading).
 * `knownSize`: the size from the caller's own fstat of `fd` (one syscall less); only a first guess,
 * reading goes on to the real end either way.
 */
export function readAllFd(fd: number, knownSize?: number): Buffer {
  const size = knownSize ?? fs.fstatSync(fd).size;
  // One byte more than the size: the final read that finds the end fits without growing the buffer.
  let buf = Buffer.allocUnsafe(Math.max(size + 1, 4096));
  let got = 0;
  for (;;) {
    if (got === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, got);
      buf = bigger;
    }
    const n = fs.readSync(fd, buf, got, buf.length - got, got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** Writes all of `data` at the descriptor's position (a write may take less than asked). */
export function writeAll(fd: number, data: Uint8Array): void {
  let off = 0;
  while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
}

/** A whole file's bytes (ESTALE retried); throws like fs (ENOENT...) otherwise. */
export function readBytes(file: string, opts: { noFollow?: boolean } = {}): Buffer {
  const flags = fs.constants.O_RDONLY | (opts.noFollow ? fs.constants.O_NOFOLLOW : 0);
  return retryStale(() => readOnce(file, flags));
}

/** A whole file as UTF-8 text (ESTALE retried). */
export function readText(file: string, opts: { noFollow?: boolean } = {}): string {
  return readBytes(file, opts).toString('utf8');
}

/** The text of a file, or undefined when it cannot be read (missing, unreadable, stale past the retries). */
export function readTextIfAny(file: string): string | undefined {
  try {
    return readText(file);
  } catch {
    return undefined;
  }
}

/**
 * Writes a whole file by name through a descriptor (create/truncate, or append with `append`).
 * Errors, a failing close included, are thrown as ordinary errors.
 */
export function writeBytes(file: string, data: string | Uint8Array, opts: { mode?: number; exclusive?: boolean; append?: boolean } = {}): void {
  const c = fs.constants;
  const flags = c.O_WRONLY | c.O_CREAT | (opts.append ? c.O_APPEND : c.O_TRUNC) | (opts.exclusive ? c.O_EXCL : 0);
  const fd = fs.openSync(file, flags, opts.mode ?? 0o644);
  try {
    writeAll(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  } catch (err) {
    closeQuietly(fd);
    throw err;
  }
  const closeError = closeQuietly(fd);
  if (closeError !== undefined) throw closeError;
}
