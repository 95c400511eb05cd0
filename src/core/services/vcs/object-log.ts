/**
 * Trees and commits of the repositories only this server writes and reads (the undo's shadow
 * repositories, undo/shadow.ts) appended to one file per repository, `objects/fileshed-objects.log`,
 * instead of one new loose file each: a capture's commit writes a commit and the trees on its path
 * at every modifying call, and creating a file (then renaming it) costs more there than everything
 * else the capture does. Blobs stay loose (the zones' bytes; reverse deltas replace them one by one).
 *
 * An entry is the object id (20 bytes), the length (4 bytes, big-endian) and the object deflated.
 * Its first byte says how: WITH_DICTIONARY, then raw deflate with a preset dictionary of what shadow
 * trees and commits repeat (DICTIONARY_V1: a capture's commit is ~240 bytes of which only the ids,
 * times and names differ, and deflating each alone kept ~180 of them); anything else is a zlib
 * stream, the object exactly as a loose one is (what earlier versions wrote, still read). The mark is
 * in the body, not in the length, so an instance of an earlier version still finds every entry whole
 * (it fails to read the new ones; it never takes them for a torn tail to cut off).
 *
 * Appended under the caller's lock (the user's call lock): a writer killed mid-entry leaves a torn
 * tail, which readers never index (an entry counts once it is whole) and the next writer cuts off.
 * Every object read is checked against its id. The collection (undo/collect.ts) rewrites the file
 * with what it keeps (temp + rename: readers see a new inode and index it again). git itself cannot
 * read these objects; no git reads the shadows.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { hashObject, unframeObject, type GitObject } from '../../formats/git/objects.js';
import { makeStateDir, openStateFile, renameState, writeNewStateFile } from '../../base/fs/nofollow.js';
import { writeAll } from '../../base/fs/read.js';
import { readAt } from '../../base/fs/atomic.js';

const LOG_NAME = 'fileshed-objects.log';
const HEADER = 24;
/** An entry body's first byte when raw deflate against DICTIONARY_V1 follows: never a zlib stream's (its compression method, the low 4 bits, is 8). */
const WITH_DICTIONARY = 0x01;

/**
 * What every shadow tree and commit repeats, for deflate to refer back to (the most frequent last,
 * nearest). Fixed for ever: entries written with it are read with it. A new dictionary needs a new
 * mark, not an edit of this one.
 */
const DICTIONARY_V1 = Buffer.from(
  [
    'Undo turn ',
    'Capture: files back under the size cap\n',
    'Capture: resynchronised after an interrupted call\n',
    'tree 0\u0000120000 100755 ',
    'Fileshed <fileshed@localhost> ',
    'author Fileshed capture <fileshed@fileshed> ',
    'Capture: start\n',
    ' +0000\n',
    'committer Fileshed <fileshed@localhost> ',
    '\n\nCapture: state of the zone\n',
    'commit 240\u0000tree ',
    '\nparent ',
    '.txt\u0000.md\u0000.csv\u0000.json\u0000',
    'tree 35\u000040000 ',
    '100644 ',
  ].join(''),
  'latin1',
);

/** An object's entry body: the mark, then the object deflated against the dictionary. */
function encode(frame: Uint8Array): Buffer {
  return Buffer.concat([Buffer.of(WITH_DICTIONARY), zlib.deflateRawSync(frame, { dictionary: DICTIONARY_V1 })]);
}

/** An entry body back to the object's frame, as its first byte says it was made. */
function decode(body: Buffer): Buffer {
  return body[0] === WITH_DICTIONARY ? zlib.inflateRawSync(body.subarray(1), { dictionary: DICTIONARY_V1 }) : zlib.inflateSync(body);
}

/** Repositories whose trees and commits go to the log (registered by their owner, undo/shadow.ts). */
const logging = new Set<string>();

export function logTreesAndCommits(gitdir: string): void {
  logging.add(gitdir);
}

export function logsObjects(gitdir: string): boolean {
  return logging.has(gitdir);
}

function logPath(gitdir: string): string {
  return path.join(gitdir, 'objects', LOG_NAME);
}

/**
 * Where each whole entry of a log is: per repository, as far as it was read (`end`), for one inode.
 * An inode number can come back for another file (a log rewritten twice by another process
 * meanwhile): the last header read must still be where it was, else the log is indexed anew.
 */
interface Index {
  ino: number;
  end: number;
  at: Map<string, { offset: number; length: number }>;
  /** The last entry's header, where it was read. */
  last?: { at: number; head: Buffer };
  /** The file's size and time when indexed: unchanged, nothing is read. */
  size: number;
  mtimeMs: number;
}
const indexes = new Map<string, Index>();
const MAX_INDEXES = 512; // two shadows per user: the last 256 users

