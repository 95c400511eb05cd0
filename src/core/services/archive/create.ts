/**
 * Writes a ZIP archive of a file or a folder with fflate's streaming Zip: files are read in chunks
 * and deflated as they go, output goes to a temp file beside the destination (coalesced into large
 * writes) and replaces nothing until it is complete (fsync + rename).
 *
 * What goes in: regular files and folders (dotfiles included, like zip -r); symbolic links to files
 * inside the zone are stored as the file they point to; other links (to folders, outside the zone,
 * broken), sockets and devices are skipped and counted. Never included: the archive being written
 * and temp files of interrupted writes (*.shedtmp). (The history of a versioned zone is not in the
 * zone: a `.git` folder there is the user's own data and is archived like any other.)
 * Files that are already compressed (images, audio, video, archives, office documents) are stored
 * rather than deflated again, which saves time and changes nothing in size.
 *
 * Compression is Node's own zlib (native speed; fflate only writes the ZIP container around it, so
 * no second deflate engine ships). Files up to one read chunk are read whole and deflated in one
 * call, and stored when deflate does not make them smaller (as zip does); larger files are deflated
 * chunk by chunk (NodeDeflate below).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Zip, ZipPassThrough } from 'fflate';
import { shedError } from '../../base/errors.js';
import { openAtomic, TEMP_SUFFIX } from '../../base/fs/atomic.js';
import { isInside } from '../../base/paths/resolve.js';
import { formatSize } from '../../base/text/size.js';
import { listSliced } from '../../base/fs/list.js';
import { sortSliced, TimeSlice } from '../../base/fs/slice.js';

const MIB = 1024 * 1024;
const READ_CHUNK = 4 * MIB;
const WRITE_BUFFER = 4 * MIB;
/** Without ZIP64 (not written by fflate) an archive holds at most 65,535 entries and 4 GiB. */
export const ZIP_MAX_ENTRIES = 65535;
const ZIP_MAX_BYTES = 0xffffffff;

const STORED_EXTENSIONS = new Set([
  'zip', 'gz', 'tgz', 'bz2', 'xz', 'zst', '7z', 'rar', 'jar', 'war', 'apk',
  'jpg', 'jpeg', 'png', 'gif', 'webp', 'heic', 'avif',
  'mp3', 'm4a', 'aac', 'ogg', 'opus', 'flac', 'mp4', 'm4v', 'mkv', 'mov', 'avi', 'webm',
  'docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'epub', 'woff', 'woff2',
]);

const DOS_MIN = new Date(1980, 0, 1, 0, 0, 0).getTime();
const DOS_MAX = new Date(2099, 11, 31, 23, 59, 58).getTime();

export interface ZipItem {
  /** Archive name ('dir/' for folders). */
  name: string;
  /** Absolute path to read (files only); its size and time are read when the file is opened. */
  abs?: string;
  /** Folders only. */
  mtimeMs?: number;
}

export interface Collected {
  items: ZipItem[];
  files: number;
  emptyDirs: number;
  skipped: string[];
}

export interface CollectOptions {
  /** Zone root (real path): links are followed only to files inside it. */
  zoneRoot: string;
  /** Real paths never to include (the archive being written). */
  exclude: Set<string>;
  includeEmptyDirs: boolean;
}

/**
 * Lists what to archive. `srcAbs` is a file or a folder; `prefix` is the archive name of the folder
 * itself ('' for a zone root: its contents go at the top of the archive).
 */
