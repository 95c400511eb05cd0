/**
 * Reverse deltas for the shadow repositories: when a call changes a big file, the newest version
 * stays a whole (zlib) git object and the version before becomes a small delta against it (the
 * bytes before and after the changed region are copied from the newer version). 100 one-line edits
 * of a 10 MB file then cost one compressed copy plus 100 small deltas, not 100 copies.
 *
 * A delta is written (atomically), read back and checked against its object id before the loose
 * object goes, so a kill at any moment leaves the version readable one way or the other. A delta's
 * base was a whole object when the delta was made; it may become a delta itself later (against an
 * even newer version), so reads follow the chain, each step checked by hash. Only the shadow
 * repositories are shrunk: the zones' own histories stay plain git.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { atomicWrite } from '../../base/fs/atomic.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { hashObject } from '../../formats/git/objects.js';
import { hasLoose, loosePath, readBlob } from '../vcs/objects.js';
import type { FileChange } from '../vcs/history/trees.js';
import { readBytes } from '../../base/fs/read.js';
import { lstatIfAny } from '../../base/fs/stat.js';

/** Smaller versions are kept whole: a delta would save little. */
const MIN_BYTES = 64 * 1024;
/** Below this stored (compressed) size an object is not even read. */
const MIN_STORED = 4096;
const MAGIC = 'FSD1';
const MAX_CHAIN = 10_000;

export function deltaPath(gitdir: string, oid: string): string {
  return path.join(`${gitdir}.deltas`, oid.slice(0, 2), oid.slice(2));
}

/**
 * Blobs read lately (objects never change): an undo reads each blob twice, once to check the
 * quota and once to write it back. Bounded by bytes; big blobs are not kept.
 */
const cache = new Map<string, Buffer>();
let cachedBytes = 0;
const CACHE_BYTES = 64 * 1024 * 1024;
const CACHE_ONE = 4 * 1024 * 1024;

function remember(key: string, blob: Buffer): Buffer {
  if (blob.length > CACHE_ONE) return blob;
  cache.set(key, blob);
  cachedBytes += blob.length;
  for (const [k, b] of cache) {
    if (cachedBytes <= CACHE_BYTES) break;
    cache.delete(k);
    cachedBytes -= b.length;
  }
  return blob;
}

/** A blob of a shadow repository (or a versioned zone's): the git object, else its delta chain. */
export async function readUndoBlob(gitdir: string, oid: string, depth = 0): Promise<Buffer> {
  const key = `${gitdir}\0${oid}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  return remember(key, await readUncached(gitdir, oid, depth));
}

async function readUncached(gitdir: string, oid: string, depth: number): Promise<Buffer> {
  if (depth >= MAX_CHAIN) return readBlob(gitdir, oid);
  if (hasLoose(gitdir, oid)) {
    try {
      return await readBlob(gitdir, oid);
    } catch (err) {
      // Turned into a delta by a writer between the two looks (a preview reads without the call lock).
      if (!fs.existsSync(deltaPath(gitdir, oid))) throw err;
    }
  }
  let raw: Buffer;
  try {
    raw = readBytes(deltaPath(gitdir, oid));
  } catch {
    return readBlob(gitdir, oid); // packed, or missing (readBlob says so)
  }
  const d = decode(raw);
  const base = await readUndoBlob(gitdir, d.base, depth + 1);
  const out = apply(base, d);
  if (hashObject('blob', out) !== oid) throw new Error(`undo delta ${oid.slice(0, 7)} does not rebuild its object`);
  return out;
}

interface Delta {
  base: string;
  prefix: number;
  suffix: number;
  middle: Buffer;
}

function encode(d: Delta): Buffer {
  const head = Buffer.alloc(4 + 40 + 16);
  head.write(MAGIC, 0, 'latin1');
  head.write(d.base, 4, 'latin1');
  head.writeBigUInt64BE(BigInt(d.prefix), 44);
  head.writeBigUInt64BE(BigInt(d.suffix), 52);
  return Buffer.concat([head, zlib.deflateSync(d.middle)]);
}

/** The object a stored delta is made against (a newer version of the file). */
export function deltaBase(raw: Buffer): string | undefined {
  return raw.subarray(0, 4).toString('latin1') === MAGIC ? raw.subarray(4, 44).toString('latin1') : undefined;
}

function decode(raw: Buffer): Delta {
  if (raw.subarray(0, 4).toString('latin1') !== MAGIC) throw new Error('not an undo delta');
  return { base: raw.subarray(4, 44).toString('latin1'), prefix: Number(raw.readBigUInt64BE(44)), suffix: Number(raw.readBigUInt64BE(52)), middle: zlib.inflateSync(raw.subarray(60)) };
}

function apply(base: Buffer, d: Delta): Buffer {
  return Buffer.concat([base.subarray(0, d.prefix), d.middle, base.subarray(base.length - d.suffix)]);
}

/** The older version as: the newer one's first `prefix` bytes, `middle`, its last `suffix` bytes. */
function diff(older: Buffer, newer: Buffer, base: string): Delta {
  const max = Math.min(older.length, newer.length);
  let prefix = 0;
  while (prefix < max && older[prefix] === newer[prefix]) prefix++;
  let suffix = 0;
  while (suffix < max - prefix && older[older.length - 1 - suffix] === newer[newer.length - 1 - suffix]) suffix++;
  return { base, prefix, suffix, middle: Buffer.from(older.subarray(prefix, older.length - suffix)) };
}

/** After a shadow commit: each big file it changed keeps its older version as a delta against the new one. */
export async function shrinkChanged(gitdir: string, changes: readonly FileChange[]): Promise<number> {
  const slice = new TimeSlice();
  let shrunk = 0;
  for (const ch of changes) {
    await slice.tick();
    if (ch.old === undefined || ch.new === undefined || ch.old.oid === ch.new.oid) continue;
    // Small objects stay whole without being read: one lstat (a 1,000-file turn of small files costs
    // 1,000 of them), before the checks that the objects are real files (nothing is read through a link).
    if ((lstatIfAny(loosePath(gitdir, ch.old.oid))?.size ?? 0) < MIN_STORED) continue;
    // The base must be whole now (it is the version just committed).
    if (!hasLoose(gitdir, ch.old.oid) || !hasLoose(gitdir, ch.new.oid)) continue;
    const older = await readBlob(gitdir, ch.old.oid);
    if (older.length < MIN_BYTES) continue;
    const newer = await readBlob(gitdir, ch.new.oid);
    const d = diff(older, newer, ch.new.oid);
    if (d.middle.length > older.length / 2) continue; // not a small edit: a delta saves little
    const file = deltaPath(gitdir, ch.old.oid);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await atomicWrite(file, encode(d));
    // Read back before the whole object goes: the version must stay readable at every moment.
    if (hashObject('blob', apply(newer, decode(readBytes(file)))) !== ch.old.oid) {
      fs.rmSync(file, { force: true });
      continue;
    }
    fs.rmSync(loosePath(gitdir, ch.old.oid), { force: true });
    shrunk++;
  }
  return shrunk;
}
