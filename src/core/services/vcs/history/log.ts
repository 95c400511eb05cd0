/**
 * git log and git show. History is walked newest first (by commit time, like git); with paths,
 * only commits that changed something under them are listed (compared with the first parent).
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../../base/errors.js';
import type { Zone } from '../../../base/zones/zones.js';
import { fromKey } from '../../../formats/git/names.js';
import { isTreeMode, type Commit } from '../../../formats/git/objects.js';
import { readBlob, readCommit, readTree } from '../objects.js';
import { readHead } from '../refs.js';
import type { Repo } from '../repo.js';
import { badOption, countOption, fail, ok, pathArg, splitDashDash, type GitOutput } from './args.js';
import { mediumHeader, nameOnly, nameStatus, onelineHeader, patchText, statBlock, isBinary } from './render.js';
import { invalid, isRevision, resolveRevision } from './revisions.js';
import { diffTrees, entryAt, filterKey, type Filters } from './trees.js';

/** Output beyond this is not produced: the caller truncates far earlier anyway. */
const OUTPUT_BUDGET = 1024 * 1024;
const LOG_OPTIONS = '--oneline, -n N (or -N, --max-count=N), --stat, -p/--patch, --name-only, --name-status, a revision or range (HEAD~5, a1b2c3d..HEAD), -- path';
const SHOW_OPTIONS = '--stat, --oneline, --name-only, --name-status, --no-patch (-s), REV, REV:path';

type Detail = 'none' | 'stat' | 'patch' | 'name-only' | 'name-status';

interface Format {
  oneline: boolean;
  detail: Detail;
}

function detailOption(a: string): Detail | undefined {
  return ({ '--stat': 'stat', '-p': 'patch', '-u': 'patch', '--patch': 'patch', '--name-only': 'name-only', '--name-status': 'name-status', '-s': 'none', '--no-patch': 'none' } as const)[a];
}

export async function gitLog(repo: Repo, zone: Zone, args: string[]): Promise<GitOutput> {
  const { before, paths } = splitDashDash(args);
  const fmt: Format = { oneline: false, detail: 'none' };
  let max = Infinity;
  const revs: string[] = [];
  const filters: string[] = [];
  for (let i = 0; i < before.length; i++) {
    const a = before[i]!;
    const n = countOption('log', before, i);
    if (n !== undefined) {
      max = n.value;
      i += n.used - 1;
    } else if (a === '--oneline') fmt.oneline = true;
    else if (detailOption(a) !== undefined) fmt.detail = detailOption(a)!;
    else if (a === '--no-color' || a === '--no-decorate' || a === '--decorate') continue;
    else if (a.startsWith('-')) throw badOption('log', a, LOG_OPTIONS);
    else if (await isRevision(repo, a.split('..').filter(Boolean)[0] ?? a)) revs.push(a);
    else filters.push(pathOrRevision(repo, zone, a));
  }
  for (const p of paths ?? []) filters.push(filterKey(pathArg(zone, p)));
  const head = readHead(repo.gitdir);
  if (head.oid === undefined) return noCommits(repo, head.ref);

  let start = head.oid;
  const exclude = new Set<string>();
  if (revs.length > 1) throw badOption('log', revs[1]!, `one revision or range (${LOG_OPTIONS})`);
  if (revs.length === 1) {
    const range = /^(.*?)\.\.\.?(.*)$/.exec(revs[0]!);
    if (range !== null) {
      start = await resolveRevision(repo, range[2] || 'HEAD');
      for (const oid of await ancestors(repo, await resolveRevision(repo, range[1] || 'HEAD'))) exclude.add(oid);
    } else {
      start = await resolveRevision(repo, revs[0]!);
    }
  }

  let out = '';
  let shown = 0;
  for await (const c of walk(repo, start, exclude)) {
    if (shown >= max) break;
    const parentTree = c.parents[0] === undefined ? undefined : (await readCommit(repo.gitdir, c.parents[0])).tree;
    if (filters.length > 0 && !(await touches(repo, parentTree, c.tree, filters))) continue;
    if (out.length > OUTPUT_BUDGET) {
      out += '... (more commits not shown: use -n N, a revision range or -- path to narrow the log)\n';
      break;
    }
    out += await renderCommit(repo, c, parentTree, fmt, filters, shown > 0);
    shown++;
  }
  return ok(out);
}

/** A word that is not a revision: a path (inside the zone); what looks like a mistyped revision and is no file gets the revision error. */
export function pathOrRevision(repo: Repo, zone: Zone, a: string): string {
  const rel = pathArg(zone, a);
  const looksLikeRevision = /^[0-9a-f]{4,40}$/i.test(a) || /[~^]/.test(a) || a.includes('..');
  if (looksLikeRevision && !fs.existsSync(path.join(repo.root, rel))) throw invalid(a, 'is not a commit of this history (nor a file)');
  return filterKey(rel);
}

async function renderCommit(repo: Repo, c: Commit, parentTree: string | undefined, fmt: Format, filters: Filters, separator: boolean): Promise<string> {
  let text = fmt.oneline ? onelineHeader(c) : `${separator ? '\n' : ''}${mediumHeader(c)}`;
  if (fmt.detail === 'none') return text;
  const changes = await diffTrees(repo, parentTree, c.tree, filters);
  if (changes.length === 0) return text;
  if (fmt.detail === 'stat') text += `${fmt.oneline ? '' : '\n'}${await statBlock(repo, changes)}`;
  else if (fmt.detail === 'name-only') text += `${fmt.oneline ? '' : '\n'}${nameOnly(changes)}`;
  else if (fmt.detail === 'name-status') text += `${fmt.oneline ? '' : '\n'}${nameStatus(changes)}`;
  else text += `${fmt.oneline ? '' : '\n'}${await patchText(repo, changes)}`;
  return text;
}

