/**
 * Safe extraction of a ZIP archive, in three steps:
 *
 * 1. plan   — from the central directory alone: entry count, declared total size and ratio limits,
 *             unsafe names (absolute, '..', drive letters), symbolic links, devices, encryption,
 *             unsupported methods, duplicate or conflicting names. Any problem refuses the whole
 *             archive before a single byte is written.
 * 2. extract — entry by entry into a private temp folder beside the zone (never inside it), reading
 *             compressed ranges from the file and inflating in slices, so memory stays bounded
 *             whatever the archive's size. An entry that inflates past its declared size, or whose
 *             CRC does not match, stops everything (the declared sizes are what the quota checked).
 * 3. place  — the extracted tree is renamed into the destination (one rename when the destination
 *             folder is new; otherwise a planned merge, checked completely before the first move).
 * On any failure the temp folder is removed: nothing half-extracted is ever visible in the zone.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { shedError } from '../../base/errors.js';
import { errnoCode } from '../../base/paths/resolve.js';
import { readAllFd } from '../../base/fs/read.js';
import { METHOD_NAMES, type ZipDirectory, type ZipEntry } from '../../formats/zip/directory.js';
import { badZip as damaged } from './central.js';
import { checkEntryName, unsafeEntry } from './names.js';
import { assertFence } from '../../base/locks/lease.js';
import { formatSize } from '../../base/text/size.js';
import { listSliced } from '../../base/fs/list.js';
import { adoptTree, mkdirInheriting } from '../../base/fs/owner.js';
import { sortSliced, TimeSlice } from '../../base/fs/slice.js';

const MIB = 1024 * 1024;

/** An invalid archive, said so: whatever happened, the temp folder goes and nothing reaches the zone. */
function badZip(shown: string, why: string): Error {
  const err = damaged(shown, why);
  err.message += ' Nothing was extracted.';
  return err;
}
/** Archives up to this size are read whole (fast for many small entries); larger ones by ranges. */
const READ_WHOLE_BYTES = 32 * MIB;
/** Compressed bytes inflated per step: deflate expands at most ~1032×, so one step stays ~33 MB. */
const INFLATE_SLICE = 32 * 1024;
/** The ratio check applies only from this declared size on: a tiny archive cannot hurt. */
export const RATIO_FLOOR_BYTES = MIB;

export interface UnzipLimits {
  maxEntries: number;
  maxTotalBytes: number;
  /** 0 disables the ratio check. */
  maxRatio: number;
  maxFileBytes: number;
}

export interface PlannedFile {
  entry: ZipEntry;
  rel: string;
}

export interface Plan {
  files: PlannedFile[];
  /** Folders to create (including every parent of a file). */
  dirs: string[];
  totalSize: number;
}

export function bomb(shown: string, what: string, details: Record<string, unknown>): Error {
  return shedError('ZIP_BOMB', `${shown} was refused: ${what}. Nothing was extracted.`, {
    details,
    hint: 'The limits are admin settings (zip_max_entries, zip_max_total_mb, zip_max_ratio; see shed_parameters). Extract a smaller archive or ask the admin.',
  });
}

export function checkCount(shown: string, count: number, limits: UnzipLimits): void {
  if (count > limits.maxEntries) bombThrow(shown, `it has ${count} entries, more than the limit of ${limits.maxEntries}`, { entries: count, max_entries: limits.maxEntries });
}

function bombThrow(shown: string, what: string, details: Record<string, unknown>): never {
  throw bomb(shown, what, details);
}

