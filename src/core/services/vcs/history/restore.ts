/**
 * git restore / git checkout REV -- path: bring back files (or whole folders) as they were at a
 * commit, then commit the result as a NEW commit by the caller (history is never rewritten).
 *
 * As in git, `restore` makes the path exactly what it was at REV (tracked files that did not exist
 * then are removed; untracked files are left alone), `checkout` only writes the files of REV (it
 * never removes). Writes go through the path resolver (nothing is written through a link or
 * outside the zone), and obey quota, file size and other conversations' locks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../../base/errors.js';
import { atomicWriteDeferred, syncDirOffLoop } from '../../../base/fs/atomic.js';
import { removeTree } from '../../../base/fs/remove-tree.js';
import type { Identity } from '../../../base/identity.js';
import { ensureNotLockedByOther, type LockOwner } from '../../../base/locks/locks.js';
import { linkProblem } from '../../../base/paths/links.js';
import { resolvePath, type ResolvedPath } from '../../../base/paths/resolve.js';
import { TimeSlice } from '../../../base/fs/slice.js';
import { ensureFileSize, ensureQuota } from '../../quota/quota.js';
import type { Zone } from '../../../base/zones/zones.js';
import { commitPaths } from '../commit.js';
import { withRepoLock } from '../lock.js';
import { withPendingPaths } from '../pending.js';
import { EXEC_MODE, fromKey, LINK_MODE, toKey } from '../../../formats/git/names.js';
import { isTrackablePath } from '../names.js';
import { readBlob, readCommit } from '../objects.js';
import { readHead } from '../refs.js';
import type { Repo } from '../repo.js';
import { badOption, ok, pathArg, splitDashDash, type GitOutput } from './args.js';
import { subject } from './render.js';
import { isRevision, resolveRevision } from './revisions.js';
import { filterKey, flatten } from './trees.js';
import { assertFence } from '../../../base/locks/lease.js';

export interface RestoreLimits {
  maxFileSizeMb?: number;
  /**
   * The ownership guard of group spaces, called with the real zone-relative path of everything the
   * restore would write or remove, before anything changes; it throws to refuse.
   */
  guard?: (rel: string, action: 'restore' | 'remove') => Promise<void>;
  /** Called with the files written, before the commit (ownership records of new files). */
  afterWrite?: (written: string[]) => Promise<void>;
  lockOwner?: LockOwner;
  lockMaxAgeHours?: number;
}

const RESTORE_OPTIONS = '--source=REV (or -s REV), --worktree, --staged, -- path';
/** Restored files being written (and fsynced on the thread pool) at once. */
const WRITES_IN_FLIGHT = 8;

