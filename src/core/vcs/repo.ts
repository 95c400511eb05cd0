/**
 * One repository per versioned zone (Documents: users/{id}/Documents/data; groups later:
 * groups/{id}/data), with `.git` inside the zone root.
 *
 * Created lazily, at the first commit or history command, so opening a zone (every call) stays a
 * mkdir; a zone that is never changed never gets a `.git`. Creation is atomic: isomorphic-git
 * initialises a temp folder beside the zone root (outside what users see), our config replaces
 * its own, and one rename puts it in place; a concurrent creator simply finds it there.
 *
 * Nothing here runs programs: no hooks are installed or ever run (neither we nor isomorphic-git
 * run hooks), and we never read the repository config, so no setting in it can make us execute
 * anything. The config we write only describes the repository (file modes and links kept, no
 * case folding) so that a real git reading it agrees with our trees.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../errors.js';
import { writeBytes } from '../fs/read.js';
import type { Zone } from '../zones/zones.js';
import { isomorphicGit } from './objects.js';

export interface Repo {
  /** Real path of the working tree (the zone root). */
  root: string;
  gitdir: string;
  /** What users see: "Documents". */
  label: string;
  /**
   * History entries (byte-string paths, folders included) the history views never show nor restore:
   * blocked paths (valve blocked_patterns). Set by the in-process git commands only.
   */
  hidden?: (key: string) => boolean;
}

const CONFIG = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n';

export function repoFor(zone: Pick<Zone, 'root' | 'label'>): Repo {
  return { root: zone.root, gitdir: path.join(zone.root, '.git'), label: zone.label };
}

/** True when the zone already has its repository. */
export function repoExists(repo: Repo): boolean {
  return gitdirState(repo) === 'ok';
}

/** Creates the repository when missing; refuses a `.git` that is not a real folder. */
export async function ensureRepo(repo: Repo): Promise<void> {
  const state = gitdirState(repo);
  if (state === 'ok') return;
  if (state === 'bad') {
    throw shedError('IO_ERROR', `The version history of ${repo.label} is damaged (.git is not a folder); an admin must repair it.`, {
      hint: 'Files can still be read and written in zone="storage" meanwhile.',
    });
  }
  const tmp = path.join(path.dirname(repo.root), `.git-init-${crypto.randomBytes(6).toString('hex')}`);
  try {
    const { init } = await isomorphicGit();
    await init({ fs, dir: repo.root, gitdir: tmp, defaultBranch: 'main' });
    writeBytes(path.join(tmp, 'config'), CONFIG);
    fs.rmSync(path.join(tmp, 'hooks'), { recursive: true, force: true });
    fs.mkdirSync(path.join(tmp, 'objects', 'info'), { recursive: true });
    fs.renameSync(tmp, repo.gitdir);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (gitdirState(repo) !== 'ok') throw err;
    // Someone else created it at the same moment: theirs is as good as ours.
  }
}

function gitdirState(repo: Repo): 'ok' | 'missing' | 'bad' {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(repo.gitdir);
  } catch {
    return 'missing';
  }
  // A link or a "gitdir:" file could point anywhere: only a real folder is a repository we manage.
  if (!st.isDirectory()) return 'bad';
  if (!fs.existsSync(path.join(repo.gitdir, 'HEAD'))) {
    // A folder without HEAD (an interrupted foreign init): make it usable, it holds nothing yet.
    fs.mkdirSync(path.join(repo.gitdir, 'objects'), { recursive: true });
    fs.mkdirSync(path.join(repo.gitdir, 'refs', 'heads'), { recursive: true });
    if (!fs.existsSync(path.join(repo.gitdir, 'config'))) writeBytes(path.join(repo.gitdir, 'config'), CONFIG);
    writeBytes(path.join(repo.gitdir, 'HEAD'), 'ref: refs/heads/main\n');
  }
  return 'ok';
}
