/**
 * Revision names as git users type them: full or short ids (a unique prefix of at least 4 hex
 * digits; among several objects the one commit wins), HEAD or @, branch and tag names, and any of
 * those followed by ~N, ~, ^, ^N (HEAD~2, HEAD^^, main~1, abc1234^).
 */
import { shedError } from '../../../base/errors.js';
import { expandPrefix, readCommit, readObject } from '../objects.js';
import { readHead, readRef } from '../refs.js';
import type { Repo } from '../repo.js';

const HINT = 'Use a commit id from git log --oneline (e.g. "a1b2c3d"), or HEAD, HEAD~1, HEAD^, main.';

export async function resolveRevision(repo: Repo, text: string): Promise<string> {
  const m = /^([^~^]*)((?:[~^]\d*)*)$/.exec(text);
  if (m === null || m[1] === '') throw invalid(text, 'is not a revision');
  let oid = await resolveBase(repo, m[1]!, text);
  for (const step of m[2]!.match(/[~^]\d*/g) ?? []) {
    const n = step.length > 1 ? Number(step.slice(1)) : 1;
    if (step[0] === '~') {
      for (let i = 0; i < n; i++) oid = await parentOf(repo, oid, 1, text);
    } else if (n > 0) {
      oid = await parentOf(repo, oid, n, text);
    }
  }
  return oid;
}

async function parentOf(repo: Repo, oid: string, nth: number, text: string): Promise<string> {
  const commit = await readCommit(repo.gitdir, oid);
  const parent = commit.parents[nth - 1];
  if (parent === undefined) {
    const why = commit.parents.length === 0 ? `goes back past the first commit (${oid.slice(0, 7)} has no parent)` : `asks for parent ${nth} of ${oid.slice(0, 7)}, which has ${commit.parents.length}`;
    throw invalid(text, why);
  }
  return parent;
}

async function resolveBase(repo: Repo, base: string, text: string): Promise<string> {
  if (base === 'HEAD' || base === '@') {
    const head = readHead(repo.gitdir);
    if (head.oid === undefined) throw invalid(text, `cannot be used yet: ${repo.label} has no commits`);
    return head.oid;
  }
  if (/^[A-Za-z0-9._/-]+$/.test(base)) {
    for (const ref of [`refs/heads/${base}`, `refs/tags/${base}`]) {
      const oid = readRef(repo.gitdir, ref);
      if (oid !== undefined) return peelToCommit(repo, oid, text);
    }
  }
  if (/^[0-9a-fA-F]{4,40}$/.test(base)) {
    const prefix = base.toLowerCase();
    const found = await expandPrefix(repo.gitdir, prefix);
    const commits: string[] = [];
    for (const oid of found.oids) if (await isCommit(repo, oid)) commits.push(oid);
    if (commits.length === 1 && !found.ambiguous) return commits[0]!;
    if (commits.length > 1 || found.ambiguous) throw invalid(text, `is ambiguous: several objects start with '${prefix}'`, 'Give more digits of the id.');
    if (found.oids.length > 0) throw invalid(text, 'names an object that is not a commit');
  } else if (/^[0-9a-fA-F]{1,3}$/.test(base)) {
    throw invalid(text, 'is too short: a commit id needs at least 4 hex digits');
  }
  throw invalid(text, 'is not a commit id or branch of this history');
}

async function isCommit(repo: Repo, oid: string): Promise<boolean> {
  try {
    await readCommit(repo.gitdir, oid);
    return true;
  } catch {
    return false;
  }
}

/** A tag may point at a tag object: follow it to the commit. */
async function peelToCommit(repo: Repo, oid: string, text: string): Promise<string> {
  for (let depth = 0; depth < 10; depth++) {
    const obj = await readObject(repo.gitdir, oid);
    if (obj.type === 'commit') return oid;
    if (obj.type !== 'tag') break;
    const m = /^object ([0-9a-f]{40})/.exec(obj.body.toString('latin1'));
    if (m === null) break;
    oid = m[1]!;
  }
  throw invalid(text, 'does not lead to a commit');
}

export function invalid(text: string, why: string, extra = ''): Error {
  return shedError('INVALID_REVISION', `Revision '${text}' ${why}.${extra ? ` ${extra}` : ''}`, {
    details: { parameter: 'args', received: text },
    hint: HINT,
  });
}

/** True when the text looks like a revision we could resolve (used to tell revisions from paths). */
export async function isRevision(repo: Repo, text: string): Promise<boolean> {
  try {
    await resolveRevision(repo, text);
    return true;
  } catch {
    return false;
  }
}
