/**
 * The git object store, written by hand for the two things isomorphic-git does not give us:
 * crash safety (its loose-object writer writes in place, so a killed process leaves a truncated
 * object that it then never rewrites) and speed (native zlib and sha1, no index).
 *
 * Loose objects are written like git does: deflate into `objects/xx/tmp_obj_*` (a name `git fsck`
 * ignores), then rename into place; the undo's shadow repositories append their trees and commits
 * to one log instead (object-log.ts). Reads take loose objects directly and fall back to
 * isomorphic-git for packed ones (repositories that a real git packed), through a file system that
 * only reads: every path it asks for is opened without following links (fs/nofollow.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { compareTreeNames } from '../../formats/git/names.js';
import { EMPTY_TREE, frameObject, hashObject, parseCommit, parseTree, serializeCommit, serializeTree, treeEntryBytes, type Commit, type GitObject, type NewCommit, type ObjectType, type TreeEntry, unframeObject } from '../../formats/git/objects.js';
import { writeAll } from '../../base/fs/read.js';
import { shedError } from '../../base/errors.js';
import { sortSliced, type TimeSlice } from '../../base/fs/slice.js';
import { checkStateDir, createStateFile, listStateDir, makeStateDir, readStateFile, stateKind } from '../../base/fs/nofollow.js';
import { appendLogged, indexedInLog, logsObjects, readLogged } from './object-log.js';


/** isomorphic-git is loaded on first use (creating a repository, reading packs), not at plugin start. */
const isomorphicGit = () => import('isomorphic-git');

/** Loose objects use git's default core.looseCompression (1: fastest). */
const LOOSE_LEVEL = 1;

export function loosePath(gitdir: string, oid: string): string {
  return path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
}

export function hasLoose(gitdir: string, oid: string): boolean {
  return stateKind(loosePath(gitdir, oid)) === 'file';
}

/** Writes an object (unless already stored) and returns its id. */
export function writeObject(gitdir: string, type: ObjectType, body: Uint8Array): string {
  const oid = hashObject(type, body);
  const deflated = () => zlib.deflateSync(frameObject(type, body), { level: LOOSE_LEVEL });
  if (type !== 'blob' && logsObjects(gitdir)) {
    // A shadow repository's tree or commit: appended to its log (object-log.ts). One an earlier
    // version of the store wrote loose may be appended again: the same object twice, either read.
    appendLogged(gitdir, oid, frameObject(type, body));
    return oid;
  }
  // The object's folder is checked once (no link, see fs/nofollow.ts) for the lookup and the write.
  const dir = path.join(gitdir, 'objects', oid.slice(0, 2));
  const dirThere = checkStateDir(dir);
  if (dirThere && stateKind(path.join(dir, oid.slice(2)), true) === 'file') return oid;
  if (!dirThere) makeStateDir(dir);
  const data = deflated();
  // Temps in objects/ itself: a killed writer's are found by one listing (sweepTemps).
  const tmp = tempObjectPath(path.join(gitdir, 'objects'));
  const fd = createStateFile(tmp, 0o444, true);
  try {
    writeAll(fd, data);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, path.join(dir, oid.slice(2))); // within the folder just checked
  return oid;
}

export function tempObjectPath(dir: string): string {
  return path.join(dir, `tmp_obj_fileshed_${crypto.randomBytes(6).toString('hex')}`);
}

// Objects never change, so parsed trees and commits are cached (per repository, bounded).
const MAX_CACHED = 8192;
const treeCache = new Map<string, TreeEntry[]>();
const commitCache = new Map<string, Commit>();
const packCaches = new Map<string, object>();

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
  return value;
}