export async function gitRestore(repo: Repo, zone: Zone, sub: 'restore' | 'checkout', args: string[], author: Identity, limits: RestoreLimits): Promise<GitOutput> {
  const { before, paths } = splitDashDash(args);
  let source: string | undefined;
  const rest: string[] = [];
  let stagedOnly = false;
  for (let i = 0; i < before.length; i++) {
    const a = before[i]!;
    if (sub === 'restore' && (a === '-s' || a === '--source')) source = before[++i];
    else if (sub === 'restore' && a.startsWith('--source=')) source = a.slice('--source='.length);
    else if (sub === 'restore' && /^-s./.test(a)) source = a.slice(2);
    else if (sub === 'restore' && (a === '--staged' || a === '-S')) stagedOnly = true;
    else if (sub === 'restore' && (a === '--worktree' || a === '-W')) stagedOnly = false;
    else if (a.startsWith('-')) throw badOption(sub, a, sub === 'restore' ? RESTORE_OPTIONS : 'REV -- path');
    else rest.push(a);
  }
  if (source === '') throw badOption(sub, '--source', `--source needs a revision, e.g. --source=HEAD~1`);
  const targets = [...(paths ?? [])];
  if (sub === 'checkout' && paths === undefined) {
    // "checkout REV path..." without "--": the first word is the revision if it is one.
    if (rest.length > 0 && (await isRevision(repo, rest[0]!))) source = rest.shift();
    if (rest.length === 0) throw switchRefused(source ?? before[0]);
    targets.push(...rest);
  } else if (sub === 'checkout') {
    if (rest.length > 1) throw badOption('checkout', rest[1]!, 'one revision before "--"');
    source = rest[0];
  } else {
    targets.push(...rest);
  }
  if (targets.length === 0) {
    throw shedError('INVALID_PARAMETER', `git ${sub} needs the path to bring back.`, {
      details: { parameter: 'args' },
      hint: `Example: shed_exec(zone="documents", cmd="git", args=["${sub}", ${sub === 'restore' ? '"--source=HEAD~1", "--"' : '"HEAD~1", "--"'}, "notes.txt"])`,
    });
  }
  const head = readHead(repo.gitdir);
  if (head.oid === undefined) return { stdout: '', stderr: `error: ${repo.label} has no commits yet: there is nothing to restore from.\n`, returncode: 1 };
  if (stagedOnly) return ok('', 'Nothing to do: Fileshed commits every change, so nothing is ever staged.\n');

  const rev = source ?? 'HEAD';
  const oid = await resolveRevision(repo, rev);
  const commit = await readCommit(repo.gitdir, oid);
  const rels = targets.map((t) => pathArg(zone, t));
  if (rels.includes('')) {
    throw shedError('INVALID_PARAMETER', `git ${sub} of the whole of ${zone.label} is refused; name the files or folders to bring back.`, {
      details: { parameter: 'args' },
      hint: 'Example: shed_exec(zone="documents", cmd="git", args=["restore", "--source=HEAD~1", "--", "notes"])',
    });
  }

  return withRepoLock(repo, async () => {
    const headTree = (await readCommit(repo.gitdir, readHead(repo.gitdir).oid!)).tree;
    const writes = new Map<string, { mode: string; oid: string }>();
    const removes: string[] = [];
    for (const rel of rels) {
      const wanted = await flatten(repo, commit.tree, [filterKey(rel)]);
      const current = sub === 'restore' ? await flatten(repo, headTree, [filterKey(rel)]) : new Map();
      if (wanted.size === 0 && current.size === 0) {
        return { stdout: '', stderr: `error: pathspec '${rel}' did not match any file(s) known to git at ${rev} (${oid.slice(0, 7)})\n`, returncode: 1 };
      }
      for (const [k, v] of wanted) if (isTrackablePath(fromKey(k))) writes.set(k, v);
      for (const k of current.keys()) if (!wanted.has(k)) removes.push(k);
    }
    const short = oid.slice(0, 7);
    const message = `Restore ${rels.join(', ')} from ${short} (${subject(commit)})`;
    const made = await withPendingPaths(repo, rels, async () => {
      const written = await applyToWorktree(repo, zone, writes, removes, limits);
      await limits.afterWrite?.(written);
      return commitPaths(repo, rels, author, message);
    });
    const what = `${rels.join(', ')} as of ${short} (${subject(commit)})`;
    if (made === undefined) return ok(`Restored ${what}; it matches the last commit, so no new commit was needed.\n`);
    return { ...ok(`Restored ${what}: ${writes.size} file(s) written${removes.length ? `, ${removes.length} removed` : ''}; committed as ${made.slice(0, 7)}.\n`), commit: made.slice(0, 7) };
  });
}

function switchRefused(word: string | undefined): Error {
  return shedError('COMMAND_FORBIDDEN', `git checkout ${word ?? ''} would switch branches or commits, which Documents does not do: its history is one line that only grows.`.replace('  ', ' '), {
    details: { parameter: 'args' },
    hint: 'To bring back an old version of a file or folder: shed_exec(zone="documents", cmd="git", args=["checkout", "HEAD~1", "--", "notes.txt"]); to look at it without changing anything: args=["show", "HEAD~1:notes.txt"].',
  });
}

