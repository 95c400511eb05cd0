/**
 * Git's index file as a format (versions 2 and 3, the split-index `link` extension): records encoded
 * and located in a buffer, never read or written here (services/vcs/gitindex.ts does the disk side).
 */
import { decodeEwah } from './ewah.js';

/** The stat data an index record keeps (a BigIntStats has it). */
export interface IndexStat {
  ctimeNs: bigint;
  mtimeNs: bigint;
  dev: bigint;
  ino: bigint;
  uid: bigint;
  gid: bigint;
  size: bigint;
}

/** One entry: its name (raw bytes) and its whole on-disk record. */
export interface Entry {
  name: Buffer;
  raw: Buffer;
}

export interface Layout {
  buf: Buffer;
  version: number;
  count: number;
  /** Entry offsets; offsets[count] is where the extensions start. */
  offsets: Uint32Array;
}

/** One index record; `st` undefined gives zeroed stat data. */
export function encodeEntry(name: Buffer, oid: string, mode: string, st: IndexStat | undefined): Buffer {
  const size = (62 + name.length + 8) & ~7;
  const b = Buffer.alloc(size);
  if (st !== undefined) {
    const u32 = (v: bigint) => Number(v & 0xffffffffn);
    b.writeUInt32BE(u32(st.ctimeNs / 1_000_000_000n), 0);
    b.writeUInt32BE(u32(st.ctimeNs % 1_000_000_000n), 4);
    b.writeUInt32BE(u32(st.mtimeNs / 1_000_000_000n), 8);
    b.writeUInt32BE(u32(st.mtimeNs % 1_000_000_000n), 12);
    b.writeUInt32BE(u32(st.dev), 16);
    b.writeUInt32BE(u32(st.ino), 20);
    b.writeUInt32BE(u32(st.uid), 28);
    b.writeUInt32BE(u32(st.gid), 32);
    b.writeUInt32BE(u32(st.size), 36);
  }
  b.writeUInt32BE(indexMode(mode), 24);
  b.write(oid, 40, 'hex');
  b.writeUInt16BE(Math.min(name.length, 0xfff), 60);
  name.copy(b, 62);
  return b;
}

/** A record with its name put back (git may omit the names of replacing entries). */
export function withName(raw: Buffer, name: Buffer): Buffer {
  const flags = raw.readUInt16BE(60);
  const head = (flags & 0x4000) !== 0 ? 64 : 62;
  const b = Buffer.alloc((head + name.length + 8) & ~7);
  raw.copy(b, 0, 0, head);
  b.writeUInt16BE((flags & 0xf000) | Math.min(name.length, 0xfff), 60);
  name.copy(b, head);
  return b;
}

export function indexMode(mode: string): number {
  if (mode === '120000') return 0o120000;
  if (mode === '160000') return 0o160000;
  return (parseInt(mode, 8) & 0o100) !== 0 ? 0o100755 : 0o100644;
}

/** The split index's `link` extension (shared file, deletions, replacements); 'unknown' for a mandatory extension we do not know, or a damaged link. */
export type SplitLink = { shared: string; deletes: number[]; replaces: number[] };

export function splitLink(main: Layout): SplitLink | undefined | 'unknown' {
  let link: SplitLink | undefined;
  const buf = main.buf;
  let pos = main.offsets[main.count]!;
  const end = buf.length - 20;
  while (pos + 8 <= end) {
    const sig = buf.toString('latin1', pos, pos + 4);
    const size = buf.readUInt32BE(pos + 4);
    if (sig === 'link') {
      const data = buf.subarray(pos + 8, pos + 8 + size);
      const shared = data.toString('hex', 0, 20);
      const del = data.length > 20 ? decodeEwah(data, 20) : { positions: [], size: 0 };
      const rep = del !== undefined && data.length > 20 ? decodeEwah(data, 20 + del.size) : { positions: [], size: 0 };
      if (shared.length !== 40 || del === undefined || rep === undefined) return 'unknown';
      link = { shared, deletes: del.positions, replaces: rep.positions };
    } else if (sig.charCodeAt(0) < 0x41 || sig.charCodeAt(0) > 0x5a) {
      return 'unknown';
    }
    // Optional extensions (cache-tree, untracked cache...) may describe the old state: dropped on rewrite.
    pos += 8 + size;
  }
  return link;
}

/** Offsets of the entries of a version 2/3 index; undefined for anything else (v4, damage). */
export function layout(buf: Buffer | undefined): Layout | undefined {
  if (buf === undefined || buf.length < 32 || buf.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) return undefined;
  const count = buf.readUInt32BE(8);
  const end = buf.length - 20;
  const offsets = new Uint32Array(count + 1);
  let pos = 12;
  for (let n = 0; n < count; n++) {
    if (pos + 62 > end) return undefined;
    offsets[n] = pos;
    const flags = buf.readUInt16BE(pos + 60);
    const extended = (flags & 0x4000) !== 0;
    if (extended && version < 3) return undefined;
    const nameStart = pos + 62 + (extended ? 2 : 0);
    let nameLen = flags & 0xfff;
    if (nameLen === 0xfff) nameLen = buf.indexOf(0, nameStart) - nameStart;
    if (nameLen < 0 || nameStart + nameLen > end) return undefined;
    pos += (nameStart - pos + nameLen + 8) & ~7;
  }
  offsets[count] = pos;
  return { buf, version, count, offsets };
}

export function nameAt(l: Layout, i: number): Buffer {
  const pos = l.offsets[i]!;
  const flags = l.buf.readUInt16BE(pos + 60);
  const start = pos + 62 + ((flags & 0x4000) !== 0 ? 2 : 0);
  const len = flags & 0xfff;
  return l.buf.subarray(start, len === 0xfff ? l.buf.indexOf(0, start) : start + len);
}

export function rawAt(l: Layout, i: number): Buffer {
  return l.buf.subarray(l.offsets[i]!, l.offsets[i + 1]!);
}

export function header(count: number, entries: Entry[]): Buffer {
  const h = Buffer.alloc(12);
  h.write('DIRC', 0, 'latin1');
  h.writeUInt32BE(entries.some((e) => (e.raw.readUInt16BE(60) & 0x4000) !== 0) ? 3 : 2, 4);
  h.writeUInt32BE(count, 8);
  return h;
}

/** The small `index`: added entries and the link to the shared index with its delete bitmap. */