/** Everything decided from the directory; throws on the first refusal. Sliced: an archive can list 100,000 entries. */
export async function planExtraction(dir: ZipDirectory, shown: string, limits: UnzipLimits, isProtected: (rel: string) => boolean): Promise<Plan> {
  checkCount(shown, dir.entries.length, limits);
  const slice = new TimeSlice();
  const files: PlannedFile[] = [];
  const dirs = new Set<string>();
  const fileNames = new Set<string>();
  let total = 0;
  for (const e of dir.entries) {
    await slice.tick();
    const verdict = checkEntryName(e.name);
    if (!verdict.ok) throw unsafeEntry(shown, e.name, verdict);
    if (e.kind === 'symlink') {
      throw shedError('PATH_ESCAPE', `${shown} holds a symbolic link entry ('${verdict.rel}'); links could point outside the zone, so the archive is refused. Nothing was extracted.`, {
        details: { entry: verdict.rel },
        hint: 'Ask for an archive made without links (zip without -y), or extract it with a tool you control.',
      });
    }
    if (e.kind === 'device') {
      throw shedError('INVALID_FORMAT', `${shown} holds a device or pipe entry ('${verdict.rel}'), which cannot be extracted. Nothing was extracted.`, {
        details: { entry: verdict.rel },
      });
    }
    if (verdict.rel === '') continue; // "./" entries
    if (isProtected(verdict.rel)) {
      throw shedError('PROTECTED_PATH', `${shown} holds '${verdict.rel}', inside a folder named .git; the history of a versioned zone can never hold such a folder, so it is not extracted here. Nothing was extracted.`, {
        details: { entry: verdict.rel },
        hint: 'Extract it into zone="storage" (a repository belongs there), e.g. shed_unzip(zone="storage", src="...", src_zone="documents").',
      });
    }
    if (e.kind === 'dir') {
      dirs.add(verdict.rel);
      continue;
    }
    if (e.encrypted) {
      throw shedError('INVALID_FORMAT', `${shown} is password-protected ('${verdict.rel}' is encrypted); encrypted archives are not supported. Nothing was extracted.`, {
        details: { entry: verdict.rel },
        hint: 'Ask for an archive without a password.',
      });
    }
    if (e.method !== 0 && e.method !== 8) {
      throw shedError('INVALID_FORMAT', `${shown} uses the ${METHOD_NAMES[e.method] ?? `#${e.method}`} compression method for '${verdict.rel}'; only stored and deflate are supported. Nothing was extracted.`, {
        details: { entry: verdict.rel, method: e.method },
        hint: 'Recompress it as a standard ZIP (deflate), e.g. with zip -r.',
      });
    }
    if (fileNames.has(verdict.rel)) throw badZip(shown, `it lists '${verdict.rel}' twice`);
    if (e.size > limits.maxFileBytes) {
      throw shedError('FILE_TOO_LARGE', `${shown}: '${verdict.rel}' would be ${formatSize(e.size)}, above the ${formatSize(limits.maxFileBytes)} limit per file. Nothing was extracted.`, {
        details: { entry: verdict.rel, size: e.size },
      });
    }
    fileNames.add(verdict.rel);
    files.push({ entry: e, rel: verdict.rel });
    total += e.size;
    for (let i = verdict.rel.lastIndexOf('/'); i > 0; i = verdict.rel.lastIndexOf('/', i - 1)) dirs.add(verdict.rel.slice(0, i));
  }
  for (const d of dirs) {
    await slice.tick();
    if (fileNames.has(d)) throw badZip(shown, `'${d}' is both a file and a folder`);
  }
  if (total > limits.maxTotalBytes) {
    bombThrow(shown, `its files add up to ${formatSize(total)} uncompressed, more than the limit of ${formatSize(limits.maxTotalBytes)}`, {
      total_uncompressed: total,
      max_total_bytes: limits.maxTotalBytes,
    });
  }
  const ratio = total / Math.max(1, dir.fileSize);
  if (limits.maxRatio > 0 && total >= RATIO_FLOOR_BYTES && ratio > limits.maxRatio) {
    bombThrow(shown, `it expands ${ratio.toFixed(0)} times (${formatSize(total)} from ${formatSize(dir.fileSize)}), more than the limit of ${limits.maxRatio}`, {
      ratio: Math.round(ratio),
      max_ratio: limits.maxRatio,
      total_uncompressed: total,
      archive_size: dir.fileSize,
    });
  }
  return { files, dirs: await sortSliced([...dirs], (a, b) => (a < b ? -1 : a > b ? 1 : 0), slice), totalSize: total };
}

const crc32: (data: Uint8Array, value?: number) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function' ? (zlib as unknown as { crc32: (d: Uint8Array, v?: number) => number }).crc32 : crc32Js;

