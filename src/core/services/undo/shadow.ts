/**
 * Shadow repositories of the unversioned trees (Storage's data, Uploads): a git repository in the
 * capture store whose work tree is the zone, kept equal to the zone after every modifying call.
 * Its HEAD is therefore the state *before* the next call: when a command overwrites or deletes a
 * file, the old bytes are already stored (content-addressed, zlib-compressed git objects), and the
 * call's own commit records exactly what it changed. Cost per call is O(change): only the folders
 * the call's change watch saw change (quota/usage.ts) are listed, and only their entries that are
 * new, gone, or whose ctime is from this call are hashed (ctime cannot be set by a command: any
 * write, rename or chmod moves it forward). The first call builds the repository once, in slices.
 * A call that died before its shadow commit is found by the takeover of its call lock, which leaves a
 * marker (markInterrupted); the next capture resynchronises the whole tree first (outside any turn),
 * so a turn never claims another's changes. A call that ends normally writes no marker.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Identity } from '../../base/identity.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { foldersChangedSince, measuredTimes } from '../quota/usage.js';
import { commitPaths } from '../vcs/commit.js';
import { toKey } from '../../formats/git/names.js';
import { isTrackableName } from '../vcs/names.js';
import { isTreeMode } from '../../formats/git/objects.js';
import { loosePath, readCommit, readTree, writeCommit, writeTree } from '../vcs/objects.js';
import { logTreesAndCommits } from '../vcs/object-log.js';
import { headOf, readHead, writeRef } from '../vcs/refs.js';
import { atomicWrite } from '../../base/fs/atomic.js';
import { listSliced } from '../../base/fs/list.js';
import { ensureRepo, type Repo } from '../vcs/repo.js';
import { diffTrees, entryAt, type FileChange } from '../vcs/history/trees.js';
import { shrinkChanged } from './deltas.js';
import { whereIs } from './where.js';
import type { TurnCommit } from './turn.js';
import { readText, writeBytes } from '../../base/fs/read.js';
import { lstatIfAny } from '../../base/fs/stat.js';
import { storageKind } from '../../base/fs/kind.js';

export interface Shadow {
  tree: 'storage' | 'uploads';
  label: string;
  repo: Repo;
  /**
   * Its HEAD commit as found before the call, when the preparation did not move it. Only the
   * shadow commit after the call moves a shadow's HEAD (undo commits versioned zones only; the
   * capture store is outside every zone, and other instances wait for the call lock), so the
   * comparison after the call starts from it without reading HEAD and the branch again.
   */
  headBefore?: string;
}

const SYSTEM: Identity = { id: 'fileshed', name: 'Fileshed capture', email: '', role: 'user' };
/**
 * How long before the call's start a ctime may lie and still be the call's. A local filesystem stamps
 * ctime from this kernel's clock, coarse by a tick at most; a network or FUSE one (GlusterFS) from a
 * server whose clock may be a little behind ours. The local margin also spares a folder written a
 * moment ago (an import, a copy) from being hashed whole again at the next call.
 */
const LOCAL_CTIME_MARGIN_MS = 100;
const SHARED_CTIME_MARGIN_MS = 2000;

function ctimeMargin(root: string): number {
  return storageKind(root).kind === 'local' ? LOCAL_CTIME_MARGIN_MS : SHARED_CTIME_MARGIN_MS;
}
/** One marker for both shadows: resynchronise before the next capture. */
const PENDING = 'pending';

function markerPath(home: string): string {
  return path.join(path.dirname(whereIs(home, 'storage').gitdir), PENDING);
}

/** A change seen but not kept (over the per-file size cap), for the turn's record. */
export interface Lost {
  tree: string;
  path: string;
  why: string;
}

export function shadowsOf(home: string): Shadow[] {
  const shadows: Shadow[] = [
    { tree: 'storage', label: 'Storage', repo: { ...whereIs(home, 'storage'), label: 'Storage', noIndex: true } },
    { tree: 'uploads', label: 'Uploads', repo: { ...whereIs(home, 'uploads'), label: 'Uploads', noIndex: true } },
  ];
  // A capture's commit and trees are one append each, not a new file each (vcs/object-log.ts).
  for (const s of shadows) logTreesAndCommits(s.repo.gitdir);
  return shadows;
}

