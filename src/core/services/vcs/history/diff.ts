/**
 * git diff and git status. Fileshed commits every change, so the index always equals HEAD:
 * "unstaged" means "changed on disk since the last commit", --cached is always empty, and status
 * compares the working tree with HEAD (by content id; stat data of `.git/index` spares re-hashing).
 */
import type { Zone } from '../../../base/zones/zones.js';
import { fromKey } from '../../../formats/git/names.js';
import { readCommit } from '../objects.js';
import { readHead } from '../refs.js';
import type { Repo } from '../repo.js';
import { badOption, ok, pathArg, splitDashDash, type GitOutput } from './args.js';
import { nameOnly, nameStatus, patchText, quote, statBlock } from './render.js';
import { pathOrRevision } from './log.js';
import { isRevision, resolveRevision } from './revisions.js';
import { diffTrees, diffWorktree, filterKey, flatten, worktreeFiles, type FileChange } from './trees.js';

const DIFF_OPTIONS = '--stat, --name-only, --name-status, --cached/--staged, REV, REV1 REV2, REV1..REV2, -- path';
const STATUS_OPTIONS = '--short (-s), --porcelain, --long, -- path';

export async function gitDiff(repo: Repo, zone: Zone, args: string[]): Promise<GitOutput> {
  const { before, paths } = splitDashDash(args);
  let detail: 'patch' | 'stat' | 'name-only' | 'name-status' = 'patch';
  let cached = false;
  const revs: string[] = [];
  const filters: string[] = [];
  for (const a of before) {
    if (a === '--stat') detail = 'stat';
    else if (a === '--name-only') detail = 'name-only';
    else if (a === '--name-status') detail = 'name-status';
    else if (a === '--cached' || a === '--staged') cached = true;
    else if (a === '-p' || a === '--patch' || a === '-u' || a === '--no-color') continue;
    else if (a.startsWith('-')) throw badOption('diff', a, DIFF_OPTIONS);
    else if (await isRevision(repo, a.includes('..') ? (a.split(/\.\.\.?/).find(Boolean) ?? 'HEAD') : a)) revs.push(a);
    else filters.push(pathOrRevision(repo, zone, a));
  }
  for (const p of paths ?? []) filters.push(filterKey(pathArg(zone, p)));

  const head = readHead(repo.gitdir);
  const headTree = head.oid === undefined ? undefined : (await readCommit(repo.gitdir, head.oid)).tree;
  let changes: FileChange[];
  let worktree = false;
  if (revs.length === 1 && revs[0]!.includes('..')) {
    const [, from, to] = /^(.*?)\.\.\.?(.*)$/.exec(revs[0]!)!;
    changes = await diffTrees(repo, await treeOf(repo, from || 'HEAD'), await treeOf(repo, to || 'HEAD'), filters);
  } else if (revs.length === 2) {
    changes = await diffTrees(repo, await treeOf(repo, revs[0]!), await treeOf(repo, revs[1]!), filters);
  } else if (revs.length > 2) {
    throw badOption('diff', revs[2]!, `at most two revisions (${DIFF_OPTIONS})`);
  } else if (cached) {
    // The index is HEAD: compared with a revision it is that revision against HEAD, else nothing.
    changes = revs.length === 1 ? await diffTrees(repo, await treeOf(repo, revs[0]!), headTree, filters) : [];
  } else {
    const base = revs.length === 1 ? await treeOf(repo, revs[0]!) : headTree;
    changes = await diffWorktree(repo, base, filters);
    // Like git: files on disk that were never committed (not in HEAD, hence not in the index) are left out.
    const tracked = base === headTree ? undefined : await flatten(repo, headTree, filters);
    changes = changes.filter((c) => c.old !== undefined || tracked?.has(c.path));
    worktree = true;
  }
  if (detail === 'stat') return ok(await statBlock(repo, changes, worktree));
  if (detail === 'name-only') return ok(nameOnly(changes));
  if (detail === 'name-status') return ok(nameStatus(changes));
  return ok(await patchText(repo, changes, worktree));
}

