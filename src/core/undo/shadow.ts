/**
 * Shadow repositories of the unversioned trees (Storage's data, Uploads): a git repository in the
 * capture store whose work tree is the zone, kept equal to the zone after every modifying call.
 * Its HEAD is therefore the state *before* the next call: when a command overwrites or deletes a
 * file, the old bytes are already stored (content-addressed, zlib-compressed git objects), and the
 * call's own commit records exactly what it changed. Cost per call is O(change): only the folders
 * the call's change watch saw change (quota/usage.ts) are listed, and only their entries that are
 * new, gone, or whose ctime is from this call are hashed (ctime cannot be set by a command: any
 * write, rename or chmod moves it forward). The first call builds the repository once, in slices.
 * A call that died before its shadow commit leaves a marker; the next call resynchronises the whole
 * tree first (outside any turn), so a turn never claims another's changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Identity } from '../identity.js';
import { TimeSlice } from '../fs/slice.js';
import { foldersChangedSince } from '../quota/usage.js';
import { commitPaths } from '../vcs/commit.js';
import { isTrackableName, toKey } from '../vcs/names.js';
import { isTreeMode, readCommit, readTree } from '../vcs/objects.js';
import { readHead } from '../vcs/refs.js';
import { ensureRepo, type Repo } from '../vcs/repo.js';
import { entryAt } from '../vcs/history/trees.js';
import { undoDir } from './store.js';
import type { TurnCommit } from './turn.js';

export interface Shadow {
  tree: 'storage' | 'uploads';
  label: string;
  repo: Repo;
}

const SYSTEM: Identity = { id: 'fileshed', name: 'Fileshed capture', email: '', role: 'user' };
/** Margin for ctime against the call's start (coarse timestamps, a clock a little behind on a network filesystem). */
const CTIME_MARGIN_MS = 2000;
const PENDING = 'pending';

export function shadowsOf(home: string): Shadow[] {
  const base = path.join(undoDir(home), 'shadow');
  return [
    { tree: 'storage', label: 'Storage', repo: { root: path.join(home, 'Storage', 'data'), gitdir: path.join(base, 'storage.git'), label: 'Storage' } },
    { tree: 'uploads', label: 'Uploads', repo: { root: path.join(home, 'Uploads'), gitdir: path.join(base, 'uploads.git'), label: 'Uploads' } },
  ];
}

/**
 * Before a call: each shadow exists and matches its tree. Built once (first call), or resynchronised
 * after a call that died mid-way (its marker is still there). Then the call's marker is set.
 */
export async function prepareShadows(home: string): Promise<Shadow[]> {
  const out: Shadow[] = [];
  for (const s of shadowsOf(home)) {
    fs.mkdirSync(s.repo.root, { recursive: true });
    fs.mkdirSync(path.dirname(s.repo.gitdir), { recursive: true });
    await ensureRepo(s.repo);
    const marker = path.join(s.repo.gitdir, PENDING);
    if (readHead(s.repo.gitdir).oid === undefined || fs.existsSync(marker)) await commitPaths(s.repo, [''], SYSTEM, 'Capture: state of the zone');
    fs.writeFileSync(marker, '');
    out.push(s);
  }
  return out;
}

/** After the call: commits what it changed in each shadow; the commits name the turn. */
export async function commitShadows(shadows: Shadow[], mark: number, startedMs: number, message: string): Promise<TurnCommit[]> {
  const out: TurnCommit[] = [];
  for (const s of shadows) {
    const folders = await foldersChangedSince(s.repo.root, mark);
    // The watch cannot vouch for every change: the whole tree is compared (O(zone), rare).
    const paths = folders === undefined ? [''] : await candidates(s.repo, folders, startedMs);
    const oid = paths.length === 0 ? undefined : await commitPaths(s.repo, paths, SYSTEM, message);
    fs.rmSync(path.join(s.repo.gitdir, PENDING), { force: true });
    if (oid !== undefined) out.push({ tree: s.tree, label: s.label, root: s.repo.root, gitdir: s.repo.gitdir, oid, versioned: false });
  }
  return out;
}

/** Entries of the changed folders that may differ from the shadow: new, gone, or touched during the call. */
async function candidates(repo: Repo, folders: string[], startedMs: number): Promise<string[]> {
  const head = readHead(repo.gitdir).oid;
  const tree = head === undefined ? undefined : (await readCommit(repo.gitdir, head)).tree;
  const slice = new TimeSlice();
  const out = new Set<string>();
  const since = startedMs - CTIME_MARGIN_MS;
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
    const known = new Map<string, boolean>();
    const at = tree === undefined ? undefined : await entryAt(repo, tree, toKey(dirRel));
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
        out.add(child);
        continue;
      }
      if (d.isDirectory()) continue; // its own changes are listed as their own folder
      const st = fs.lstatSync(path.join(repo.root, child), { throwIfNoEntry: false });
      if (st === undefined || st.ctimeMs >= since) out.add(child);
    }
    for (const name of known.keys()) if (!seen.has(name)) out.add(dirRel === '' ? Buffer.from(name, 'latin1').toString('utf8') : `${dirRel}/${Buffer.from(name, 'latin1').toString('utf8')}`);
  }
  return [...out];
}