/**
 * Before a call: each shadow exists and matches its tree. Built once (first call), or resynchronised
 * after a call that died mid-way or ran with capture off (the marker is there).
 */
/**
 * A call of this home was killed (its call lock was taken over): the shadows may miss what it changed,
 * so the next capture resynchronises them first. Set only on a takeover, so a call costs no marker.
 */
export function markInterrupted(home: string): void {
  const marker = markerPath(home);
  if (fs.existsSync(path.dirname(marker))) writeBytes(marker, '');
}

export async function prepareShadows(home: string, capBytes: number): Promise<Shadow[]> {
  const out: Shadow[] = [];
  const marker = markerPath(home);
  const interrupted = fs.existsSync(marker);
  const made = new Set<string>(); // both shadows live in one folder: made (or found) once per call
  for (const s of shadowsOf(home)) {
    fs.mkdirSync(s.repo.root, { recursive: true });
    const store = path.dirname(s.repo.gitdir);
    if (!made.has(store)) fs.mkdirSync(store, { recursive: true });
    made.add(store);
    const headText = await ensureRepo(s.repo);
    const head = headText === undefined ? readHead(s.repo.gitdir) : headOf(s.repo.gitdir, headText);
    if (head.oid === undefined) {
      // Built once: an empty first commit, then every file under the cap (a bigger one is marked
      // "not kept": a later change of it is reported as not undoable).
      const empty = writeCommit(s.repo.gitdir, { tree: writeTree(s.repo.gitdir, []), parents: [], author: 'Fileshed capture <fileshed@localhost>', committer: 'Fileshed capture <fileshed@localhost>', time: Math.floor(Date.now() / 1000), tz: '+0000', message: 'Capture: start' });
      writeRef(s.repo.gitdir, head.ref, empty);
      const { paths, big } = await filesUnder(s.repo.root, '', capBytes);
      await taint(s, big);
      await commitPaths(s.repo, paths, SYSTEM, 'Capture: state of the zone');
    } else if (interrupted) {
      // A call died before its shadow commit: resynchronise the whole tree (outside any turn).
      await commitPaths(s.repo, [''], SYSTEM, 'Capture: resynchronised after an interrupted call');
    } else {
      s.headBefore = head.oid;
    }
    out.push(s);
  }
  if (interrupted) fs.rmSync(marker, { force: true });
  return out;
}

/**
 * Capture is off (valve undo_enabled=false) for this call: the shadows, if any, will not see its
 * changes, so they are marked for a resynchronisation when capture is on again (never a stale before).
 */
export function suspendShadows(home: string): void {
  if (shadowsOf(home).some((s) => fs.existsSync(path.join(s.repo.gitdir, 'HEAD')))) writeBytes(markerPath(home), '');
}

/** Files and links below `rel` (tree-relative), sliced; those over the cap apart. */
async function filesUnder(root: string, rel: string, capBytes: number): Promise<{ paths: string[]; big: string[] }> {
  const slice = new TimeSlice();
  const paths: string[] = [];
  const big: string[] = [];
  const walk = async (dirRel: string): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await listSliced(path.join(root, dirRel), slice);
    } catch {
      return;
    }
    for (const d of entries) {
      await slice.tick();
      if (!isTrackableName(d.name)) continue;
      const child = dirRel === '' ? d.name : `${dirRel}/${d.name}`;
      if (d.isDirectory()) await walk(child);
      else (overCap(path.join(root, child), capBytes) ? big : paths).push(child);
    }
  };
  await walk(rel);
  return { paths, big };
}

function overCap(abs: string, capBytes: number): boolean {
  const st = lstatIfAny(abs);
  return st !== undefined && st.isFile() && st.size > capBytes;
}

/**
 * Paths whose shadow entry is stale (over the cap when last seen), tree-relative, each with the
 * size, mtime and inode it had then: an unchanged big file seen again is not a new loss.
 */
