/**
 * Earlier versions kept the repository of a versioned zone at `data/.git`, inside what commands can
 * write. This version keeps it at `git/` beside `data/` (repo.ts). The move happens once per space,
 * before any call of this version runs there: the dispatcher calls `prepareHome` under the space's
 * call lock at the first modifying call, and `recoverStorage` at server start. Then a marker in the
 * space's state folder (outside every zone) records that the space has this layout: from then on any
 * `data/.git` is the user's own data that nothing reads as a repository, and `git/` is created by
 * the first commit (a user who never uses Documents gets no repository, nor its cost in quota).
 *
 * A `data/.git` is trusted only when it is what Fileshed made: a real folder holding only real
 * folders and regular files (no link anywhere, no FIFO or device), with HEAD, objects/ and refs/,
 * without the files that make git read another place (`commondir`, `gitdir`,
 * `objects/info/alternates`), whose HEAD names a commit that can be read, with its tree (or no
 * commit yet). Such a repository gets Fileshed's config (a config written by a
 * command could make a real git run programs for an admin) and loses its hooks, then ONE rename
 * moves it to `git/`: a kill at any moment leaves it either still at `data/.git` (moved at the next
 * start or call) or at `git/`, never two halves, never a lost history.
 *
 * Anything else (a link, a file, links inside, a branch pointing at a missing commit...) is not
 * trusted: it stays where it is, as the user's data (never committed: git cannot hold `.git`), and a
 * new history starts at `git/` with the next commit, which records the current files. The caller
 * reports it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { TimeSlice } from '../../base/fs/slice.js';
import { listSliced } from '../../base/fs/list.js';
import { makeStateDir, readStateText, renameState, stateKind, writeNewStateFile } from '../../base/fs/nofollow.js';
import { LAYOUT_MARKER_NAME, scopeStateDir } from '../../base/locks/state-dir.js';
import { readCommit, readTree } from './objects.js';
import { readHead } from './refs.js';
import { CONFIG, repoExists, type Repo } from './repo.js';

export interface Migration {
  /** What users see: "Documents", "Group:team". */
  zone: string;
  /** moved: the old history is now at git/; untrusted: it was left in place as user data and a new history starts. */
  outcome: 'moved' | 'untrusted';
  /** Why an old `.git` was not trusted. */
  reason?: string;
  /** The space, as "users/alice" or "groups/team" (set by prepareHome). */
  space?: string;
}

/** Files that make git read objects or refs from another place: never in a repository Fileshed made. */
const REDIRECTS = ['commondir', 'gitdir', 'objects/info/alternates', 'objects/info/http-alternates'];

/** Test hook: called after each step, so a test can kill the process at every point. */
export interface MigrationHooks {
  afterStep?(step: 'checked' | 'configured' | 'moved' | 'marked'): void;
}

/**
 * Moves the old `data/.git` to `git/` when it can be trusted. Undefined when `git/` already existed
 * or nothing old was there; 'untrusted' leaves the old folder where it is.
 */
async function migrateRepo(repo: Repo, hooks: MigrationHooks = {}): Promise<Migration | undefined> {
  if (repoExists(repo)) return undefined;
  const old = path.join(repo.root, '.git');
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(old);
  } catch {
    return undefined; // no zone folder yet, or nothing there
  }
  const reason = await distrust(old, st);
  hooks.afterStep?.('checked');
  if (reason === undefined) {
    neutralise(old);
    hooks.afterStep?.('configured');
    try {
      fs.renameSync(old, repo.gitdir);
      hooks.afterStep?.('moved');
      return { zone: repo.label, outcome: 'moved' };
    } catch (err) {
      if (!repoExists(repo)) throw err;
      return undefined; // another process moved it at the same moment
    }
  }
  return { zone: repo.label, outcome: 'untrusted', reason };
}

