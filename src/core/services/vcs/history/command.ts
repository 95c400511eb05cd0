/**
 * `git` in a versioned zone, served in-process (no git binary, nothing spawned, no config read):
 * shed_exec(zone="documents", cmd="git", args=[...]) calls `gitCommand`. Read-only subcommands
 * answer from the object store; restore/checkout write files and make one commit.
 */
import { shedError } from '../../../base/errors.js';
import type { Identity } from '../../../base/identity.js';
import type { Zone } from '../../../base/zones/zones.js';
import { blockedPattern } from '../../../base/blocked/rules.js';
import { fromKey } from '../../../formats/git/names.js';
import { ensureRepo, repoFor } from '../repo.js';
import { ok, type GitOutput } from './args.js';
import { gitBlame } from './blame.js';
import { gitDiff, gitStatus } from './diff.js';
import { gitLog, gitShow } from './log.js';
import { gitRestore, type RestoreLimits } from './restore.js';

export type { GitOutput } from './args.js';
export type { RestoreLimits } from './restore.js';

export const GIT_SUBCOMMANDS = ['log', 'show', 'diff', 'status', 'restore', 'checkout', 'blame'] as const;

const SUPPORTED = 'log, show, diff, status, restore, checkout, blame';
const EXAMPLE = 'shed_exec(zone="documents", cmd="git", args=["log", "--oneline", "-n", "10"])';

/** Why a well-known subcommand is not offered, in terms of what to do instead. */
const INSTEAD: Record<string, string> = {
  add: 'Every change in Documents is committed automatically (one commit per call; message="..." sets its text), so git add and git commit are never needed.',
  commit: 'Every change in Documents is committed automatically (one commit per call; message="..." sets its text), so git add and git commit are never needed.',
  rm: 'Delete with shed_delete(zone="documents", path="..."); the deletion is committed automatically.',
  mv: 'Rename with shed_rename(zone="documents", old_path="...", new_path="..."); the rename is committed automatically.',
  reset: 'History is never rewritten. To bring back an old version: git restore --source=REV -- path (this makes a new commit).',
  revert: 'To undo a change, bring back the previous version: git restore --source=HEAD~1 -- path (this makes a new commit).',
  switch: 'Documents has one line of history; to bring back old files use git restore --source=REV -- path.',
  branch: 'Documents has one line of history (branch main); branches are not available.',
  push: 'Documents has no remotes. To give someone a file, use shed_link_create.',
  pull: 'Documents has no remotes.',
  fetch: 'Documents has no remotes.',
  clone: 'Cloning is not available in Documents; in Storage, git runs as a normal command when it is installed.',
  init: 'Documents already is a repository; it is created automatically.',
};

export interface GitCommandOptions extends RestoreLimits {}

export async function gitCommand(zone: Zone, args: string[], author: Identity, options: GitCommandOptions = {}): Promise<GitOutput> {
  if (!zone.versioned) {
    throw shedError('COMMAND_FORBIDDEN', `${zone.label} has no version history; git history commands work in zone="documents".`, {
      hint: EXAMPLE,
    });
  }
  const rest = [...args];
  // Harmless global options; anything else before the subcommand (-c, -C, --git-dir...) could redirect git.
  while (rest[0] === '--no-pager' || rest[0] === '--no-optional-locks' || rest[0] === '-P') rest.shift();
  const sub = rest.shift();
  if (sub === undefined || sub === 'help' || sub === '--help') {
    return ok(`Fileshed serves these git subcommands in ${zone.label}: ${SUPPORTED}.\nExample: ${EXAMPLE}\n`);
  }
  if (sub === '--version' || sub === 'version') return ok('git version (Fileshed in-process history)\n');
  if (sub.startsWith('-')) {
    throw shedError('COMMAND_FORBIDDEN', `git option '${sub}' before the subcommand is not allowed (it could point git at another repository or run programs). Supported subcommands: ${SUPPORTED}.`, {
      details: { parameter: 'args', received: sub },
      hint: EXAMPLE,
    });
  }
  if (!(GIT_SUBCOMMANDS as readonly string[]).includes(sub)) {
    throw shedError('COMMAND_FORBIDDEN', `git ${sub} is not available in ${zone.label}. Supported subcommands: ${SUPPORTED}.${INSTEAD[sub] ? ` ${INSTEAD[sub]}` : ''}`, {
      details: { parameter: 'args', received: sub, supported: [...GIT_SUBCOMMANDS] },
      hint: EXAMPLE,
    });
  }
  // Blocked paths are not in the history's views: not in a diff, a patch, a status or a restore.
  const rules = zone.blocked;
  const repo = { ...repoFor(zone), ...(rules !== undefined && rules.patterns.length > 0 ? { hidden: (key: string) => blockedPattern(rules, fromKey(key)) !== undefined } : {}) };
  await ensureRepo(repo);
  switch (sub) {
    case 'log':
      return gitLog(repo, zone, rest);
    case 'show':
      return gitShow(repo, zone, rest);
    case 'diff':
      return gitDiff(repo, zone, rest);
    case 'status':
      return gitStatus(repo, zone, rest);
    case 'blame':
      return gitBlame(repo, zone, rest);
    default:
      return gitRestore(repo, zone, sub as 'restore' | 'checkout', rest, author, options);
  }
}