async function treeOf(repo: Repo, rev: string): Promise<string> {
  return (await readCommit(repo.gitdir, await resolveRevision(repo, rev))).tree;
}

export async function gitStatus(repo: Repo, zone: Zone, args: string[]): Promise<GitOutput> {
  const { before, paths } = splitDashDash(args);
  let short = false;
  const filters: string[] = [];
  for (const a of before) {
    if (a === '-s' || a === '--short' || a === '--porcelain' || a === '--porcelain=v1') short = true;
    else if (a === '--long' || a === '-uall' || a === '--untracked-files=all' || a === '--no-color') continue;
    else if (a.startsWith('-')) throw badOption('status', a, STATUS_OPTIONS);
    else filters.push(filterKey(pathArg(zone, a)));
  }
  for (const p of paths ?? []) filters.push(filterKey(pathArg(zone, p)));

  const head = readHead(repo.gitdir);
  const headTree = head.oid === undefined ? undefined : (await readCommit(repo.gitdir, head.oid)).tree;
  const tracked = await flatten(repo, headTree, filters);
  const work = await worktreeFiles(repo, filters);
  const modified: string[] = [];
  const deleted: string[] = [];
  for (const [key, t] of tracked) {
    const w = work.get(key);
    if (w === undefined) deleted.push(key);
    else if (w.oid !== t.oid || w.mode !== t.mode) modified.push(key);
  }
  const untracked = collapseUntracked([...work.keys()].filter((k) => !tracked.has(k)), await flatten(repo, headTree));

  if (short) {
    const rows = [...modified.map((k) => ({ k, t: ' M' })), ...deleted.map((k) => ({ k, t: ' D' }))].sort((a, b) => (a.k < b.k ? -1 : 1));
    const lines = rows.map((r) => `${r.t} ${quote(fromKey(r.k))}`);
    lines.push(...untracked.map((k) => `?? ${quote(fromKey(k))}`));
    return ok(lines.map((l) => `${l}\n`).join(''));
  }
  const branch = (head.ref ?? 'HEAD').replace(/^refs\/heads\//, '');
  const out = [head.ref === undefined ? `HEAD detached at ${head.oid?.slice(0, 7)}` : `On branch ${branch}`];
  if (head.oid === undefined) out.push('', 'No commits yet');
  if (modified.length + deleted.length > 0) {
    out.push('Changes not committed yet (made outside Fileshed; the next change to these paths commits them):');
    out.push('  (use "git diff" to see them, "git restore <path>" to discard them)');
    const rows = [...modified.map((k) => ({ k, t: 'modified:   ' })), ...deleted.map((k) => ({ k, t: 'deleted:    ' }))].sort((a, b) => (a.k < b.k ? -1 : 1));
    for (const r of rows) out.push(`\t${r.t}${quote(fromKey(r.k))}`);
    out.push('');
  }
  if (untracked.length > 0) {
    out.push('Untracked files (not in the history yet):');
    for (const k of untracked) out.push(`\t${quote(fromKey(k))}`);
    out.push('');
  }
  if (modified.length + deleted.length + untracked.length === 0) out.push('nothing to commit, working tree clean');
  return ok(`${out.join('\n')}\n`);
}

/** Like git: an untracked folder with no tracked file inside is shown once, as "folder/". */
function collapseUntracked(keys: string[], allTracked: Map<string, unknown>): string[] {
  const trackedDirs = new Set<string>();
  for (const k of allTracked.keys()) {
    for (let i = k.indexOf('/'); i >= 0; i = k.indexOf('/', i + 1)) trackedDirs.add(k.slice(0, i));
  }
  const out = new Set<string>();
  for (const k of keys) {
    let shown = k;
    for (let i = k.indexOf('/'); i >= 0; i = k.indexOf('/', i + 1)) {
      const dir = k.slice(0, i);
      if (!trackedDirs.has(dir)) {
        shown = `${dir}/`;
        break;
      }
    }
    out.add(shown);
  }
  return [...out].sort();
}