/** Why `old` is not a repository Fileshed made, or undefined when it is one. */
async function distrust(old: string, st: fs.Stats): Promise<string | undefined> {
  if (st.isSymbolicLink()) return '.git is a symbolic link';
  if (!st.isDirectory()) return '.git is not a folder';
  // What every repository Fileshed made holds: HEAD, objects/ and refs/.
  const required: [string, 'file' | 'dir'][] = [['HEAD', 'file'], ['objects', 'dir'], ['refs', 'dir']];
  for (const [name, kind] of required) {
    const at = fs.lstatSync(path.join(old, name), { throwIfNoEntry: false });
    if (at === undefined || (kind === 'file' ? !at.isFile() : !at.isDirectory())) return `.git/${name} is missing`;
  }
  const slice = new TimeSlice();
  const stack = [''];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = await listSliced(rel === '' ? old : path.join(old, rel), slice);
    } catch {
      return `.git/${rel} cannot be read`;
    }
    for (const e of entries) {
      await slice.tick();
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) stack.push(child);
      else if (!e.isFile()) return `.git/${child} is ${e.isSymbolicLink() ? 'a symbolic link' : 'a special file'}`;
      else if (REDIRECTS.includes(child)) return `.git/${child} points git at another repository`;
    }
  }
  try {
    const head = readHead(old);
    if (head.oid !== undefined) await readTree(old, (await readCommit(old, head.oid)).tree);
  } catch {
    return 'its branch does not lead to a commit that can be read';
  }
  return undefined;
}

/** Fileshed's own config and no hooks: what an earlier command wrote there must not run for an admin's git. */
function neutralise(gitdir: string): void {
  if (readStateText(path.join(gitdir, 'config')) !== CONFIG) {
    const tmp = path.join(gitdir, `fileshed-config-${crypto.randomBytes(6).toString('hex')}.tmp`);
    writeNewStateFile(tmp, CONFIG);
    renameState(tmp, path.join(gitdir, 'config'));
  }
  fs.rmSync(path.join(gitdir, 'hooks'), { recursive: true, force: true });
}

/** Homes this process knows to have the layout (their marker was seen or written). */
const prepared = new Set<string>();
const LAYOUT = 'git-beside-data\n';

/**
 * A user home (`{base}/users/{id}`: Documents) or a group space (`{base}/groups/{id}`) gets this
 * version's layout: an earlier version's `data/.git` moved to `git/` (see above), then the marker.
 * The caller holds the space's call lock, so no command of the space runs meanwhile. One lookup of
 * the marker per space and process afterwards.
 */
/** Whether `home` is in this version's layout already (prepareHome has nothing left to do): read only, no lock needed. */
export function homePrepared(home: string): boolean {
  if (prepared.has(home)) return true;
  try {
    return stateKind(path.join(scopeStateDir(fs.realpathSync(home)), LAYOUT_MARKER_NAME)) === 'file';
  } catch {
    return false;
  }
}

export async function prepareHome(givenHome: string, hooks: MigrationHooks = {}): Promise<Migration[]> {
  if (prepared.has(givenHome)) return [];
  // Server state is checked against real paths (the storage base may be reached through a link).
  // A new user's home may not exist yet (a coordination service holds the call lock, not a file in it).
  fs.mkdirSync(givenHome, { recursive: true });
  const home = fs.realpathSync(givenHome);
  const marker = path.join(scopeStateDir(home), LAYOUT_MARKER_NAME);
  if (stateKind(marker) === 'file') {
    prepared.add(givenHome);
    return [];
  }
  const isUser = path.basename(path.dirname(home)) === 'users';
  const workBase = isUser ? path.join(home, 'Documents') : home;
  let done: Migration | undefined;
  if (fs.existsSync(workBase)) {
    const realBase = fs.realpathSync(workBase);
    const label = isUser ? 'Documents' : `Group:${path.basename(home)}`;
    done = await migrateRepo({ root: path.join(realBase, 'data'), gitdir: path.join(realBase, 'git'), label }, hooks);
  }
  makeStateDir(path.dirname(marker));
  const tmp = `${marker}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  writeNewStateFile(tmp, LAYOUT);
  renameState(tmp, marker);
  hooks.afterStep?.('marked');
  prepared.add(givenHome);
  return done === undefined ? [] : [{ ...done, space: `${path.basename(path.dirname(home))}/${path.basename(home)}` }];
}

/** One line for a report or a call's message. */
export function describeMigration(m: Migration): string {
  return m.outcome === 'moved'
    ? `The version history of ${m.zone} moved out of the zone to where commands cannot reach it.`
    : `The old version history of ${m.zone} could not be trusted (${m.reason}); it was left as the folder .git (your data, never committed) and a new history starts from the current files.`;
}
