/**
 * The ZIP central directory (the index at the end of an archive) as a format: names, sizes, methods,
 * flags, and the external attributes that say whether an entry is a symbolic link or a device.
 * ZIP64 records are understood; multi-disk archives are not. Pure: the caller hands in a reader of
 * byte ranges (only the tail and the directory are asked for, never the entries' data) and a pause
 * between batches of entries; the disk side is services/archive/central.ts.
 */

const SIG_EOCD = 0x06054b50;
const SIG_EOCD64 = 0x06064b50;
const SIG_LOC64 = 0x07064b50;
const SIG_CEN = 0x02014b50;
const MAX_TAIL = 22 + 65535;
/** A directory larger than this is not a real archive's. */
const MAX_DIRECTORY_BYTES = 64 << 20;

export type EntryKind = 'file' | 'dir' | 'symlink' | 'device';

export interface ZipEntry {
  /** Name as stored (decoded: UTF-8 when flagged or valid, else code page 437). */
  name: string;
  kind: EntryKind;
  method: number;
  flags: number;
  encrypted: boolean;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  /** DOS date and time fields (local time, as zip tools write them); see entryTime(). */
  dosDate: number;
  dosTime: number;
  /** Unix permission bits when the archive recorded them. */
  unixMode: number | undefined;
}

export interface ZipDirectory {
  entries: ZipEntry[];
  /** Archive size on disk. */
  fileSize: number;
  comment: string;
}

/** Why bytes are not a ZIP directory; `multiPart` when they are one part of a split archive. */
export class ZipFormatError extends Error {
  constructor(
    readonly why: string,
    readonly multiPart = false,
  ) {
    super(why);
  }
}

/** Byte ranges of an archive: `read` may return fewer bytes than asked at the end of the file. */
export interface ZipSource {
  size: number;
  read(offset: number, length: number): Buffer;
}

/** True when the first bytes are a ZIP signature (local header, or an empty archive's end record). */
export function looksLikeZip(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && ((head[2] === 3 && head[3] === 4) || (head[2] === 5 && head[3] === 6) || (head[2] === 7 && head[3] === 8));
}

/**
 * Lists the entries. `onCount` sees the declared count before the directory is read (a zip claiming
 * a million entries costs nothing if it refuses); `pause` runs every 256 entries (an archive can
 * list 100,000 of them).
 */