export async function readObject(gitdir: string, oid: string): Promise<GitObject> {
  if (oid === EMPTY_TREE) return { type: 'tree', body: Buffer.alloc(0) };
  // A shadow's trees and commits are in its log (object-log.ts): read from there at once when this
  // process has seen it there, else after the loose objects (blobs are loose).
  const first = indexedInLog(gitdir, oid) ? readLogged(gitdir, oid) : undefined;
  if (first !== undefined) return first;
  const raw = readStateFile(loosePath(gitdir, oid));
  if (raw !== undefined) return unframeObject(zlib.inflateSync(raw));
  const logged = readLogged(gitdir, oid);
  if (logged !== undefined) return logged;
  let cache = packCaches.get(gitdir);
  if (cache === undefined) {
    if (packCaches.size >= 64) packCaches.delete(packCaches.keys().next().value as string);
    cache = {};
    packCaches.set(gitdir, cache);
  }
  // Packed object (a real git packed this repository): isomorphic-git reads packs.
  const { readObject: readPackedObject } = await isomorphicGit();
  let packed: Awaited<ReturnType<typeof readPackedObject>>;
  try {
    packed = await readPackedObject({ fs: readOnlyGitFs, gitdir, oid, format: 'content', cache });
  } catch (err) {
    if (err instanceof Error && err.name === 'NotFoundError') throw missingObject(oid);
    throw err;
  }
  return { type: packed.type as ObjectType, body: Buffer.from(packed.object as Uint8Array) };
}

/** An object the history refers to is not there: the repository was damaged outside Fileshed. */
function missingObject(oid: string): Error {
  return shedError('IO_ERROR', `The version history is damaged: it refers to an object (${oid.slice(0, 7)}) that is not in the repository.`, {
    details: { reason: 'MISSING_OBJECT', object: oid },
    hint: 'Files can still be read and written; an admin must repair the history (git fsck shows what is missing).',
  });
}

export async function readTree(gitdir: string, oid: string): Promise<TreeEntry[]> {
  const key = `${gitdir}\0${oid}`;
  const hit = treeCache.get(key);
  if (hit !== undefined) return hit;
  const obj = await readObject(gitdir, oid);
  if (obj.type !== 'tree') throw new Error(`object ${oid} is a ${obj.type}, not a tree`);
  return remember(treeCache, key, parseTree(obj.body));
}

export async function readCommit(gitdir: string, oid: string): Promise<Commit> {
  const key = `${gitdir}\0${oid}`;
  const hit = commitCache.get(key);
  if (hit !== undefined) return hit;
  const obj = await readObject(gitdir, oid);
  if (obj.type !== 'commit') throw new Error(`object ${oid} is a ${obj.type}, not a commit`);
  return remember(commitCache, key, parseCommit(oid, obj.body));
}

export async function readBlob(gitdir: string, oid: string): Promise<Buffer> {
  const obj = await readObject(gitdir, oid);
  if (obj.type !== 'blob') throw new Error(`object ${oid} is a ${obj.type}, not a blob`);
  return obj.body;
}

export function writeTree(gitdir: string, entries: TreeEntry[]): string {
  const body = serializeTree(entries);
  const oid = writeObject(gitdir, 'tree', body);
  cacheWritten(gitdir, treeCache, oid, () => parseTree(body));
  return oid;
}

/**
 * A shadow repository's tree or commit is read back at once (the capture compares the commit it just
 * made, the next call starts from it): cached as written. Only there: no command or person can change
 * what the server alone writes; a zone's repository is read from disk, where a planted link is refused.
 */
function cacheWritten<V>(gitdir: string, cache: Map<string, V>, oid: string, parsed: () => V): void {
  if (logsObjects(gitdir)) remember(cache, `${gitdir}\0${oid}`, parsed());
}

/** Entries serialised per step of the sliced writer. */
const SERIALIZE_STEP = 1024;

