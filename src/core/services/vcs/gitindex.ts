/**
 * Keeps the repository's `index` (`git/index`) equal to HEAD, so that a real `git status` of the
 * work tree is clean after each commit (git compares HEAD with the index, and the index with the files).
 *
 * A plain index lists every tracked file in one file, so updating it means rewriting it (800 KB at
 * 10,000 files, whose pages the next fsync anywhere then has to flush). We write git's split-index
 * form instead: `sharedindex.<sha>` holds a full index written once in a while, and
 * `index` holds only what changed since (new entries, and a bitmap of the shared entries that
 * no longer count) plus a `link` extension naming the shared file. A commit rewrites only that
 * small file: O(changes since the last rebase). When it grows past a fifth of the shared index,
 * the next commit writes a new shared index (amortised O(1) per change). Any git (2.x) reads this
 * form, whatever its config; no fsync, as the index is a cache that git can rebuild.
 *
 * `fileshed-index-head` records which commit the index matches. If it does not match the
 * parent of the new commit (first commit, crash between ref move and index write, index damaged or
 * in a form we do not splice), the index is rebuilt from the new tree, reusing the stat data of
 * entries whose content did not change. Every per-entry loop yields within a slice (slice.ts):
 * one call can commit 30,000 files. Every file is read and written through fs/nofollow.ts.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { encodeEwah } from '../../formats/git/ewah.js';
import { encodeEntry, header, layout, nameAt, rawAt, splitLink, withName, type Entry, type Layout, type SplitLink } from '../../formats/git/index-file.js';
import { createStateFile, listStateDir, readStateFile, renameState, stateKind, writeNewStateFile } from '../../base/fs/nofollow.js';
import { isTreeMode } from '../../formats/git/objects.js';
import { readTree } from './objects.js';
import { writeAll } from '../../base/fs/read.js';
import { sortSliced, TimeSlice } from '../../base/fs/slice.js';
import type { WorkBlob } from './worktree.js';

const MARKER = 'fileshed-index-head';
/** The small index may hold this many entries (or a fifth of the shared one) before a rebase. */
const MIN_SPLIT_ENTRIES = 1000;

export interface IndexUpdate {
  parent: string | undefined;
  head: string;
  tree: string;
  /** Changed zone-relative paths: each is removed with everything below it, then `blobs` are added. */
  changed: string[];
  blobs: WorkBlob[];
}

interface IndexState {
  main: Layout;
  link: SplitLink | undefined;
  shared: Layout | undefined;
}

export async function updateIndex(gitdir: string, u: IndexUpdate, slice = new TimeSlice()): Promise<void> {
  const inStep = readText(path.join(gitdir, MARKER)) === u.parent && u.parent !== undefined;
  const state = inStep ? readState(gitdir) : undefined;
  // A commit can add 30,000 entries: every per-entry loop here yields within a slice.
  const added: Entry[] = [];
  for (const b of u.blobs) {
    await slice.tick();
    const name = Buffer.from(b.path);
    added.push({ name, raw: encodeEntry(name, b.oid, b.mode, b.stat) });
  }
  if (state?.link !== undefined && state.shared !== undefined && state.link.replaces.length === 0) {
    // The usual case: drop the changed paths, add their new entries, rewrite only the small file.
    const shared = state.shared;
    const deletes = new Set(state.link.deletes);
    const gone = await removedMask(shared.count, (i) => nameAt(shared, i), u.changed, added, slice);
    for (let i = 0; i < gone.length; i++) {
      if (i % TICK_EVERY === 0) await slice.tick();
      if (gone[i]) deletes.add(i);
    }
    const main = state.main;
    const mainGone = await removedMask(main.count, (i) => nameAt(main, i), u.changed, added, slice);
    const kept: Entry[] = [];
    for (let i = 0; i < main.count; i++) {
      if (i % TICK_EVERY === 0) await slice.tick();
      if (!mainGone[i]) kept.push({ name: nameAt(main, i), raw: rawAt(main, i) });
    }
    const adds = await mergeSorted(kept, added, slice);
    if (adds.length <= Math.max(MIN_SPLIT_ENTRIES, shared.count / 5)) {
      await writeMain(gitdir, adds, state.link.shared, await sortSliced([...deletes], (a, b) => a - b, slice), slice);
      writeSmall(gitdir, MARKER, `${u.head}\n`);
      return;
    }
  }
  let full: Entry[];
  if (state !== undefined) {
    // A plain index, git's replacements, or too many changes: splice the whole list, rebase.
    const all = await mergedEntries(state, slice);
    const gone = await removedMask(all.length, (i) => all[i]!.name, u.changed, added, slice);
    const kept: Entry[] = [];
    for (let i = 0; i < all.length; i++) {
      if (i % TICK_EVERY === 0) await slice.tick();
      if (!gone[i]) kept.push(all[i]!);
    }
    full = await mergeSorted(kept, added, slice);
  } else {
    full = await rebuild(gitdir, u.tree, u.blobs, slice);
  }
  await writeSplit(gitdir, full, slice);
  writeSmall(gitdir, MARKER, `${u.head}\n`);
}

