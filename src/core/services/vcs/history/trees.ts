/**
 * Comparing trees with trees and with the working tree. Paths here are byte strings (names.ts)
 * joined with '/'; equal subtrees are skipped by id, so comparing two commits costs what changed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readBytes } from '../../../base/fs/read.js';
import { listSliced } from '../../../base/fs/list.js';
import { stateFileStat } from '../../../base/fs/nofollow.js';
import { TimeSlice } from '../../../base/fs/slice.js';
import { readIndexEntries } from '../gitindex.js';
import { EXEC_MODE, FILE_MODE, LINK_MODE, toKey } from '../../../formats/git/names.js';
import { isTrackableName } from '../names.js';
import { hashObject, isTreeMode, type TreeEntry } from '../../../formats/git/objects.js';
import { readTree } from '../objects.js';
import type { Repo } from '../repo.js';

export interface FileState {
  mode: string;
  oid: string;
}

export interface FileChange {
  /** Byte-string path. */
  path: string;
  old: FileState | undefined;
  new: FileState | undefined;
}

/** Path filters as byte strings; '' matches everything. */
export type Filters = string[];

export function matches(key: string, filters: Filters): boolean {
  if (filters.length === 0) return true;
  return filters.some((f) => f === '' || key === f || key.startsWith(`${f}/`));
}

/** Could something under `dirKey` match (the folder is on the way to a filter, or inside one)? */
function reaches(dirKey: string, filters: Filters): boolean {
  if (filters.length === 0) return true;
  return filters.some((f) => f === '' || dirKey === f || dirKey.startsWith(`${f}/`) || f.startsWith(`${dirKey}/`));
}

/**
 * The entry at a byte-string path of a tree ('' gives the tree itself). One tree read per folder on
 * the way, and a user's folders can nest 2,000 deep: it yields within `slice` (a caller looking up
 * many paths passes one for all of them).
 */
export async function entryAt(repo: Repo, tree: string, key: string, slice = new TimeSlice()): Promise<TreeEntry | undefined> {
  let current: TreeEntry = { mode: '40000', name: '', oid: tree };
  if (key === '') return current;
  let walked = '';
  for (const part of key.split('/')) {
    await slice.tick();
    walked = walked === '' ? part : `${walked}/${part}`;
    if (!isTreeMode(current.mode) || repo.hidden?.(walked)) return undefined;
    const next = (await readTree(repo.gitdir, current.oid)).find((e) => e.name === part);
    if (next === undefined) return undefined;
    current = next;
  }
  return current;
}

/** Every file and link of a tree (below the filters), by byte-string path. */
export async function flatten(repo: Repo, tree: string | undefined, filters: Filters = []): Promise<Map<string, FileState>> {
  const out = new Map<string, FileState>();
  const slice = new TimeSlice();
  const walk = async (oid: string, prefix: string): Promise<void> => {
    for (const e of await readTree(repo.gitdir, oid)) {
      await slice.tick();
      const key = prefix + e.name;
      if (repo.hidden?.(key)) continue;
      if (isTreeMode(e.mode)) {
        if (reaches(key, filters)) await walk(e.oid, `${key}/`);
      } else if (matches(key, filters)) {
        out.set(key, { mode: e.mode, oid: e.oid });
      }
    }
  };
  if (tree !== undefined) await walk(tree, '');
  return out;
}

/** Files that differ between two trees (undefined = empty tree), in path order. */
export async function diffTrees(repo: Repo, a: string | undefined, b: string | undefined, filters: Filters = []): Promise<FileChange[]> {
  const out: FileChange[] = [];
  const slice = new TimeSlice();
  const walk = async (ta: string | undefined, tb: string | undefined, prefix: string): Promise<void> => {
    if (ta === tb) return;
    const ea = new Map((ta === undefined ? [] : await readTree(repo.gitdir, ta)).map((e) => [e.name, e]));
    const eb = new Map((tb === undefined ? [] : await readTree(repo.gitdir, tb)).map((e) => [e.name, e]));
    const names = [...new Set([...ea.keys(), ...eb.keys()])].sort();
    for (const name of names) {
      await slice.tick();
      const x = ea.get(name);
      const y = eb.get(name);
      const key = prefix + name;
      if (repo.hidden?.(key)) continue;
      const xTree = x !== undefined && isTreeMode(x.mode);
      const yTree = y !== undefined && isTreeMode(y.mode);
      if (xTree || yTree) {
        if (reaches(key, filters) && (x?.oid !== y?.oid || xTree !== yTree)) await walk(xTree ? x!.oid : undefined, yTree ? y!.oid : undefined, `${key}/`);
      }
      const xf = x !== undefined && !xTree ? x : undefined;
      const yf = y !== undefined && !yTree ? y : undefined;
      if ((xf !== undefined || yf !== undefined) && matches(key, filters) && (xf?.oid !== yf?.oid || xf?.mode !== yf?.mode)) {
        out.push({ path: key, old: xf && { mode: xf.mode, oid: xf.oid }, new: yf && { mode: yf.mode, oid: yf.oid } });
      }
    }
  };
  await walk(a, b, '');
  return out.sort((p, q) => (p.path < q.path ? -1 : p.path > q.path ? 1 : 0));
}