/** What a restore of 30,000 files does per file, in slices: other users' calls go on meanwhile. */
async function applyToWorktree(repo: Repo, zone: Zone, writes: Map<string, { mode: string; oid: string }>, removes: string[], limits: RestoreLimits): Promise<string[]> {
  const slice = new TimeSlice();
  const blobs = new Map<string, Buffer>();
  let growth = 0;
  for (const [key, state] of writes) {
    await slice.tick();
    const bytes = await readBlob(repo.gitdir, state.oid);
    if (limits.maxFileSizeMb !== undefined) ensureFileSize(bytes.length, limits.maxFileSizeMb, `Restoring ${fromKey(key)}`);
    blobs.set(key, bytes);
    growth += bytes.length - sizeOf(path.join(zone.root, fromKey(key)));
  }
  for (const key of removes) {
    await slice.tick();
    growth -= sizeOf(path.join(zone.root, fromKey(key)));
  }
  await refuseBadLinks(zone, writes, blobs, slice);
  await ensureQuota(zone.scope, growth);

  // Every check comes before the first change: ownership (group spaces), then other conversations' locks.
  // What would be removed on the way (a file standing where a folder comes back) is judged too.
  const blockers = new Set<string>();
  for (const key of writes.keys()) {
    await slice.tick();
    const blocker = wayBlocker(zone.root, fromKey(key));
    if (blocker !== undefined) blockers.add(blocker);
  }
  const underBlocker = (rel: string) => blockers.size > 0 && [...blockers].some((b) => rel.startsWith(`${b}/`));
  const resolved: ResolvedPath[] = [];
  for (const key of [...writes.keys(), ...removes]) {
    await slice.tick();
    const rel = fromKey(key);
    if (!underBlocker(rel)) resolved.push(resolvePath(zone, rel, { param: 'args', intent: 'delete' }));
  }
  if (limits.guard !== undefined) {
    for (const rel of blockers) await limits.guard(rel, 'remove');
    for (const p of resolved) {
      await slice.tick();
      await limits.guard(path.relative(zone.root, p.abs).split(path.sep).join('/'), writes.has(toKey(p.rel)) ? 'restore' : 'remove');
    }
  }
  if (limits.lockOwner !== undefined) {
    for (const rel of blockers) ensureNotLockedByOther(zone, rel, limits.lockOwner, limits.lockMaxAgeHours ?? 24);
    for (const p of resolved) {
      await slice.tick();
      ensureNotLockedByOther(zone, p.rel, limits.lockOwner, limits.lockMaxAgeHours ?? 24);
    }
  }

  for (const rel of blockers) fs.rmSync(path.join(zone.root, rel), { force: true });
  // Removals first (as git does): a removed file may stand where a restored folder goes, and the reverse.
  const targets: { key: string; p: ResolvedPath }[] = [];
  for (const key of [...removes, ...writes.keys()]) {
    await slice.tick();
    targets.push({ key, p: resolvePath(zone, fromKey(key), { param: 'args', intent: 'delete' }) });
  }
  const written: string[] = [];
  // Files are written a few at a time, their fsyncs on the thread pool; each folder is synced once at the end.
  const inflight = new Set<Promise<void>>();
  const folders = new Set<string>();
  let failure: { err: unknown } | undefined;
  const settle = async (limit: number) => {
    while (inflight.size > limit) await Promise.race(inflight);
  };
  for (const { key, p } of targets) {
    await slice.tick();
    if (failure !== undefined) break;
    const state = writes.get(key);
    if (state === undefined) {
      fs.rmSync(p.abs, { force: true });
      continue;
    }
    // A folder standing where a file comes back (or the reverse) is replaced, as git does.
    if (p.stat?.isDirectory()) await removeTree(p.abs);
    const bytes = blobs.get(key)!;
    if (state.mode === LINK_MODE) {
      const tmp = `${p.abs}.${process.pid}.restore-link`;
      fs.rmSync(tmp, { force: true });
      fs.mkdirSync(path.dirname(p.abs), { recursive: true });
      fs.symlinkSync(bytes.toString('utf8'), tmp);
      assertFence();
      fs.renameSync(tmp, p.abs);
    } else {
      const write = atomicWriteDeferred(p.abs, bytes).then(() => fs.chmodSync(p.abs, state.mode === EXEC_MODE ? 0o755 : 0o644));
      const tracked: Promise<void> = write
        .catch((err: unknown) => {
          failure ??= { err };
        })
        .finally(() => inflight.delete(tracked));
      inflight.add(tracked);
      folders.add(path.dirname(p.abs));
      await settle(WRITES_IN_FLIGHT);
    }
    written.push(path.relative(zone.root, p.abs).split(path.sep).join('/'));
  }
  await Promise.all(inflight);
  if (failure !== undefined) throw failure.err;
  for (const dir of folders) {
    await slice.tick();
    await syncDirOffLoop(dir);
  }
  return written;
}

/** A link blob is restored only if the one link rule allows it where it lands (not outside, not at itself or an ancestor). */
async function refuseBadLinks(zone: Zone, writes: Map<string, { mode: string; oid: string }>, blobs: Map<string, Buffer>, slice: TimeSlice): Promise<void> {
  for (const [key, state] of writes) {
    await slice.tick();
    if (state.mode !== LINK_MODE) continue;
    const rel = fromKey(key);
    const target = blobs.get(key)!.toString('utf8');
    const why = linkProblem(zone.root, path.join(zone.root, rel), target);
    if (why === undefined) continue;
    throw shedError('PATH_ESCAPE', `The history holds '${rel}' as a symbolic link to '${target}', which cannot be restored: ${why}. Nothing was restored.`, {
      details: { parameter: 'args', path: rel },
      hint: 'Restore the other files by naming them, e.g. args=["checkout", "HEAD~1", "--", "notes.txt"].',
    });
  }
}

/** A file or link standing where a restored folder must be (git replaces it; it is removed after the checks). */
function wayBlocker(root: string, rel: string): string | undefined {
  const parts = rel.split('/');
  let current = root;
  for (let i = 0; i < parts.length - 1; i++) {
    current = path.join(current, parts[i]!);
    const st = fs.lstatSync(current, { throwIfNoEntry: false });
    if (st === undefined) return undefined;
    if (st.isDirectory()) continue;
    return parts.slice(0, i + 1).join('/');
  }
  return undefined;
}

function sizeOf(abs: string): number {
  try {
    const st = fs.lstatSync(abs);
    return st.isFile() ? st.size : 0;
  } catch {
    return 0;
  }
}
