/**
 * What undoing a turn changes, path by path: for every repository the turn committed to, the state
 * of each path before the turn's first commit that touched it and after its last one (commits of
 * other turns in between are not the turn's), compared with what is on disk now. A path whose
 * current state is not the turn's "after" was changed since (a later turn, another conversation,
 * another member): a conflict, left alone unless forced.
 */
import fs from 'node:fs';
import { BeneathWalk, type BeneathDir } from '../../base/fs/beneath.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { EXEC_MODE, FILE_MODE, fromKey, LINK_MODE } from '../../formats/git/names.js';
import { hashObject } from '../../formats/git/objects.js';
import { readCommit } from '../vcs/objects.js';
import { diffTrees, type FileState } from '../vcs/history/trees.js';
import type { TurnRecord } from './store.js';

export interface PlanItem {
  tree: string;
  label: string;
  root: string;
  gitdir: string;
  versioned: boolean;
  /** Tree-relative path (utf8). */
  rel: string;
  /** What the user sees (Uploads: without the conversation folder). */
  shown: string;
  before: FileState | undefined;
  after: FileState | undefined;
  now: FileState | undefined;
  /** Bytes the path takes now (a file's size; 0 for anything else or nothing). */
  nowBytes: number;
  conflict: boolean;
}

export type Action = 'created' | 'changed' | 'deleted';

/** What the turn did to the path (the undo does the reverse). */
export function actionOf(item: Pick<PlanItem, 'before' | 'after'>): Action {
  return item.before === undefined ? 'created' : item.after === undefined ? 'deleted' : 'changed';
}

export function shownPath(tree: string, rel: string): string {
  return tree === 'uploads' ? rel.split('/').slice(1).join('/') || rel : rel;
}

export interface Plan {
  items: PlanItem[];
  /** Paths the turn changed that cannot be put back, with why. */
  lost: { path: string; why: string }[];
}

/** The turn's net change per path (without reading the disk when `withNow` is false). */
export async function planTurn(rec: TurnRecord, withNow: boolean): Promise<Plan> {
  const items = new Map<string, PlanItem>();
  const labels: Record<string, string> = { storage: 'Storage', uploads: 'Uploads' };
  const lost = rec.lost.map((l) => ({ path: `${labels[l.tree] ?? l.tree}/${shownPath(l.tree, l.path)}`, why: l.why }));
  const lostKeys = new Set(rec.lost.map((l) => `${l.tree}\0${l.path}`));
  for (const c of rec.commits) {
    let commit;
    try {
      commit = await readCommit(c.gitdir, c.oid);
    } catch {
      lost.push({ path: `${c.label}/`, why: 'its history was removed since (the repository no longer holds this change)' });
      continue;
    }
    const parent = commit.parents[0];
    if (parent === undefined && c.versioned && c.fromEmpty !== true) {
      // The zone's first commit takes every file already there: what was before it was never recorded.
      lost.push({ path: `${c.label}/`, why: 'the first recorded version of the zone (nothing before it was kept)' });
      continue;
    }
    const parentTree = parent === undefined ? undefined : (await readCommit(c.gitdir, parent)).tree;
    for (const ch of await diffTrees({ root: c.root, gitdir: c.gitdir, label: c.label }, parentTree, commit.tree)) {
      const rel = fromKey(ch.path);
      const id = `${c.gitdir}\0${rel}`;
      const seen = items.get(id);
      if (seen !== undefined) seen.after = ch.new;
      else items.set(id, { tree: c.tree, label: c.label, root: c.root, gitdir: c.gitdir, versioned: c.versioned, rel, shown: shownPath(c.tree, rel), before: ch.old, after: ch.new, now: undefined, nowBytes: 0, conflict: false });
    }
  }
  // A path the turn changed but whose bytes were not kept is reported (lost), never half undone.
  const out = [...items.values()].filter((i) => !same(i.before, i.after) && !lostKeys.has(`${i.tree}\0${i.rel}`));
  if (withNow) {
    const slice = new TimeSlice();
    // The zone as it is now, reached by descriptor beneath each root: a folder a later command
    // replaced by a link is not followed (what is there is a link, not the turn's file).
    const walks = new Map<string, BeneathWalk>();
    try {
      for (const item of out) {
        await slice.tick();
        const walk = walks.get(item.root) ?? new BeneathWalk(item.root);
        walks.set(item.root, walk);
        const found = diskState(walk, item.rel);
        item.now = found?.state;
        item.nowBytes = found?.bytes ?? 0;
        item.conflict = !same(item.now, item.after);
      }
    } finally {
      for (const w of walks.values()) w.forget();
    }
  }
  return { items: out, lost };
}

export function same(a: FileState | undefined, b: FileState | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.oid === b.oid && a.mode === b.mode;
}

/**
 * What a path of the zone holds now, as git would record it (a folder or other kind counts as
 * "something else"); nothing when a folder on its way is not a real one (a link is never followed).
 */
function diskState(walk: BeneathWalk, rel: string): { state: FileState; bytes: number } | undefined {
  try {
    return walk.at(rel, (dir, name) => stateAt(dir, name));
  } catch {
    return undefined; // the zone itself is gone (a group space deleted): nothing there
  }
}

function stateAt(dir: BeneathDir, name: string): { state: FileState; bytes: number } | undefined {
  const st = dir.lstat(name);
  if (st === undefined) return undefined;
  if (st.isSymbolicLink()) return { state: { mode: LINK_MODE, oid: hashObject('blob', fs.readlinkSync(dir.child(name), { encoding: 'buffer' })) }, bytes: 0 };
  const bytes = st.isFile() ? dir.readFile(name) : undefined;
  if (bytes === undefined) return { state: { mode: 'other', oid: '' }, bytes: 0 };
  return { state: { mode: (st.mode & 0o100) !== 0 ? EXEC_MODE : FILE_MODE, oid: hashObject('blob', bytes) }, bytes: bytes.length };
}
