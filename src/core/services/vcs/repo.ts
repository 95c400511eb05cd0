/**
 * One repository per versioned zone, at `git/` beside the zone's `data/` (SPEC section 4):
 * `users/{id}/Documents/git` for Documents, `groups/{id}/git` for a group space. It is the git dir
 * of the work tree `data/` (a real git reads it with `git --git-dir=git --work-tree=data log`), and
 * it lies outside every zone, so no command can reach it. A `.git` inside `data/` is the user's own
 * data: nothing here ever reads it as a repository (the one exception is the move of a repository
 * made by an earlier version, migrate.ts, before any call of this version ran in the space).
 *
 * Creation is atomic: the folder is built under a temp name beside it and renamed into place; a
 * concurrent creator simply finds it there. Every access to it goes through fs/nofollow.ts: no link
 * is ever followed inside it, and a link or special file there fails the access (IO_ERROR).
 *
 * Nothing here runs programs: no hooks are installed or ever run, and we never read the repository
 * config, so no setting in it can make us execute anything. The config we write only describes the
 * repository (file modes and links kept, no case folding) so that a real git reading it agrees with
 * our trees.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { checkStateDir, readStateText, writeNewStateFile } from '../../base/fs/nofollow.js';
import type { Zone } from '../../base/zones/zones.js';

export interface Repo {
  /** Real path of the working tree (the zone root, `data/`). */
  root: string;
  /** Real path of the repository (`git/` beside the zone root). */
  gitdir: string;
  /** What users see: "Documents". */
  label: string;
  /**
   * History entries (byte-string paths, folders included) the history views never show nor restore:
   * blocked paths (valve blocked_patterns). Set by the in-process git commands only.
   */
  hidden?: (key: string) => boolean;
  /**
   * No index is kept: the capture store's shadow repositories (undo/shadow.ts), which no git ever
   * reads as a work tree. The index is only a stat cache for a git looking at the folder, and
   * rewriting it on every call was about a third of a capture's cost.
   */
  noIndex?: true;
}

const REPO_DIR = 'git';
export const CONFIG = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n';
const HEAD = 'ref: refs/heads/main\n';
/** Prefix of the temp folder a creation builds before its rename (swept by recovery). */
export const INIT_PREFIX = '.git-init-';

export function repoFor(zone: Pick<Zone, 'root' | 'label'>): Repo {
  return { root: zone.root, gitdir: path.join(path.dirname(zone.root), REPO_DIR), label: zone.label };
}

/** True when the zone already has its repository (a link or a file there is refused: IO_ERROR). */
export function repoExists(repo: Repo): boolean {
  return checkStateDir(repo.gitdir);
}

/**
 * Creates the repository when missing; a `git` that is not a real folder is refused (IO_ERROR).
 * Returns the text of HEAD when it was already there (read to know the repository is complete), so
 * a caller that needs HEAD next does not read it a second time (refs.ts headOf); undefined otherwise.
 */
export async function ensureRepo(repo: Repo): Promise<string | undefined> {
  // The usual case first: HEAD read as server state (no link followed, and its descriptor found at
  // exactly this path, so the git folder and every folder above it are real folders) says the
  // repository is there and complete, without checking the folder on its own beforehand. A link
  // or a file in place of the folder fails in that read as it did in the check (IO_ERROR).
  const head = readStateText(path.join(repo.gitdir, 'HEAD'));
  if (head !== undefined) return head;
  if (repoExists(repo)) {
    completeRepo(repo.gitdir);
    return undefined;
  }
  createRepo(repo.gitdir);
  return undefined;
}

/** Builds an empty repository under a temp name beside `gitdir` and renames it into place. */
function createRepo(gitdir: string): void {
  const tmp = path.join(path.dirname(gitdir), `${INIT_PREFIX}${crypto.randomBytes(6).toString('hex')}`);
  try {
    fs.mkdirSync(tmp);
    completeRepo(tmp);
    fs.renameSync(tmp, gitdir);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!checkStateDir(gitdir)) throw err;
    // Someone else created it at the same moment: theirs is as good as ours.
  }
}

/** The folders and files every repository needs (a folder left without HEAD is made usable: it holds nothing yet). */
function completeRepo(gitdir: string): void {
  for (const dir of ['objects', 'objects/info', 'objects/pack', 'refs', 'refs/heads', 'refs/tags']) {
    try {
      fs.mkdirSync(path.join(gitdir, dir));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    checkStateDir(path.join(gitdir, dir));
  }
  if (readStateText(path.join(gitdir, 'config')) === undefined) writeNewStateFile(path.join(gitdir, 'config'), CONFIG);
  writeNewStateFile(path.join(gitdir, 'HEAD'), HEAD);
}
