/**
 * A tiny ZIP writer for tests, with every field under control: names that escape, symbolic-link and
 * device attributes, lying sizes, bad checksums, encryption flags, odd methods, many entries.
 * Independent of the code under test (node:zlib for deflate).
 */
import zlib from 'node:zlib';

export interface RawEntry {
  name: string | Buffer;
  data?: Buffer | string;
  /** 0 stored, 8 deflate (default 8 when data is non-empty). */
  method?: number;
  /** Unix mode (with type bits), stored in the external attributes with host = Unix. */
  mode?: number;
  flags?: number;
  /** Override the sizes / CRC written in the headers. */
  declaredSize?: number;
  crc?: number;
  /** Raw compressed bytes to store instead of compressing data. */
  raw?: Buffer;
}

function crc32(buf: Buffer): number {
  return zlib.crc32(buf);
}

export function buildZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = typeof e.name === 'string' ? Buffer.from(e.name, 'utf8') : e.name;
    const data = typeof e.data === 'string' ? Buffer.from(e.data) : (e.data ?? Buffer.alloc(0));
    const method = e.method ?? (data.length > 0 ? 8 : 0);
    const comp = e.raw ?? (method === 8 ? zlib.deflateRawSync(data) : data);
    const crc = e.crc ?? crc32(data);
    const size = e.declaredSize ?? data.length;
    const flags = (e.flags ?? 0) | (typeof e.name === 'string' ? 0x800 : 0);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE((44 << 9) | (1 << 5) | 1, 12); // 2024-01-01
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(comp.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, comp);
    const cen = Buffer.alloc(46);
    cen.writeUInt32LE(0x02014b50, 0);
    cen.writeUInt16LE(e.mode !== undefined ? (3 << 8) | 20 : 20, 4);
    cen.writeUInt16LE(20, 6);
    cen.writeUInt16LE(flags, 8);
    cen.writeUInt16LE(method, 10);
    cen.writeUInt16LE(0, 12);
    cen.writeUInt16LE((44 << 9) | (1 << 5) | 1, 14);
    cen.writeUInt32LE(crc >>> 0, 16);
    cen.writeUInt32LE(comp.length, 20);
    cen.writeUInt32LE(size, 24);
    cen.writeUInt16LE(name.length, 28);
    cen.writeUInt32LE(e.mode !== undefined ? (e.mode << 16) >>> 0 : 0, 38);
    cen.writeUInt32LE(offset, 42);
    centrals.push(cen, name);
    offset += 30 + name.length + comp.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

export const S_IFLNK = 0o120777;
export const S_IFCHR = 0o020644;
export const S_IFIFO = 0o010644;
export const S_IFREG = 0o100644;