export async function collect(srcAbs: string, prefix: string, opts: CollectOptions): Promise<Collected> {
  const out: Collected = { items: [], files: 0, emptyDirs: 0, skipped: [] };
  const st = fs.statSync(srcAbs);
  if (st.isFile()) {
    out.items.push({ name: prefix, abs: srcAbs });
    out.files = 1;
    return out;
  }
  // The user shapes the folder (30,000 files in one folder, thousands of levels): sliced per entry.
  const slice = new TimeSlice();
  const walk = async (dirAbs: string, name: string): Promise<boolean> => {
    let hasFile = false;
    const dirItemIndex = out.items.length;
    let listed: fs.Dirent[];
    try {
      listed = await listSliced(dirAbs, slice);
    } catch {
      if (name !== '') out.skipped.push(`${name}/`); // removed or replaced since its parent was listed
      return false;
    }
    const entries = await sortSliced(listed, (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0), slice);
    for (const d of entries) {
      await slice.tick();
      const abs = path.join(dirAbs, d.name);
      const child = name ? `${name}/${d.name}` : d.name;
      if (opts.exclude.has(abs) || d.name.endsWith(TEMP_SUFFIX)) continue;
      if (out.items.length > ZIP_MAX_ENTRIES) throw tooMany();
      if (d.isDirectory()) {
        if (await walk(abs, child)) hasFile = true;
        continue;
      }
      let target = abs;
      if (d.isSymbolicLink()) {
        let ist: fs.Stats;
        try {
          target = fs.realpathSync(abs);
          ist = fs.statSync(target);
        } catch {
          out.skipped.push(child);
          continue;
        }
        if (!isInside(target, opts.zoneRoot) || !ist.isFile() || opts.exclude.has(target)) {
          out.skipped.push(child);
          continue;
        }
      } else if (!d.isFile()) {
        out.skipped.push(child);
        continue;
      }
      out.items.push({ name: child, abs: target });
      out.files++;
      hasFile = true;
    }
    if (!hasFile && opts.includeEmptyDirs && name !== '') {
      out.items.splice(dirItemIndex, 0, { name: `${name}/`, mtimeMs: fs.lstatSync(dirAbs, { throwIfNoEntry: false })?.mtimeMs ?? Date.now() });
      out.emptyDirs++;
    }
    return hasFile;
  };
  await walk(srcAbs, prefix);
  if (out.items.length > ZIP_MAX_ENTRIES) throw tooMany();
  return out;
}

function tooMany(): Error {
  return shedError('INVALID_PARAMETER', `The folder holds more than ${ZIP_MAX_ENTRIES} files; one ZIP archive cannot hold more.`, {
    details: { parameter: 'src', max_entries: ZIP_MAX_ENTRIES },
    hint: 'Zip its subfolders separately.',
  });
}

export interface WriteLimits {
  /** The archive may not grow past this (max file size, quota room). */
  maxBytes: number;
  quotaBound: boolean;
  shown: string;
}

export interface Written {
  /** Bytes of the archive. */
  size: number;
  /** Bytes of the files that went in. */
  inputBytes: number;
}

/** Writes the archive to a temp file beside `destAbs`, then renames it into place. */
export async function writeZip(items: ZipItem[], destAbs: string, limits: WriteLimits, progress: (done: number, total: number) => Promise<void>): Promise<Written> {
  const target = openAtomic(destAbs, 0o644);
  const fd = target.fd;
  let size = 0;
  let inputBytes = 0;
  let failure: unknown;
  // Output is copied into one reusable buffer as fflate emits it, so no chunk outlives its call.
  const out = Buffer.allocUnsafe(WRITE_BUFFER);
  let used = 0;
  const flush = () => {
    let off = 0;
    while (off < used) off += fs.writeSync(fd, out, off, used - off);
    used = 0;
  };
  const zip = new Zip((err, chunk, final) => {
    if (failure !== undefined) return;
    if (err) {
      failure = err;
      return;
    }
    size += chunk.length;
    if (size > limits.maxBytes || size > ZIP_MAX_BYTES) {
      failure = shedError(limits.quotaBound ? 'QUOTA_EXCEEDED' : 'FILE_TOO_LARGE', `The archive ${limits.shown} grew past ${limits.quotaBound ? 'the space left in the quota' : 'the largest file size allowed'} (${formatSize(Math.min(limits.maxBytes, ZIP_MAX_BYTES))}); nothing was written.`, {
        details: { limit_bytes: Math.min(limits.maxBytes, ZIP_MAX_BYTES) },
        hint: 'Zip a smaller folder, or free space with shed_delete.',
      });
      return;
    }
    if (used + chunk.length > out.length) flush();
    if (chunk.length >= out.length) {
      let off = 0;
      while (off < chunk.length) off += fs.writeSync(fd, chunk, off, chunk.length - off);
    } else {
      out.set(chunk, used);
      used += chunk.length;
    }
    if (final) flush();
  });
  const check = () => {
    if (failure !== undefined) throw failure instanceof Error && failure.name === 'ShedError' ? failure : shedError('IO_ERROR', `Could not write the archive: ${String(failure)}`);
  };
  try {
    let last = Date.now();
    const buf = Buffer.allocUnsafe(READ_CHUNK);
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (it.abs === undefined) {
        const d = new ZipPassThrough(it.name);
        Object.assign(d, { mtime: dosDate(it.mtimeMs ?? Date.now()), os: 3, attrs: ((0o40755 << 16) | 0x10) >>> 0 });
        zip.add(d);
        d.push(new Uint8Array(0), true);
      } else {
        inputBytes += addFile(zip, it, buf);
      }
      check();
      if (Date.now() - last > 100) {
        last = Date.now();
        await progress(i + 1, items.length);
        check();
      }
    }
    zip.end();
    check();
    flush();
  } catch (err) {
    target.abort();
    throw err;
  }
  await target.commit();
  return { size, inputBytes };
}

