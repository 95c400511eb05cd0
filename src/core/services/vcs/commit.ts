/**
 * O(change) commits. Starting from the parent commit's root tree, only the trees on the way to the
 * changed paths are read and rewritten; every other subtree is kept by its id. For each changed
 * path the working tree decides: a file or link gives a blob, a folder gives the tree of that folder
 * (only it is walked), nothing there removes the entry with everything below it.
 *
 * Order of writes (crash safety): blobs, trees and the commit object first, then the branch ref is
 * replaced atomically, then the index. A process killed anywhere leaves HEAD at the old or the new
 * commit and only unreferenced or temp objects behind, which `git fsck` accepts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Identity } from '../../base/identity.js';
import type { Zone } from '../../base/zones/zones.js';
import { updateIndex } from './gitindex.js';
import { withRepoLock } from './lock.js';
import { confirmFence } from '../../base/locks/lease.js';
import { toKey, TREE_MODE } from '../../formats/git/names.js';
import { isTrackablePath } from './names.js';
import { isTreeMode, type TreeEntry } from '../../formats/git/objects.js';
import { readCommit, readTree, writeCommit, writeTree, writeTreeSliced } from './objects.js';
import { sortSliced, TimeSlice } from '../../base/fs/slice.js';
import { readHead, writeRef } from './refs.js';
import { withPendingPaths } from './pending.js';
import { ensureRepo, repoFor, type Repo } from './repo.js';
import { blobFor, canonicalRel, folderTree, type WorkBlob } from './worktree.js';

const COMMITTER = 'Fileshed <fileshed@localhost>';
const MAX_MESSAGE = 10_000;

/** What a changed path now is: an entry to put in its parent tree, or nothing (remove). */
interface Edit {
  entry: { mode: string; oid: string } | undefined;
}

interface Node {
  edit?: Edit;
  children: Map<string, Node>;
}

/** Commits the current state of `paths` (zone-relative) in the zone's repository; the full commit id, or undefined when nothing changed. */
export async function commitZone(zone: Pick<Zone, 'root' | 'label'>, paths: string[], author: Identity, message: string): Promise<string | undefined> {
  const repo = repoFor(zone);
  await ensureRepo(repo);
  // Recorded before the repository lock is asked for: a holder killed at any point of its commit
  // leaves what it was recording (pending.ts), and its successor commits just that.
  return withPendingPaths(repo, paths, () =>
    withRepoLock(repo, async () => {
      await confirmFence(); // asks the lock store: this call still holds its space and the history
      return commitPaths(repo, paths, author, message);
    }),
  );
}

/** The commit itself; the caller holds the repository lock. */
export async function commitPaths(repo: Repo, paths: string[], author: Identity, message: string): Promise<string | undefined> {
  const head = readHead(repo.gitdir);
  const parent = head.oid === undefined ? undefined : await readCommit(repo.gitdir, head.oid);
  // A call can change 30,000 files of one folder: every per-path step below yields within a slice.
  const slice = new TimeSlice();
  // The first commit takes the whole folder: files there before versioning started belong in it.
  const changed = parent === undefined ? [''] : await normalise(repo.root, paths, slice);
  if (changed.length === 0) return undefined;

  const root: Node = { children: new Map() };
  const blobs: WorkBlob[] = [];
  for (const rel of changed) {
    await slice.tick();
    const edit = await editFor(repo, rel, blobs, slice);
    let node = root;
    for (const part of rel === '' ? [] : rel.split('/')) {
      const key = toKey(part);
      let next = node.children.get(key);
      if (next === undefined) {
        next = { children: new Map() };
        node.children.set(key, next);
      }
      node = next;
    }
    node.edit = edit;
  }

  const oldTree = parent?.tree;
  const newTree = root.edit !== undefined ? (root.edit.entry?.oid ?? writeTree(repo.gitdir, [])) : ((await applyEdits(repo, oldTree, root, slice)) ?? writeTree(repo.gitdir, []));
  if (newTree === oldTree) return undefined;
  if (parent === undefined && blobs.length === 0) return undefined; // nothing to start a history with

  const time = Math.floor(Date.now() / 1000);
  const oid = writeCommit(repo.gitdir, {
    tree: newTree,
    parents: parent === undefined ? [] : [parent.oid],
    author: authorIdent(author),
    committer: COMMITTER,
    time,
    tz: tzOffset(new Date(time * 1000)),
    message: cleanMessage(message),
  });
  writeRef(repo.gitdir, head.ref, oid);
  if (repo.noIndex) return oid;
  try {
    await updateIndex(repo.gitdir, { parent: parent?.oid, head: oid, tree: newTree, changed, blobs }, slice);
  } catch {
    // The index only serves a real git reading the folder; the commit stands without it.
  }
  return oid;
}