/** The index of the open log `fd`, brought up to its whole entries (a new inode is indexed from the start). */
function indexOf(gitdir: string, fd: number): Index {
  const st = fs.fstatSync(fd);
  let idx = indexes.get(gitdir);
  if (idx !== undefined && idx.ino === st.ino && idx.size === st.size && idx.mtimeMs === st.mtimeMs) return idx;
  if (idx === undefined || idx.ino !== st.ino || st.size < idx.end || (idx.last !== undefined && !readAt(fd, idx.last.at, HEADER).equals(idx.last.head))) {
    idx = { ino: st.ino, end: 0, at: new Map(), size: 0, mtimeMs: 0 };
    if (indexes.size >= MAX_INDEXES) indexes.delete(indexes.keys().next().value as string);
    indexes.set(gitdir, idx);
  }
  while (idx.end + HEADER <= st.size) {
    const head = readAt(fd, idx.end, HEADER);
    if (head.length < HEADER) break;
    const length = head.readUInt32BE(20);
    if (idx.end + HEADER + length > st.size) break; // torn (or being written): not an entry yet
    idx.at.set(head.subarray(0, 20).toString('hex'), { offset: idx.end + HEADER, length });
    idx.last = { at: idx.end, head };
    idx.end += HEADER + length;
  }
  idx.size = st.size;
  idx.mtimeMs = st.mtimeMs;
  return idx;
}

/** Whether this process's index of the log names the object (no I/O; the log may hold more). */
export function indexedInLog(gitdir: string, oid: string): boolean {
  return indexes.get(gitdir)?.at.has(oid) === true;
}

/** An object of the log, checked against its id; undefined when the log does not hold it. */
export function readLogged(gitdir: string, oid: string): GitObject | undefined {
  const fd = openStateFile(logPath(gitdir), fs.constants.O_RDONLY);
  if (fd === undefined) return undefined;
  let frame: Buffer;
  try {
    const e = indexOf(gitdir, fd).at.get(oid);
    if (e === undefined) return undefined;
    frame = decode(readAt(fd, e.offset, e.length));
  } finally {
    fs.closeSync(fd);
  }
  const obj = unframeObject(frame);
  if (hashObject(obj.type, obj.body) !== oid) throw new Error(`object ${oid.slice(0, 7)} of ${LOG_NAME} does not match its id`);
  return obj;
}

/** Every object of the log with the bytes it takes there (the collection's measure, undo/collect.ts). */
export function loggedSizes(gitdir: string): Map<string, number> {
  const out = new Map<string, number>();
  const fd = openStateFile(logPath(gitdir), fs.constants.O_RDONLY);
  if (fd === undefined) return out;
  try {
    for (const [oid, e] of indexOf(gitdir, fd).at) out.set(oid, HEADER + e.length);
  } finally {
    fs.closeSync(fd);
  }
  return out;
}

/** Appends an object (its frame: type, length, body) unless the log holds it. The caller holds the repository's writers' lock. */
export function appendLogged(gitdir: string, oid: string, frame: Uint8Array): void {
  const flags = fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT;
  let fd = openStateFile(logPath(gitdir), flags);
  if (fd === undefined) {
    makeStateDir(path.dirname(logPath(gitdir))); // objects/ missing (a repository being made)
    fd = openStateFile(logPath(gitdir), flags)!;
  }
  try {
    const idx = indexOf(gitdir, fd);
    if (idx.at.has(oid)) return;
    // A torn tail a killed writer left: cut off, so this entry starts where the last whole one ends.
    if (idx.size > idx.end) fs.ftruncateSync(fd, idx.end);
    const body = encode(frame);
    const head = Buffer.alloc(HEADER);
    head.write(oid, 0, 'hex');
    head.writeUInt32BE(body.length, 20);
    const entry = Buffer.concat([head, body]);
    writeAll(fd, entry);
    idx.at.set(oid, { offset: idx.end + HEADER, length: body.length });
    idx.last = { at: idx.end, head };
    idx.end += entry.length;
    const st = fs.fstatSync(fd);
    idx.size = st.size;
    idx.mtimeMs = st.mtimeMs;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Rewrites the log with only the objects `keep` wants (the collection, under the lock): temp +
 * rename, so a kill leaves the old log or the new one. Answers how many objects went.
 */
export function compactLog(gitdir: string, keep: (oid: string) => boolean): number {
  const file = logPath(gitdir);
  const fd = openStateFile(file, fs.constants.O_RDONLY);
  if (fd === undefined) return 0;
  let dropped = 0;
  const parts: Buffer[] = [];
  try {
    const idx = indexOf(gitdir, fd);
    const whole = readAt(fd, 0, idx.end); // one read: the log holds trees and commits only
    for (const [oid, e] of idx.at) {
      if (keep(oid)) parts.push(whole.subarray(e.offset - HEADER, e.offset + e.length));
      else dropped++;
    }
  } finally {
    fs.closeSync(fd);
  }
  if (dropped === 0) return 0;
  // A temp name sweepTemps (vcs/lock.ts) knows: a kill before the rename leaves nothing for ever.
  const tmp = path.join(path.dirname(file), `tmp_obj_fileshed_log_${process.pid}_${Date.now()}`);
  try {
    writeNewStateFile(tmp, Buffer.concat(parts));
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  renameState(tmp, file);
  indexes.delete(gitdir);
  return dropped;
}