function dosDate(ms: number): Date {
  return new Date(Math.min(DOS_MAX, Math.max(DOS_MIN, ms)));
}

/** Adds one file (opened once: its size and time come from the open file). Returns its size. */
function addFile(zip: Zip, it: ZipItem, buf: Buffer): number {
  const fd = fs.openSync(it.abs!, 'r');
  try {
    const st = fs.fstatSync(fd);
    const stored = STORED_EXTENSIONS.has(path.extname(it.name).slice(1).toLowerCase());
    const attrs = { mtime: dosDate(st.mtimeMs), os: 3, attrs: (0o100644 << 16) >>> 0 };
    if (st.size < READ_CHUNK) {
      const n = readInto(fd, buf, 0);
      if (n < READ_CHUNK) {
        addSmall(zip, it.name, buf.subarray(0, n), stored, attrs);
        return n;
      }
    }
    const f = stored ? new ZipPassThrough(it.name) : new NodeDeflate(it.name);
    Object.assign(f, attrs);
    zip.add(f);
    let total = 0;
    for (;;) {
      const n = readInto(fd, buf, total);
      total += n;
      // The buffer is reused for the next chunk: whatever holds on to this one gets its own copy.
      f.push(Uint8Array.prototype.slice.call(buf, 0, n), n < buf.length);
      if (n < buf.length) return total;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Fills buf from the file at `pos` (short only at the end of the file). */
function readInto(fd: number, buf: Buffer, pos: number): number {
  let got = 0;
  while (got < buf.length) {
    const n = fs.readSync(fd, buf, got, buf.length - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/** A ZIP entry whose deflated data is already known (fflate still computes size and CRC). */
class Precompressed extends ZipPassThrough {
  constructor(
    name: string,
    private readonly deflated: Uint8Array<ArrayBuffer>,
  ) {
    super(name);
    this.compression = 8;
  }

  override process(_chunk: Uint8Array, final: boolean): void {
    if (final) this.ondata(null, this.deflated, true);
  }
}

/** DEFLATE's window: how far back a match may reach. */
const WINDOW = 32 * 1024;

/**
 * A ZIP entry deflated chunk by chunk by node:zlib, synchronously. Each chunk is compressed on its
 * own and ends with a sync flush (byte-aligned, not final), with the previous chunk's last 32 KiB
 * as its preset dictionary: the pieces join into one DEFLATE stream whose matches may reach back
 * into the previous chunk, as good as a single pass (the way pigz compresses in parallel). The last
 * chunk ends the stream. fflate computes size and CRC over the uncompressed chunks (push).
 */
class NodeDeflate extends ZipPassThrough {
  private window: Buffer | undefined;

  constructor(name: string) {
    super(name);
    this.compression = 8;
  }

  override process(chunk: Uint8Array, final: boolean): void {
    const flush = final ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH;
    const out = zlib.deflateRawSync(chunk, { level: 6, finishFlush: flush, ...(this.window ? { dictionary: this.window } : {}) });
    if (!final) {
      const joined = this.window && chunk.length < WINDOW ? Buffer.concat([this.window, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      this.window = Buffer.from(joined.subarray(Math.max(0, joined.length - WINDOW)));
    }
    this.ondata(null, out, final);
  }
}

/** Below this, deflate cannot win enough to be worth a call (zip stores such files too). */
const TINY = 64;

/**
 * Adds a file read whole: deflated by node:zlib when that makes it smaller, else stored, as
 * zip does. The window is sized to the file, which makes small files much cheaper to compress.
 */
function addSmall(zip: Zip, name: string, data: Uint8Array, stored: boolean, attrs: object): void {
  let deflated: Uint8Array<ArrayBuffer> | undefined;
  if (!stored && data.length >= TINY) {
    const windowBits = Math.max(9, Math.min(15, Math.ceil(Math.log2(data.length + 1))));
    const out = zlib.deflateRawSync(data, { level: 6, windowBits, memLevel: 8 });
    if (out.length < data.length) deflated = out;
  }
  const f = deflated ? new Precompressed(name, deflated) : new ZipPassThrough(name);
  Object.assign(f, attrs);
  zip.add(f);
  f.push(data, true);
}