export interface WorkFile extends FileState {
  abs: string;
}

/**
 * The working tree's files and links (below the filters) with their blob ids. A file whose stat
 * data still matches its entry in the repository's index takes the id from there; every other file
 * is hashed (no object is written). O(files), O(bytes) only for files the index cannot vouch for;
 * sliced per entry (the user shapes the tree).
 */
export async function worktreeFiles(repo: Repo, filters: Filters = []): Promise<Map<string, WorkFile>> {
  const slice = new TimeSlice();
  const index = await readIndexEntries(repo.gitdir, slice);
  const indexMtime = stateFileStat(path.join(repo.gitdir, 'index'))?.mtimeNs ?? 0n; // no index: everything is hashed
  const out = new Map<string, WorkFile>();
  const walk = async (abs: string, prefix: string): Promise<void> => {
    let names: fs.Dirent[];
    try {
      names = await listSliced(abs, slice);
    } catch {
      return;
    }
    for (const d of names) {
      await slice.tick();
      if (!isTrackableName(d.name)) continue;
      const key = prefix + toKey(d.name);
      if (repo.hidden?.(key)) continue;
      const child = path.join(abs, d.name);
      if (d.isDirectory()) {
        if (reaches(key, filters)) await walk(child, `${key}/`);
        continue;
      }
      if (!matches(key, filters)) continue;
      const state = fileState(child, index?.get(key), indexMtime);
      if (state !== undefined) out.set(key, { ...state, abs: child });
    }
  };
  await walk(repo.root, '');
  return out;
}

function fileState(abs: string, cached: { oid: string; raw: Buffer } | undefined, indexMtime: bigint): FileState | undefined {
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(abs, { bigint: true });
  } catch {
    return undefined;
  }
  if (!st.isSymbolicLink() && !st.isFile()) return undefined;
  const mode = st.isSymbolicLink() ? LINK_MODE : (st.mode & 0o100n) !== 0n ? EXEC_MODE : FILE_MODE;
  if (st.isSymbolicLink() && path.basename(abs) === '.gitmodules') return undefined;
  if (st.isFile() && cached !== undefined && statMatches(cached.raw, st, mode) && st.mtimeNs < indexMtime) return { mode, oid: cached.oid };
  try {
    // Removed or replaced since the listing: what is there now is read next time.
    const bytes = st.isSymbolicLink() ? fs.readlinkSync(abs, { encoding: 'buffer' }) : readBytes(abs, { noFollow: true });
    return { mode, oid: hashObject('blob', bytes) };
  } catch {
    return undefined;
  }
}

/** The index's stat data (ctime, mtime, inode, size, mode) equals the file's. */
function statMatches(raw: Buffer, st: fs.BigIntStats, mode: string): boolean {
  const u32 = (v: bigint) => Number(v & 0xffffffffn);
  return (
    raw.readUInt32BE(0) === u32(st.ctimeNs / 1_000_000_000n) &&
    raw.readUInt32BE(4) === u32(st.ctimeNs % 1_000_000_000n) &&
    raw.readUInt32BE(8) === u32(st.mtimeNs / 1_000_000_000n) &&
    raw.readUInt32BE(12) === u32(st.mtimeNs % 1_000_000_000n) &&
    raw.readUInt32BE(20) === u32(st.ino) &&
    raw.readUInt32BE(36) === u32(st.size) &&
    raw.readUInt32BE(24) === (mode === EXEC_MODE ? 0o100755 : 0o100644)
  );
}

/** Changes from a tree to the working tree. */
export async function diffWorktree(repo: Repo, tree: string | undefined, filters: Filters = []): Promise<FileChange[]> {
  const base = await flatten(repo, tree, filters);
  const work = await worktreeFiles(repo, filters);
  const out: FileChange[] = [];
  for (const [key, old] of base) {
    const now = work.get(key);
    if (now === undefined || now.oid !== old.oid || now.mode !== old.mode) out.push({ path: key, old, new: now && { mode: now.mode, oid: now.oid } });
  }
  for (const [key, now] of work) if (!base.has(key)) out.push({ path: key, old: undefined, new: { mode: now.mode, oid: now.oid } });
  return out.sort((p, q) => (p.path < q.path ? -1 : p.path > q.path ? 1 : 0));
}

/** Zone-relative UTF-8 path → byte-string filter key. */
export const filterKey = (rel: string): string => toKey(rel);