/** writeTree for a folder the user shaped (30,000 entries take tens of ms to sort and serialise): sliced. */
export async function writeTreeSliced(gitdir: string, entries: TreeEntry[], slice: TimeSlice): Promise<string> {
  // A tree is written as its folder's walk unwinds: 2,000 nested folders are 2,000 writes in a row,
  // each the step after its child's, so each may need to yield, however few its entries.
  await slice.tick();
  if (entries.length <= SERIALIZE_STEP) return writeTree(gitdir, entries);
  const sorted = await sortSliced(entries, compareTreeNames, slice);
  const parts: Buffer[] = [];
  for (let i = 0; i < sorted.length; i++) {
    if (i % SERIALIZE_STEP === 0) await slice.tick();
    const e = sorted[i]!;
    parts.push(...treeEntryBytes(e));
  }
  await slice.tick();
  return writeObject(gitdir, 'tree', Buffer.concat(parts));
}

export function writeCommit(gitdir: string, c: NewCommit): string {
  const body = serializeCommit(c);
  const oid = writeObject(gitdir, 'commit', body);
  cacheWritten(gitdir, commitCache, oid, () => parseCommit(oid, body));
  return oid;
}

/**
 * Full ids of the objects whose id starts with `prefix` (at least 4 hex digits). Packed objects
 * are looked up through isomorphic-git, which only says "ambiguous" without listing them: then
 * `ambiguous` is set.
 */
export async function expandPrefix(gitdir: string, prefix: string): Promise<{ oids: string[]; ambiguous: boolean }> {
  let ambiguous = false;
  const found = new Set<string>();
  for (const name of listStateDir(path.join(gitdir, 'objects', prefix.slice(0, 2)))) {
    const oid = prefix.slice(0, 2) + name;
    if (/^[0-9a-f]{40}$/.test(oid) && oid.startsWith(prefix)) found.add(oid);
  }
  if (hasPacks(gitdir)) {
    try {
      const { expandOid } = await isomorphicGit();
      found.add(await expandOid({ fs: readOnlyGitFs, gitdir, oid: prefix, cache: packCaches.get(gitdir) ?? {} }));
    } catch (err) {
      if (err instanceof Error && err.name === 'AmbiguousError') ambiguous = true;
    }
  }
  return { oids: [...found], ambiguous };
}

function hasPacks(gitdir: string): boolean {
  return listStateDir(path.join(gitdir, 'objects', 'pack')).some((n) => n.endsWith('.pack'));
}

function fsError(code: string, p: string): Error {
  return Object.assign(new Error(`${code}: '${path.basename(p)}'`), { code });
}

/**
 * The file system isomorphic-git reads packs through: files and folder listings only, each opened
 * without following links (a link or special file fails the read), and nothing it may write.
 */
const readOnlyGitFs = {
  promises: {
    async readFile(p: string, opts?: string | { encoding?: string }) {
      const bytes = readStateFile(p);
      if (bytes === undefined) throw fsError('ENOENT', p);
      const encoding = typeof opts === 'string' ? opts : opts?.encoding;
      return encoding ? bytes.toString(encoding as BufferEncoding) : bytes;
    },
    async readdir(p: string) {
      if (stateKind(p) !== 'dir') throw fsError('ENOENT', p);
      return listStateDir(p);
    },
    async stat(p: string) {
      if (stateKind(p) === undefined) throw fsError('ENOENT', p);
      return fs.lstatSync(p);
    },
    async lstat(p: string) {
      if (stateKind(p) === undefined) throw fsError('ENOENT', p);
      return fs.lstatSync(p);
    },
    async readlink(p: string): Promise<string> {
      throw fsError('EINVAL', p);
    },
    async writeFile(p: string): Promise<void> {
      throw fsError('EROFS', p);
    },
    async mkdir(p: string): Promise<void> {
      throw fsError('EROFS', p);
    },
    async rmdir(p: string): Promise<void> {
      throw fsError('EROFS', p);
    },
    async unlink(p: string): Promise<void> {
      throw fsError('EROFS', p);
    },
    async symlink(p: string): Promise<void> {
      throw fsError('EROFS', p);
    },
  },
};