export async function parseDirectory(src: ZipSource, onCount?: (declared: number) => void, pause?: () => Promise<void>): Promise<ZipDirectory> {
  const fileSize = src.size;
  if (fileSize < 22) throw new ZipFormatError('too short');
  const tailLen = Math.min(fileSize, MAX_TAIL);
  const tail = src.read(fileSize - tailLen, tailLen);
  let e = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === SIG_EOCD && i + 22 + tail.readUInt16LE(i + 20) <= tail.length) {
      e = i;
      break;
    }
  }
  if (e === -1) throw new ZipFormatError('no end-of-archive record; the file may be truncated');
  const eocdPos = fileSize - tailLen + e;
  const disk = tail.readUInt16LE(e + 4);
  const cdDisk = tail.readUInt16LE(e + 6);
  let count = tail.readUInt16LE(e + 10);
  let cdSize = tail.readUInt32LE(e + 12);
  let cdOffset = tail.readUInt32LE(e + 16);
  const comment = tail.toString('utf8', e + 22, e + 22 + tail.readUInt16LE(e + 20));
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const locPos = eocdPos - 20;
    if (locPos < 0) throw new ZipFormatError('ZIP64 locator missing');
    const loc = src.read(locPos, 20);
    if (loc.readUInt32LE(0) !== SIG_LOC64) throw new ZipFormatError('ZIP64 locator missing');
    const recPos = Number(loc.readBigUInt64LE(8));
    const rec = src.read(recPos, 56);
    if (rec.length < 56 || rec.readUInt32LE(0) !== SIG_EOCD64) throw new ZipFormatError('ZIP64 end record missing');
    count = Number(rec.readBigUInt64LE(32));
    cdSize = Number(rec.readBigUInt64LE(40));
    cdOffset = Number(rec.readBigUInt64LE(48));
  } else if (disk !== 0 || cdDisk !== 0) {
    throw new ZipFormatError('multi-part', true);
  }
  onCount?.(count);
  if (cdOffset + cdSize > fileSize || cdSize > MAX_DIRECTORY_BYTES) throw new ZipFormatError('the central directory lies outside the file');
  const cd = src.read(cdOffset, cdSize);
  const entries: ZipEntry[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (i % 256 === 0) await pause?.();
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== SIG_CEN) throw new ZipFormatError(`directory entry ${i + 1} is damaged`);
    const madeBy = cd.readUInt16LE(p + 4);
    const flags = cd.readUInt16LE(p + 8);
    const method = cd.readUInt16LE(p + 10);
    const time = cd.readUInt16LE(p + 12);
    const date = cd.readUInt16LE(p + 14);
    const crc = cd.readUInt32LE(p + 16);
    let compressedSize = cd.readUInt32LE(p + 20);
    let size = cd.readUInt32LE(p + 24);
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const commentLen = cd.readUInt16LE(p + 32);
    const external = cd.readUInt32LE(p + 38);
    let localOffset = cd.readUInt32LE(p + 42);
    const nameStart = p + 46;
    const extraStart = nameStart + nameLen;
    const extraEnd = extraStart + extraLen;
    if (extraEnd + commentLen > cd.length) throw new ZipFormatError(`directory entry ${i + 1} is damaged`);
    // ZIP64 extra field: the 0xFFFFFFFF fields, in order, as 64-bit values.
    if (size === 0xffffffff || compressedSize === 0xffffffff || localOffset === 0xffffffff) {
      for (let x = extraStart; x + 4 <= extraEnd; ) {
        const id = cd.readUInt16LE(x);
        const len = cd.readUInt16LE(x + 2);
        if (id === 0x0001) {
          let q = x + 4;
          const take = () => {
            const v = q + 8 <= Math.min(x + 4 + len, extraEnd) ? Number(cd.readBigUInt64LE(q)) : undefined;
            q += 8;
            return v;
          };
          if (size === 0xffffffff) size = take() ?? size;
          if (compressedSize === 0xffffffff) compressedSize = take() ?? compressedSize;
          if (localOffset === 0xffffffff) localOffset = take() ?? localOffset;
        }
        x += 4 + len;
      }
    }
    const name = decodeName(cd, nameStart, extraStart, flags, extraEnd);
    const host = madeBy >> 8;
    const upper = external >>> 16;
    const unixMode = host === 3 || host === 19 || upper !== 0 ? upper : undefined;
    entries.push({
      name,
      kind: kindOf(name, unixMode, external),
      method,
      flags,
      encrypted: (flags & 1) !== 0,
      crc,
      compressedSize,
      size,
      localOffset,
      dosDate: date,
      dosTime: time,
      unixMode: unixMode === undefined ? undefined : unixMode & 0o7777,
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return { entries, fileSize, comment };
}

function kindOf(name: string, unixMode: number | undefined, external: number): EntryKind {
  const fmt = (unixMode ?? 0) & 0o170000;
  if (fmt === 0o120000) return 'symlink';
  if (fmt === 0o020000 || fmt === 0o060000 || fmt === 0o010000 || fmt === 0o140000) return 'device';
  if (fmt === 0o040000 || name.endsWith('/') || name.endsWith('\\') || (external & 0x10) !== 0) return 'dir';
  return 'file';
}

/** Modification time of an entry. */
export function entryTime(e: Pick<ZipEntry, 'dosDate' | 'dosTime'>): Date {
  return dosTime(e.dosDate, e.dosTime);
}

function dosTime(date: number, time: number): Date {
  if (date === 0) return new Date(1980, 0, 1);
  return new Date(((date >> 9) & 0x7f) + 1980, ((date >> 5) & 0xf) - 1, date & 0x1f, (time >> 11) & 0x1f, (time >> 5) & 0x3f, (time & 0x1f) * 2);
}

// Code page 437, bytes 0x80-0xFF (the encoding of names in zips without the UTF-8 flag).
const CP437 =
  'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The name at cd[start, end): UTF-8 when flagged or valid, else code page 437. */
function decodeName(cd: Buffer, start: number, end: number, flags: number, extraEnd: number): string {
  if ((flags & 0x800) !== 0) return cd.toString('utf8', start, end);
  // Info-ZIP Unicode Path extra field (0x7075): version 1, CRC of the raw name, UTF-8 name.
  for (let x = end; x + 4 <= extraEnd; ) {
    const id = cd.readUInt16LE(x);
    const len = cd.readUInt16LE(x + 2);
    if (id === 0x7075 && len > 5 && cd[x + 4] === 1 && x + 4 + len <= extraEnd) return cd.toString('utf8', x + 9, x + 4 + len);
    x += 4 + len;
  }
  let ascii = true;
  for (let i = start; i < end; i++) {
    if (cd[i]! >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return cd.toString('latin1', start, end);
  const bytes = cd.subarray(start, end);
  // Many tools write UTF-8 without setting the flag: take valid UTF-8 as UTF-8.
  try {
    return utf8.decode(bytes);
  } catch {
    let out = '';
    for (const b of bytes) out += b < 0x80 ? String.fromCharCode(b) : CP437[b - 0x80];
    return out;
  }
}

export const METHOD_NAMES: Record<number, string> = { 0: 'stored', 8: 'deflate', 9: 'deflate64', 12: 'bzip2', 14: 'lzma', 93: 'zstd', 95: 'xz', 98: 'ppmd', 99: 'aes' };