/** Entries handled between two looks at the clock in the cheap per-entry loops. */
const TICK_EVERY = 256;

/** The index entries (paths as byte strings, blob ids, raw records), or undefined if there is no usable index. */
export async function readIndexEntries(gitdir: string, slice = new TimeSlice()): Promise<Map<string, { oid: string; raw: Buffer }> | undefined> {
  const state = readState(gitdir);
  if (state === undefined) return undefined;
  const out = new Map<string, { oid: string; raw: Buffer }>();
  for (const e of await mergedEntries(state, slice)) {
    if (out.size % TICK_EVERY === 0) await slice.tick();
    out.set(e.name.toString('latin1'), { oid: e.raw.toString('hex', 40, 60), raw: e.raw });
  }
  return out;
}

/**
 * Which of `count` sorted entries fall under the changed paths: each path itself and everything
 * below it; and the ancestors of the files added (a file that became a folder). Only those: a
 * changed path under what is still a file (nothing there to add) leaves that file in place, as the
 * commit's tree does (commit.ts). Binary searches, no decoding.
 */
async function removedMask(count: number, nameOf: (i: number) => Buffer, changed: string[], added: readonly Entry[], slice: TimeSlice): Promise<Uint8Array> {
  const gone = new Uint8Array(count);
  const lowerBound = (key: Buffer): number => {
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(nameOf(mid), key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const exact = (key: Buffer) => {
    const i = lowerBound(key);
    if (i < count && nameOf(i).equals(key)) gone[i] = 1;
  };
  for (const rel of changed) {
    await slice.tick();
    if (rel === '') return gone.fill(1);
    const key = Buffer.from(rel);
    exact(key);
    // Everything below: names from "rel/" up to (not including) "rel0" ('0' follows '/').
    gone.fill(1, lowerBound(Buffer.concat([key, SLASH])), lowerBound(Buffer.concat([key, AFTER_SLASH])));
  }
  for (let n = 0; n < added.length; n++) {
    if (n % TICK_EVERY === 0) await slice.tick();
    const name = added[n]!.name;
    for (let i = name.indexOf(0x2f); i >= 0; i = name.indexOf(0x2f, i + 1)) exact(name.subarray(0, i));
  }
  return gone;
}

const SLASH = Buffer.from('/');
const AFTER_SLASH = Buffer.from('0');

/** Two name-sorted lists as one (byte order, as git sorts the index); `b` need not be sorted. */
async function mergeSorted(a: Entry[], b: Entry[], slice: TimeSlice): Promise<Entry[]> {
  if (b.length === 0) return a;
  const bs = await sortSliced(b, byName, slice);
  const out: Entry[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < bs.length) {
    if ((i + j) % TICK_EVERY === 0) await slice.tick();
    if (j >= bs.length || (i < a.length && Buffer.compare(a[i]!.name, bs[j]!.name) < 0)) out.push(a[i++]!);
    else out.push(bs[j++]!);
  }
  return out;
}

const byName = (x: Entry, y: Entry) => Buffer.compare(x.name, y.name);

/** The full list the index stands for: the shared entries minus deleted ones, replacements applied, plus the added ones. */
async function mergedEntries(state: IndexState, slice: TimeSlice): Promise<Entry[]> {
  const tick = async (i: number) => {
    if (i % TICK_EVERY === 0) await slice.tick();
  };
  const main = state.main;
  const mainEntries: Entry[] = [];
  for (let i = 0; i < main.count; i++) {
    await tick(i);
    mainEntries.push({ name: nameAt(main, i), raw: rawAt(main, i) });
  }
  if (state.link === undefined || state.shared === undefined) return mainEntries;
  const shared = state.shared;
  const deletes = new Set(state.link.deletes);
  const replaced = new Map<number, Entry>();
  state.link.replaces.forEach((pos, k) => {
    const e = mainEntries[k];
    // Replacing entries may leave their name out: it is the shared entry's.
    if (e !== undefined) replaced.set(pos, e.name.length > 0 ? e : { name: nameAt(shared, pos), raw: withName(e.raw, nameAt(shared, pos)) });
  });
  const base: Entry[] = [];
  for (let i = 0; i < shared.count; i++) {
    await tick(i);
    const r = replaced.get(i);
    if (r !== undefined) base.push(r);
    else if (!deletes.has(i)) base.push({ name: nameAt(shared, i), raw: rawAt(shared, i) });
  }
  return mergeSorted(base, mainEntries.slice(state.link.replaces.length), slice);
}

async function rebuild(gitdir: string, tree: string, blobs: WorkBlob[], slice: TimeSlice): Promise<Entry[]> {
  const fresh = new Map(blobs.map((b) => [Buffer.from(b.path).toString('latin1'), b]));
  let previous = new Map<string, { oid: string; raw: Buffer }>();
  try {
    previous = (await readIndexEntries(gitdir, slice)) ?? previous;
  } catch {
    // a damaged index is simply not reused
  }
  const files: { key: string; mode: string; oid: string }[] = [];
  const walk = async (oid: string, prefix: string): Promise<void> => {
    for (const e of await readTree(gitdir, oid)) {
      await slice.tick();
      const key = prefix + e.name;
      if (isTreeMode(e.mode)) await walk(e.oid, `${key}/`);
      else files.push({ key, mode: e.mode, oid: e.oid });
    }
  };
  await walk(tree, '');
  const out: Entry[] = [];
  for (const f of files) {
    await slice.tick();
    const name = Buffer.from(f.key, 'latin1');
    const blob = fresh.get(f.key);
    const prev = previous.get(f.key);
    if (blob !== undefined && blob.oid === f.oid) out.push({ name, raw: encodeEntry(name, blob.oid, blob.mode, blob.stat) });
    // Same content as before: its stat data is still right; else zeros make git re-hash the file.
    else if (prev !== undefined && prev.oid === f.oid && (prev.raw.readUInt16BE(60) & 0x4000) === 0) out.push({ name, raw: prev.raw });
    else out.push({ name, raw: encodeEntry(name, f.oid, f.mode, undefined) });
  }
  return sortSliced(out, byName, slice);
}

function readState(gitdir: string): IndexState | undefined {
  const main = layout(readFile(path.join(gitdir, 'index')));
  if (main === undefined) return undefined;
  const link = splitLink(main);
  if (link === 'unknown') return undefined; // a mandatory extension we do not know (sparse index...): rebuild
  if (link === undefined || /^0+$/.test(link.shared)) return { main, link: undefined, shared: undefined };
  const shared = layout(readFile(path.join(gitdir, `sharedindex.${link.shared}`)));
  if (shared === undefined) return undefined;
  if (link.deletes.some((p) => p >= shared.count) || link.replaces.some((p) => p >= shared.count)) return undefined;
  return { main, link, shared };
}

async function writeMain(gitdir: string, adds: Entry[], shared: string, deletes: number[], slice: TimeSlice): Promise<void> {
  const data = Buffer.concat([Buffer.from(shared, 'hex'), encodeEwah(deletes), encodeEwah([])]);
  const ext = Buffer.alloc(8);
  ext.write('link', 0, 'latin1');
  ext.writeUInt32BE(data.length, 4);
  await writeIndexFile(path.join(gitdir, 'index'), gitdir, [header(adds.length, adds), ...adds.map((e) => e.raw), ext, data], slice);
}

/** A new shared index holding everything, and a `.git/index` that only links to it; older shared indexes go. */
async function writeSplit(gitdir: string, entries: Entry[], slice: TimeSlice): Promise<void> {
  const parts = [header(entries.length, entries)];
  const hash = crypto.createHash('sha1').update(parts[0]!);
  for (let i = 0; i < entries.length; i++) {
    if (i % TICK_EVERY === 0) await slice.tick();
    parts.push(entries[i]!.raw);
    hash.update(entries[i]!.raw);
  }
  const sha = hash.copy().digest('hex');
  const name = `sharedindex.${sha}`;
  if (stateKind(path.join(gitdir, name)) === undefined) await writeIndexFile(path.join(gitdir, name), gitdir, parts, slice, hash);
  await writeMain(gitdir, [], sha, [], slice);
  for (const old of listStateDir(gitdir)) {
    if (old.startsWith('sharedindex.') && old !== name) fs.rmSync(path.join(gitdir, old), { force: true });
  }
}

/**
 * Parts in (never copied into one buffer), checksum appended, the target replaced by rename.
 * `hash`, when given, already holds the SHA-1 of the parts.
 */
async function writeIndexFile(target: string, gitdir: string, parts: Buffer[], slice: TimeSlice, hash?: crypto.Hash): Promise<void> {
  let sum = hash;
  if (sum === undefined) {
    sum = crypto.createHash('sha1');
    for (let i = 0; i < parts.length; i++) {
      if (i % TICK_EVERY === 0) await slice.tick();
      sum.update(parts[i]!);
    }
  }
  const all = [...parts, sum.digest()];
  const tmp = path.join(gitdir, `fileshed-index-${crypto.randomBytes(6).toString('hex')}.tmp`);
  const fd = createStateFile(tmp);
  try {
    // writev takes a bounded number of buffers per call; a short write (rare) finishes the batch plainly.
    for (let i = 0; i < all.length; i += 512) {
      await slice.tick();
      const batch = all.slice(i, i + 512);
      const total = batch.reduce((n, b) => n + b.length, 0);
      const written = fs.writevSync(fd, batch);
      if (written < total) writeAll(fd, Buffer.concat(batch).subarray(written));
    }
  } finally {
    fs.closeSync(fd);
  }
  renameState(tmp, target);
}

function writeSmall(gitdir: string, name: string, text: string): void {
  const tmp = path.join(gitdir, `fileshed-${name}-${crypto.randomBytes(6).toString('hex')}.tmp`);
  writeNewStateFile(tmp, text);
  renameState(tmp, path.join(gitdir, name));
}

/** An index file's bytes (undefined when missing); a link or special file fails (IO_ERROR), never followed. */
function readFile(file: string): Buffer | undefined {
  return readStateFile(file);
}

function readText(file: string): string | undefined {
  return readFile(file)?.toString('utf8').trim();
}

/**
 * Recovery: a process killed between the branch update and the index write (commit.ts) leaves an
 * index of the previous commit, which a real git reads as staged changes. Commits never read the
 * index, so history is right; this rebuilds the index from HEAD's tree when its marker is behind.
 * True when it was rebuilt.
 */
export async function repairIndex(gitdir: string, head: string, tree: string): Promise<boolean> {
  const marker = readText(path.join(gitdir, MARKER));
  if (marker === undefined || marker === head) return false;
  const slice = new TimeSlice();
  await writeSplit(gitdir, await rebuild(gitdir, tree, [], slice), slice);
  writeSmall(gitdir, MARKER, `${head}\n`);
  return true;
}