let table: Int32Array | undefined;
function crc32Js(data: Uint8Array, value = 0): number {
  if (table === undefined) {
    table = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c;
    }
  }
  let c = ~value;
  for (let i = 0; i < data.length; i++) c = table[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** Reads compressed ranges, from memory for small archives, from the file for large ones. */
class Source {
  private readonly whole: Buffer | undefined;
  private readonly fd: number;
  readonly size: number;

  constructor(abs: string) {
    this.fd = fs.openSync(abs, 'r');
    this.size = fs.fstatSync(this.fd).size;
    this.whole = this.size <= READ_WHOLE_BYTES ? readAllFd(this.fd) : undefined;
  }

  read(offset: number, length: number): Buffer {
    if (this.whole) return this.whole.subarray(offset, offset + length);
    const buf = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const n = fs.readSync(this.fd, buf, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** Writes every planned file and folder under `tempRoot`. */
export async function extractToTemp(zipAbs: string, shown: string, plan: Plan, tempRoot: string, progress: (done: number, total: number) => Promise<void>): Promise<void> {
  const src = new Source(zipAbs);
  const made = new Set<string>(['']);
  const mkdir = (rel: string) => {
    if (made.has(rel)) return;
    fs.mkdirSync(path.join(tempRoot, rel), { recursive: true });
    made.add(rel);
  };
  try {
    for (const d of plan.dirs) mkdir(d);
    let last = Date.now();
    for (let i = 0; i < plan.files.length; i++) {
      const { entry, rel } = plan.files[i]!;
      const slash = rel.lastIndexOf('/');
      mkdir(slash === -1 ? '' : rel.slice(0, slash));
      await extractOne(src, shown, entry, rel, path.join(tempRoot, rel));
      if (Date.now() - last > 100) {
        last = Date.now();
        await progress(i + 1, plan.files.length);
      }
    }
  } finally {
    src.close();
  }
}

async function extractOne(src: Source, shown: string, e: ZipEntry, rel: string, out: string): Promise<void> {
  const head = src.read(e.localOffset, 30);
  if (head.length < 30 || head.readUInt32LE(0) !== 0x04034b50) throw badZip(shown, `the data of '${rel}' is missing`);
  const start = e.localOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
  if (start + e.compressedSize > src.size) throw badZip(shown, `the data of '${rel}' is cut short`);
  const fd = fs.openSync(out, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
  try {
    let written = 0;
    let crc = 0;
    const inflatesPast = () => bomb(shown, `'${rel}' inflates past the ${e.size} bytes its header declares`, { entry: rel, declared_size: e.size });
    const emit = (chunk: Uint8Array) => {
      written += chunk.length;
      if (written > e.size) throw inflatesPast();
      crc = crc32(chunk, crc);
      let off = 0;
      while (off < chunk.length) off += fs.writeSync(fd, chunk, off, chunk.length - off);
    };
    if (e.method === 0) {
      for (let off = 0; off < e.compressedSize; off += 4 * MIB) emit(src.read(start + off, Math.min(4 * MIB, e.compressedSize - off)));
    } else if (e.compressedSize <= INFLATE_SLICE) {
      let data: Uint8Array;
      try {
        // One byte past the declared size is enough to know it lies: never more is inflated.
        data = zlib.inflateRawSync(src.read(start, e.compressedSize), { maxOutputLength: e.size + 1 });
      } catch (err) {
        if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw inflatesPast();
        throw badZip(shown, `the compressed data of '${rel}' is damaged`);
      }
      emit(data);
    } else {
      await inflateInSlices((off, n) => src.read(start + off, n), e.compressedSize, emit, () => badZip(shown, `the compressed data of '${rel}' is damaged`));
    }
    if (written !== e.size) throw badZip(shown, `'${rel}' holds ${written} bytes instead of the ${e.size} its header declares`);
    if (crc >>> 0 !== e.crc >>> 0) throw badZip(shown, `'${rel}' fails its checksum (CRC32)`);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Inflates `size` bytes of raw DEFLATE read by slices through Node's zlib stream, handing every
 * output chunk to `emit` (which may throw, e.g. past the declared size: the stream stops there).
 * Memory stays at a slice in and a chunk out; the inflating runs off the event loop.
 */
async function inflateInSlices(read: (off: number, n: number) => Uint8Array, size: number, emit: (chunk: Uint8Array) => void, damagedError: () => Error): Promise<void> {
  const inflater = zlib.createInflateRaw();
  let refused: unknown;
  let broken = false;
  inflater.on('data', (chunk: Buffer) => {
    if (refused !== undefined) return;
    try {
      emit(chunk);
    } catch (err) {
      refused = err;
      inflater.destroy();
    }
  });
  const finished = new Promise<void>((resolve) => {
    inflater.once('end', resolve);
    inflater.once('close', resolve);
    inflater.on('error', () => {
      broken = true;
      resolve();
    });
  });
  for (let off = 0; off < size && refused === undefined && !broken && !inflater.destroyed; off += INFLATE_SLICE) {
    if (!inflater.write(read(off, Math.min(INFLATE_SLICE, size - off)))) {
      await new Promise<void>((resolve) => {
        const done = () => {
          inflater.off('drain', done);
          inflater.off('close', done);
          resolve();
        };
        inflater.on('drain', done);
        inflater.on('close', done);
      });
    }
  }
  if (!inflater.destroyed) inflater.end();
  await finished;
  if (refused !== undefined) throw refused;
  if (broken) throw damagedError();
}

/** A fresh private temp folder under `base` (the zone's internal folder); stale ones are swept. */
export function makeTempDir(base: string): string {
  const tmpBase = path.join(base, 'tmp');
  fs.mkdirSync(tmpBase, { recursive: true });
  sweep(tmpBase);
  return fs.mkdtempSync(path.join(tmpBase, 'unzip-'));
}

function sweep(tmpBase: string): void {
  const cutoff = Date.now() - 3600_000;
  for (const name of fs.readdirSync(tmpBase)) {
    if (!name.startsWith('unzip-')) continue;
    const p = path.join(tmpBase, name);
    try {
      if (fs.statSync(p).mtimeMs < cutoff) fs.rmSync(p, { recursive: true, force: true });
    } catch {
      // another call removed it
    }
  }
}

export interface Placement {
  /** Paths (relative to the destination) that were moved in: new subtrees and replaced files. */
  moved: string[];
  /** Files that replaced existing ones. */
  replaced: string[];
}

/**
 * Moves the extracted tree into `destAbs`. Everything is checked first (a file where a folder is
 * needed, a link on the way, files that would be replaced without overwrite), then moved; per
 * entry in slices (merging 30,000 files into a folder looks at each of them).
 */
export async function placeExtracted(tempRoot: string, destAbs: string, shown: (rel: string) => string, overwrite: boolean, checkReplace: (rel: string) => void): Promise<Placement> {
  const slice = new TimeSlice();
  const moves: { from: string; to: string; rel: string; replace: boolean }[] = [];
  const conflicts: string[] = [];
  const plan = async (tmpDir: string, destDir: string, prefix: string): Promise<void> => {
    const names = await sortSliced((await listSliced(tmpDir, slice)).map((d) => d.name), (a, b) => (a < b ? -1 : a > b ? 1 : 0), slice);
    for (const name of names) {
      await slice.tick();
      const from = path.join(tmpDir, name);
      const to = path.join(destDir, name);
      const rel = prefix ? `${prefix}/${name}` : name;
      const there = lstat(to);
      const isDir = fs.lstatSync(from).isDirectory();
      if (there === undefined) {
        moves.push({ from, to, rel, replace: false });
      } else if (there.isSymbolicLink()) {
        throw shedError('PATH_ESCAPE', `${shown(rel)} is a symbolic link; the archive will not be extracted through it. Nothing was extracted.`, {
          details: { path: rel },
          hint: 'Extract into another folder with dest="...", or delete the link first.',
        });
      } else if (isDir && there.isDirectory()) {
        await plan(from, to, rel);
      } else if (isDir || there.isDirectory()) {
        throw shedError('FILE_EXISTS', `${shown(rel)} already exists as a ${there.isDirectory() ? 'folder' : 'file'}, but the archive has a ${isDir ? 'folder' : 'file'} there. Nothing was extracted.`, {
          details: { path: rel },
          hint: 'Extract into another folder with dest="...".',
        });
      } else {
        conflicts.push(rel);
        moves.push({ from, to, rel, replace: true });
      }
    }
  };
  await plan(tempRoot, destAbs, '');
  if (conflicts.length > 0 && !overwrite) {
    throw shedError('FILE_EXISTS', `${conflicts.length === 1 ? 'A file' : `${conflicts.length} files`} of the archive already exist: ${conflicts.slice(0, 10).map((c) => shown(c)).join(', ')}${conflicts.length > 10 ? ', ...' : ''}. Nothing was extracted.`, {
      details: { existing: conflicts.slice(0, 50), count: conflicts.length },
      hint: 'Pass overwrite=true to replace them, or extract into a new folder with dest="...".',
    });
  }
  for (const m of moves) {
    await slice.tick();
    if (m.replace) checkReplace(m.rel);
  }
  mkdirInheriting(destAbs);
  for (const m of moves) {
    await slice.tick();
    move(m.from, m.to);
    // Extracted by the server: the destination folder's owner's (src/core/base/fs/owner.ts).
    await adoptTree(m.to);
  }
  return { moved: moves.map((m) => m.rel), replaced: conflicts };
}

function move(from: string, to: string): void {
  try {
    assertFence();
    fs.renameSync(from, to);
  } catch (err) {
    if (errnoCode(err) !== 'EXDEV') throw err;
    fs.cpSync(from, to, { recursive: true, errorOnExist: false, force: true });
    fs.rmSync(from, { recursive: true, force: true });
  }
}

function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}