/** Canonical, trackable, de-duplicated paths, with any path below another dropped (the outer one is walked). */
async function normalise(root: string, paths: string[], slice: TimeSlice): Promise<string[]> {
  const set = new Set<string>();
  const folders = new Map<string, string | undefined>();
  for (const p of paths) {
    await slice.tick();
    const rel = canonicalRel(root, p.split(path.sep).join('/').replace(/^\/+|\/+$/g, ''), folders);
    if (rel !== undefined && isTrackablePath(rel)) set.add(rel);
  }
  if (set.has('')) return [''];
  const out: string[] = [];
  for (const rel of set) {
    await slice.tick();
    let covered = false;
    for (let i = rel.indexOf('/'); i >= 0 && !covered; i = rel.indexOf('/', i + 1)) covered = set.has(rel.slice(0, i));
    if (!covered) out.push(rel);
  }
  return sortSliced(out, (a, b) => (a < b ? -1 : a > b ? 1 : 0), slice);
}

async function editFor(repo: Repo, rel: string, blobs: WorkBlob[], slice: TimeSlice): Promise<Edit> {
  const abs = rel === '' ? repo.root : path.join(repo.root, rel);
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(abs);
  } catch {
    st = undefined;
  }
  if (st?.isDirectory()) {
    const tree = await folderTree(repo.gitdir, abs, rel, blobs, slice);
    return { entry: tree === undefined ? undefined : { mode: TREE_MODE, oid: tree } };
  }
  const blob = st === undefined ? undefined : await blobFor(repo.gitdir, abs, rel);
  if (blob === undefined) return { entry: undefined };
  blobs.push(blob);
  return { entry: { mode: blob.mode, oid: blob.oid } };
}

/** The new id of the tree `oid` after the edits below `node`; undefined when it ends up empty. */
async function applyEdits(repo: Repo, oid: string | undefined, node: Node, slice: TimeSlice): Promise<string | undefined> {
  const entries = new Map<string, TreeEntry>();
  if (oid !== undefined) {
    for (const e of await readTree(repo.gitdir, oid)) {
      await slice.tick();
      entries.set(e.name, e);
    }
  }
  let changed = false;
  for (const [name, child] of node.children) {
    await slice.tick();
    const before = entries.get(name);
    let after: { mode: string; oid: string } | undefined;
    if (child.edit !== undefined) {
      after = child.edit.entry;
    } else {
      const sub = await applyEdits(repo, before !== undefined && isTreeMode(before.mode) ? before.oid : undefined, child, slice);
      // Edits below a path that is not a folder in the tree and gave nothing: leave that entry alone.
      after = sub !== undefined ? { mode: TREE_MODE, oid: sub } : before !== undefined && !isTreeMode(before.mode) ? before : undefined;
    }
    if (after === undefined) {
      if (before !== undefined) {
        entries.delete(name);
        changed = true;
      }
    } else if (before === undefined || before.oid !== after.oid || before.mode !== after.mode) {
      entries.set(name, { mode: after.mode, name, oid: after.oid });
      changed = true;
    }
  }
  if (!changed) return oid;
  return entries.size === 0 ? undefined : writeTreeSliced(repo.gitdir, [...entries.values()], slice);
}

/** "Name <id@fileshed>": the user's name (characters git refuses in an ident removed) and id. */
export function authorIdent(user: Identity): string {
  const name = user.name.replace(/[<>\u0000-\u001f\u007f]/g, '').trim() || user.id;
  return `${name} <${user.id}@fileshed>`;
}

export function cleanMessage(message: string): string {
  const text = message.replace(/\u0000/g, '').replace(/\r\n?/g, '\n').replace(/\s+$/, '').slice(0, MAX_MESSAGE);
  return `${text.trim() === '' ? 'Update' : text}\n`;
}

export function tzOffset(date: Date): string {
  const minutes = -date.getTimezoneOffset();
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}