/** Did the commit change anything under the filters? Compares only the entries at the filter paths. */
async function touches(repo: Repo, parentTree: string | undefined, tree: string, filters: Filters): Promise<boolean> {
  for (const f of filters) {
    const a = parentTree === undefined ? undefined : await entryAt(repo, parentTree, f);
    const b = await entryAt(repo, tree, f);
    if (a?.oid !== b?.oid || a?.mode !== b?.mode) return true;
  }
  return false;
}

/** Commits reachable from `start`, newest first by commit time, skipping `exclude`. */
async function* walk(repo: Repo, start: string, exclude: Set<string>): AsyncGenerator<Commit> {
  const seen = new Set<string>([start]);
  const queue: Commit[] = [await readCommit(repo.gitdir, start)];
  while (queue.length > 0) {
    const c = queue.shift()!;
    if (!exclude.has(c.oid)) yield c;
    for (const p of c.parents) {
      if (seen.has(p)) continue;
      seen.add(p);
      const pc = await readCommit(repo.gitdir, p);
      let i = queue.findIndex((q) => q.committerTime < pc.committerTime);
      if (i < 0) i = queue.length;
      queue.splice(i, 0, pc);
    }
  }
}

async function ancestors(repo: Repo, start: string): Promise<Set<string>> {
  const out = new Set<string>([start]);
  const stack = [start];
  while (stack.length > 0) {
    for (const p of (await readCommit(repo.gitdir, stack.pop()!)).parents) {
      if (!out.has(p)) {
        out.add(p);
        stack.push(p);
      }
    }
  }
  return out;
}

export function noCommits(repo: Repo, ref: string | undefined): GitOutput {
  const branch = (ref ?? 'refs/heads/main').replace(/^refs\/heads\//, '');
  return fail(`fatal: your current branch '${branch}' does not have any commits yet (${repo.label} gets its first commit with its first change)\n`);
}

export async function gitShow(repo: Repo, zone: Zone, args: string[]): Promise<GitOutput> {
  const { before, paths } = splitDashDash(args);
  const fmt: Format = { oneline: false, detail: 'patch' };
  const targets: string[] = [];
  for (const a of before) {
    if (a === '--oneline') fmt.oneline = true;
    else if (detailOption(a) !== undefined) fmt.detail = detailOption(a)!;
    else if (a === '--no-color' || a === '--no-decorate') continue;
    else if (a.startsWith('-')) throw badOption('show', a, SHOW_OPTIONS);
    else targets.push(a);
  }
  const filters = (paths ?? []).map((p) => filterKey(pathArg(zone, p)));
  const head = readHead(repo.gitdir);
  if (head.oid === undefined) return noCommits(repo, head.ref);
  if (targets.length === 0) targets.push('HEAD');
  let out = '';
  for (const [i, t] of targets.entries()) {
    const colon = t.indexOf(':');
    if (colon >= 0) {
      out += await showPath(repo, zone, t.slice(0, colon) || 'HEAD', t.slice(colon + 1));
      continue;
    }
    const c = await readCommit(repo.gitdir, await resolveRevision(repo, t));
    const parentTree = c.parents[0] === undefined ? undefined : (await readCommit(repo.gitdir, c.parents[0])).tree;
    out += await renderCommit(repo, c, parentTree, fmt, filters, i > 0);
  }
  return ok(out);
}

/** `show REV:path`: a file's content at that commit, or a folder's listing like git. */
async function showPath(repo: Repo, zone: Zone, rev: string, rawPath: string): Promise<string> {
  const oid = await resolveRevision(repo, rev);
  const c = await readCommit(repo.gitdir, oid);
  const rel = pathArg(zone, rawPath);
  const entry = await entryAt(repo, c.tree, filterKey(rel));
  if (entry === undefined) {
    throw shedError('FILE_NOT_FOUND', `'${rel}' does not exist in ${rev} (${oid.slice(0, 7)}).`, {
      details: { parameter: 'args', path: rel, revision: rev },
      hint: `See in which commits it existed: shed_exec(zone="documents", cmd="git", args=["log", "--oneline", "--", "${rel}"])`,
    });
  }
  if (isTreeMode(entry.mode)) {
    const key = filterKey(rel);
    const visible = (await readTree(repo.gitdir, entry.oid)).filter((e) => !repo.hidden?.(key === '' ? e.name : `${key}/${e.name}`));
    const names = visible.map((e) => `${fromKey(e.name)}${isTreeMode(e.mode) ? '/' : ''}`);
    return `tree ${rev}:${rel}\n\n${names.join('\n')}\n`;
  }
  const bytes = await readBlob(repo.gitdir, entry.oid);
  if (isBinary(bytes)) {
    return `[binary file '${rel}' at ${oid.slice(0, 7)}: ${bytes.length} bytes, not shown as text. To bring it back: git restore --source=${oid.slice(0, 7)} -- ${rel}]\n`;
  }
  return bytes.toString('utf8');
}