function taintFile(s: Shadow): string {
  return `${s.repo.gitdir}.untracked.json`;
}

function tainted(s: Shadow): Map<string, string> {
  if (!fs.existsSync(taintFile(s))) return new Map(); // the usual case: no exception for it
  try {
    return new Map(Object.entries(JSON.parse(readText(taintFile(s))) as Record<string, string>));
  } catch {
    return new Map();
  }
}

function signature(abs: string): string {
  const st = lstatIfAny(abs);
  return st === undefined ? '' : `${st.size}:${st.mtimeMs}:${st.ino}`;
}

async function taint(s: Shadow, add: readonly string[], remove: readonly string[] = []): Promise<void> {
  if (add.length === 0 && remove.length === 0) return;
  const map = tainted(s);
  for (const p of add) map.set(p, signature(path.join(s.repo.root, p)));
  for (const p of remove) map.delete(p);
  await atomicWrite(taintFile(s), Buffer.from(JSON.stringify(Object.fromEntries(map))));
}

/** After the call: commits what it changed in each shadow; the commits name the turn. */
export async function commitShadows(home: string, shadows: Shadow[], mark: number, startedMs: number, message: string, capBytes: number): Promise<{ commits: TurnCommit[]; lost: Lost[]; added: number }> {
  const out: TurnCommit[] = [];
  const lost: Lost[] = [];
  let added = 0;
  for (const s of shadows) {
    const folders = await foldersChangedSince(s.repo.root, mark);
    // The watch cannot vouch for every change: the whole tree is compared (O(zone), rare).
    let paths = folders === undefined ? [''] : await candidates(s.repo, folders, startedMs, capBytes, s.headBefore);
    s.headBefore = undefined; // this shadow's HEAD moves below: what was known before is known no more
    if (folders !== undefined) {
      // Over the cap: not stored, reported; its shadow entry stays as it was (stale, marked).
      const stale = tainted(s);
      const big = paths.filter((p) => overCap(path.join(s.repo.root, p), capBytes));
      // Seen again unchanged (its ctime is merely recent): nothing new was lost.
      const changedBig = big.filter((p) => stale.get(p) !== signature(path.join(s.repo.root, p)));
      const was = paths.filter((p) => stale.has(p) && !big.includes(p));
      for (const p of changedBig) lost.push({ tree: s.tree, path: p, why: `over the undo size cap (undo_max_file_mb=${Math.round(capBytes / 1048576)}): not kept` });
      for (const p of was) lost.push({ tree: s.tree, path: p, why: 'its version before this turn was over the undo size cap: not kept' });
      await taint(s, changedBig, was);
      paths = paths.filter((p) => !big.includes(p) && !was.includes(p)).concat(was.filter((p) => !fs.existsSync(path.join(s.repo.root, p))));
      // A file back under the cap is stored from now on (its before is reported lost above).
      const back = was.filter((p) => fs.existsSync(path.join(s.repo.root, p)));
      if (back.length > 0) await commitPaths(s.repo, back, SYSTEM, 'Capture: files back under the size cap');
    }
    const oid = paths.length === 0 ? undefined : await commitPaths(s.repo, paths, SYSTEM, message);
    if (oid !== undefined) {
      // Big files edited a little keep their older version as a reverse delta (deltas.ts).
      const commit = await readCommit(s.repo.gitdir, oid);
      const parent = commit.parents[0] === undefined ? undefined : (await readCommit(s.repo.gitdir, commit.parents[0])).tree;
      const changes = await changedFiles(s.repo, parent, commit.tree, paths);
      await shrinkChanged(s.repo.gitdir, changes);
      // What the store grew by (the retention's estimate between two collections, collect.ts).
      for (const ch of changes) if (ch.new !== undefined) added += lstatIfAny(loosePath(s.repo.gitdir, ch.new.oid))?.size ?? 0;
    }
    if (oid !== undefined) out.push({ tree: s.tree, label: s.label, root: s.repo.root, gitdir: s.repo.gitdir, oid, versioned: false });
  }
  return { commits: out, lost, added };
}

