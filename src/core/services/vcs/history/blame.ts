/**
 * git blame: which commit last changed each line. Walks the first-parent history of the file and
 * diffs consecutive versions (diffArrays of lines), so the cost is the number of versions of that
 * one file times its size; capped at MAX_VERSIONS (older lines are then shown at the oldest commit
 * reached, marked '^' like git's boundary commits).
 */
import path from 'node:path';
import { diffArrays } from 'diff';
import { shedError } from '../../../base/errors.js';
import { readBytes } from '../../../base/fs/read.js';
import type { Zone } from '../../../base/zones/zones.js';
import { hashObject, type Commit } from '../../../formats/git/objects.js';
import { readBlob, readCommit } from '../objects.js';
import type { Repo } from '../repo.js';
import { badOption, ok, pathArg, splitDashDash, type GitOutput } from './args.js';
import { isBinary, isoDate } from './render.js';
import { resolveRevision } from './revisions.js';
import { entryAt, filterKey } from './trees.js';

const MAX_VERSIONS = 500;

export async function gitBlame(repo: Repo, zone: Zone, args: string[]): Promise<GitOutput> {
  const { before, paths } = splitDashDash(args);
  const words: string[] = [];
  for (const a of before) {
    if (a.startsWith('-')) throw badOption('blame', a, 'REV (optional) and one path: blame [REV] [--] path');
    words.push(a);
  }
  const all = [...words, ...(paths ?? [])];
  if (all.length === 0 || all.length > 2 || (paths !== undefined && paths.length !== 1)) {
    throw shedError('INVALID_PARAMETER', 'git blame needs exactly one file (and optionally a revision before it).', {
      details: { parameter: 'args' },
      hint: 'Example: shed_exec(zone="documents", cmd="git", args=["blame", "notes.txt"])',
    });
  }
  const rev = all.length === 2 ? all[0]! : 'HEAD';
  const rel = pathArg(zone, all[all.length - 1]!);
  const key = filterKey(rel);
  const start = await readCommit(repo.gitdir, await resolveRevision(repo, rev));
  const entry = await entryAt(repo, start.tree, key);
  if (entry === undefined || entry.mode === '40000') {
    throw shedError('FILE_NOT_FOUND', `'${rel}' is not a file in ${rev} (${start.oid.slice(0, 7)}).`, {
      details: { parameter: 'args', path: rel },
      hint: `See its history: shed_exec(zone="documents", cmd="git", args=["log", "--oneline", "--", "${rel}"])`,
    });
  }
  const text = await readBlob(repo.gitdir, entry.oid);
  if (isBinary(text)) return ok('', `blame: '${rel}' is a binary file; nothing to show line by line.\n`);
  const lines = splitLines(text.toString('utf8'));

  // pending[i] = position in the version being examined of final line i, until attributed.
  const owner: (Commit | undefined)[] = lines.map(() => undefined);
  let pending = lines.map((_, i) => ({ final: i, pos: i }));
  let commit = start;
  let version = lines;
  let boundary = false;
  for (let steps = 0; pending.length > 0; steps++) {
    const parentOid = commit.parents[0];
    const parent = parentOid === undefined ? undefined : await readCommit(repo.gitdir, parentOid);
    const parentEntry = parent === undefined ? undefined : await entryAt(repo, parent.tree, key);
    if (parent === undefined || parentEntry === undefined || parentEntry.mode === '40000' || steps >= MAX_VERSIONS) {
      for (const p of pending) owner[p.final] = commit;
      boundary = parent === undefined || steps >= MAX_VERSIONS;
      break;
    }
    const old = splitLines((await readBlob(repo.gitdir, parentEntry.oid)).toString('utf8'));
    if (parentEntry.oid !== (await entryAt(repo, commit.tree, key))?.oid) {
      const map = lineMap(old, version);
      const next: typeof pending = [];
      for (const p of pending) {
        const back = map[p.pos];
        if (back === undefined) owner[p.final] = commit;
        else next.push({ final: p.final, pos: back });
      }
      pending = next;
    }
    commit = parent;
    version = old;
  }

  const rows = lines.map((line, i) => ({ c: owner[i]!, line }));
  const nameWidth = Math.max(...rows.map((r) => authorName(r.c).length));
  const numWidth = String(lines.length).length;
  const out = rows.map((r, i) => {
    const isBoundary = boundary && r.c.oid === commit.oid;
    const id = isBoundary ? `^${r.c.oid.slice(0, 7)}` : r.c.oid.slice(0, 8);
    return `${id} (${authorName(r.c).padEnd(nameWidth)} ${isoDate(r.c.authorTime, r.c.authorTz)} ${String(i + 1).padStart(numWidth)}) ${r.line}`;
  });
  return ok(out.length ? `${out.join('\n')}\n` : '', all.length === 1 && changedOnDisk(repo, rel, entry.oid) ? `note: this is the last committed version of '${rel}'; the file on disk has changes that are not committed yet.\n` : '');
}

function changedOnDisk(repo: Repo, rel: string, oid: string): boolean {
  try {
    return hashObject('blob', readBytes(path.join(repo.root, rel))) !== oid;
  } catch {
    return true;
  }
}

function authorName(c: Commit): string {
  return c.author.replace(/\s*<[^>]*>$/, '');
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** For each line of `now`, its index in `old` when it is unchanged there, else undefined. */
function lineMap(old: string[], now: string[]): (number | undefined)[] {
  const map: (number | undefined)[] = new Array(now.length).fill(undefined);
  let i = 0;
  let j = 0;
  for (const part of diffArrays(old, now)) {
    if (part.added) j += part.count;
    else if (part.removed) i += part.count;
    else {
      for (let k = 0; k < part.count; k++) map[j + k] = i + k;
      i += part.count;
      j += part.count;
    }
  }
  return map;
}
