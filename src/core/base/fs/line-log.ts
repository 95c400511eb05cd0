/**
 * An append-only file of lines (one JSON value each), read incrementally: writers add lines at the
 * end (O_APPEND: no new file, no rename, one write per batch) and readers parse only what was
 * added since they last looked. A file replaced whole (a compaction: temp + rename) is a new inode,
 * which readers notice and read again from the start.
 *
 * Crash safety: a line is whole once its newline is written. A writer killed mid-write leaves a
 * torn last line, which readers never parse (they stop at the last newline) and which the next
 * writer cuts off before it appends. Writers must be serialised by the caller (a lock); readers
 * need none.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { retryStale, writeAll, writeBytes } from './read.js';
import { lstatIfAny } from './stat.js';
import { readAt } from './atomic.js';

/**
 * Where a reader stopped: the file (inode), the byte after the last whole line read, and what it
 * saw there. An inode number can come back for another file (a log replaced twice while a reader of
 * another process slept): the bytes before `offset` must still be `tail`, else the file is read anew.
 */
export interface LogCursor {
  ino: number;
  offset: number;
  /** Up to the last 64 bytes before `offset`. */
  tail: Buffer;
  /** The file's size and time when read: unchanged, nothing is read again. */
  size: number;
  mtimeMs: number;
}

const NONE: LogCursor = { ino: 0, offset: 0, tail: Buffer.alloc(0), size: 0, mtimeMs: 0 };
const TAIL = 64;

export interface NewLines {
  cursor: LogCursor;
  /** True when the lines start from the file's beginning (first read, or the file was replaced). */
  fresh: boolean;
  lines: string[];
}

const NEWLINE = 0x0a;

/** The whole lines added after `cursor` (every line when there is no cursor or the file is another). */
export function readNewLines(file: string, cursor?: LogCursor): NewLines {
  // The usual case, nothing added: one lstat.
  const st = lstatIfAny(file);
  if (st === undefined || !st.isFile()) return { cursor: NONE, fresh: cursor === undefined || cursor.ino !== 0, lines: [] };
  if (cursor !== undefined && cursor.ino === st.ino && cursor.size === st.size && cursor.mtimeMs === st.mtimeMs) return { cursor, fresh: false, lines: [] };
  return retryStale(() => readFrom(file, cursor));
}

function readFrom(file: string, cursor: LogCursor | undefined): NewLines {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { cursor: NONE, fresh: cursor === undefined || cursor.ino !== 0, lines: [] };
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    const fresh = cursor === undefined || cursor.ino !== st.ino || st.size < cursor.offset || !readAt(fd, cursor.offset - cursor.tail.length, cursor.tail.length).equals(cursor.tail);
    const start = fresh ? 0 : cursor.offset;
    const bytes = readAt(fd, start, st.size - start);
    const end = bytes.lastIndexOf(NEWLINE) + 1; // after the last whole line (0: none yet)
    const lines = end === 0 ? [] : bytes.subarray(0, end - 1).toString('utf8').split('\n');
    const seen = fresh ? bytes.subarray(0, end) : Buffer.concat([cursor.tail, bytes.subarray(0, end)]);
    const tail = Buffer.from(seen.subarray(Math.max(0, seen.length - TAIL)));
    return { cursor: { ino: st.ino, offset: start + end, tail, size: st.size, mtimeMs: st.mtimeMs }, fresh, lines };
  } finally {
    fs.closeSync(fd);
  }
}

/** Adds lines at the end in one write, after cutting off a torn last line a killed writer left. The caller holds the lock. */
export function appendLines(file: string, lines: readonly string[]): void {
  if (lines.length === 0) return;
  const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o644);
  try {
    const size = fs.fstatSync(fd).size;
    // The usual case: the file ends with a newline (one byte read); else the torn tail is cut off.
    if (size > 0 && readAt(fd, size - 1, 1)[0] !== NEWLINE) fs.ftruncateSync(fd, wholeLinesEnd(fd, size));
    writeAll(fd, Buffer.from(`${lines.join('\n')}\n`, 'utf8'));
  } finally {
    fs.closeSync(fd);
  }
}

/** The byte after the last newline of the file's first `size` bytes (0 when there is none). */
function wholeLinesEnd(fd: number, size: number): number {
  const CHUNK = 64 * 1024;
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - CHUNK);
    const at = readAt(fd, start, end - start).lastIndexOf(NEWLINE);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

/** Replaces the whole file by these lines (temp + rename: readers see the old file or the new one). The caller holds the lock. */
export function rewriteLines(file: string, lines: readonly string[]): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  writeBytes(tmp, lines.length === 0 ? '' : `${lines.join('\n')}\n`, { exclusive: true });
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