/** Up to this many paths, a shadow commit's changes are looked up path by path; more, the trees are compared. */
const FEW_PATHS = 64;

/**
 * The files a shadow commit changed (for the reverse deltas and the store's growth): the committed
 * paths looked up in both trees, O(paths) instead of a comparison of every entry of the trees on the
 * way (100 entries per folder of a big Storage); a folder among them, or many paths, compares the trees.
 */
async function changedFiles(repo: Repo, before: string | undefined, after: string, paths: readonly string[]): Promise<FileChange[]> {
  if (paths.length > FEW_PATHS) return diffTrees(repo, before, after);
  const out: FileChange[] = [];
  const slice = new TimeSlice();
  for (const p of paths) {
    const key = toKey(p);
    const old = before === undefined ? undefined : await entryAt(repo, before, key, slice);
    const now = await entryAt(repo, after, key, slice);
    if ((old !== undefined && isTreeMode(old.mode)) || (now !== undefined && isTreeMode(now.mode))) return diffTrees(repo, before, after);
    if (old?.oid === now?.oid && old?.mode === now?.mode) continue;
    out.push({ path: key, old: old && { mode: old.mode, oid: old.oid }, new: now && { mode: now.mode, oid: now.oid } });
  }
  return out;
}

/** Entries of the changed folders that may differ from the shadow: new, gone, or touched during the call. */
async function candidates(repo: Repo, folders: string[], startedMs: number, capBytes: number, headBefore: string | undefined): Promise<string[]> {
  const head = headBefore ?? readHead(repo.gitdir).oid;
  const tree = head === undefined ? undefined : (await readCommit(repo.gitdir, head)).tree;
  const slice = new TimeSlice();
  const out = new Set<string>();
  const since = startedMs - ctimeMargin(repo.root);
  for (const folder of folders) {
    await slice.tick();
    const rel = path.relative(repo.root, path.resolve(repo.root, folder)).split(path.sep).join('/');
    if (rel.startsWith('..')) continue;
    const dirRel = rel === '' ? '' : rel;
    let disk: fs.Dirent[];
    try {
      disk = fs.readdirSync(path.join(repo.root, dirRel), { withFileTypes: true });
    } catch {
      if (dirRel !== '') out.add(dirRel); // the folder itself is gone
      continue;
    }
    // What the change watch measured just now: no second lstat of every file of the folder.
    const measured = measuredTimes(repo.root, path.join(repo.root, dirRel));
    const known = new Map<string, boolean>();
    const at = tree === undefined ? undefined : await entryAt(repo, tree, toKey(dirRel), slice);
    if (at !== undefined && isTreeMode(at.mode)) for (const e of await readTree(repo.gitdir, at.oid)) known.set(e.name, isTreeMode(e.mode));
    const seen = new Set<string>();
    for (const d of disk) {
      await slice.tick();
      if (!isTrackableName(d.name)) continue;
      const key = toKey(d.name);
      seen.add(key);
      const child = dirRel === '' ? d.name : `${dirRel}/${d.name}`;
      const wasTree = known.get(key);
      if (wasTree === undefined || wasTree !== d.isDirectory()) {
        if (wasTree === true) out.add(child); // a folder replaced by a file: the folder's entries go
        // A new folder is listed file by file (O(what it holds), all new), so the size cap applies inside.
        if (d.isDirectory()) for (const p of (await filesUnder(repo.root, child, Number.MAX_SAFE_INTEGER)).paths) out.add(p);
        else out.add(child);
        continue;
      }
      if (d.isDirectory()) continue; // its own changes are listed as their own folder
      // max(mtime, ctime) >= since whenever ctime is: a file touched into the future is hashed for nothing, none is missed.
      const newest = measured?.get(d.name)?.newestMs ?? lstatIfAny(path.join(repo.root, child))?.ctimeMs;
      if (newest === undefined || newest >= since) out.add(child);
    }
    for (const name of known.keys()) if (!seen.has(name)) out.add(dirRel === '' ? Buffer.from(name, 'latin1').toString('utf8') : `${dirRel}/${Buffer.from(name, 'latin1').toString('utf8')}`);
  }
  return [...out];
}
