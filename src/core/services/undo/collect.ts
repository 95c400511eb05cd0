/**
 * Retention by bytes, and the collection of what no kept turn needs (SPEC 9.1: "retention (turns, age,
 * bytes) is a valve"). The shadow repositories only ever grew: a turn dropped by count or age left its
 * old versions on disk for ever (a peer's per-turn refs grew 102 GB of orphan objects this way).
 *
 * A collection marks, in each shadow repository, what must stay: the current state (HEAD: the next
 * call compares against it; never counted against the budget), then turn by turn from the newest,
 * each kept turn's commits and the state before each (its first parent). A blob kept as a reverse
 * delta keeps its base chain. The bytes a turn adds beyond what newer turns already keep are its
 * cost; the first turn that does not fit in `undo_max_store_mb` is dropped with every older one. When
 * even the newest turn does not fit, it stays listed, its shadow changes recorded as not undoable
 * (never silently). Then every delta not marked is deleted, and every object not marked among those
 * that may have become garbage since the last collection (LastKept).
 *
 * It runs inside a modifying call, under the user's call lock (every writer of the store holds it),
 * never while an undo's journal is pending, in time slices; and not on every call: when a tenth of
 * undo_max_turns were dropped (by count or age) since the last collection, or when the bytes added
 * since its measure may have passed the budget. A read that fails deletes nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { listSliced } from '../../base/fs/list.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { lstatIfAny } from '../../base/fs/stat.js';
import { readBytes, readText, writeBytes } from '../../base/fs/read.js';
import { isTreeMode } from '../../formats/git/objects.js';
import { loosePath, readCommit, readTree } from '../vcs/objects.js';
import { compactLog, loggedSizes } from '../vcs/object-log.js';
import { readHead } from '../vcs/refs.js';
import { deltaBase, deltaPath } from './deltas.js';
import { shadowsOf } from './shadow.js';
import { dropTurn, listTurns, writeTurn, type TurnRecord } from './store.js';
import { undoDir } from './where.js';
import { diffTrees } from '../vcs/history/trees.js';

const MIB = 1024 * 1024;

export interface Budget {
  maxTurns: number;
  /** Bytes of older versions a user's store may keep (0: no limit). */
  maxBytes: number;
}

/** What a collection did. */
export interface Collected {
  /** Bytes of older versions kept (beyond the current state). */
  keptBytes: number;
  /** The newest turn was over the budget alone: its shadow changes, now not undoable. */
  lost: { tree: string; path: string; why: string }[];
}

/** Per user home, in this process: what was measured last, and what was added and dropped since. */
interface Since {
  measured: number;
  added: number;
  dropped: number;
}
const sinceByHome = new Map<string, Since>();

function statePath(home: string): string {
  return path.join(undoDir(home), 'collected.json');
}

function sinceFor(home: string): Since {
  let s = sinceByHome.get(home);
  if (s === undefined) {
    let measured = 0;
    try {
      measured = Number((JSON.parse(readText(statePath(home))) as { keptBytes?: number }).keptBytes) || 0;
    } catch {
      // never collected: counted from 0 until the first collection measures it
    }
    s = { measured, added: 0, dropped: 0 };
    if (sinceByHome.size >= 4096) sinceByHome.delete(sinceByHome.keys().next().value as string);
    sinceByHome.set(home, s);
  }
  return s;
}

/**
 * After a call recorded its turn: `added` bytes of new objects, `dropped` turns pruned by count or
 * age. Collects when due; answers what a collection did, or undefined.
 */
export async function keepWithinBudget(home: string, budget: Budget, added: number, dropped: number): Promise<Collected | undefined> {
  const s = sinceFor(home);
  s.added += added;
  s.dropped += dropped;
  const overBudget = budget.maxBytes > 0 && s.measured + s.added > budget.maxBytes;
  const manyDropped = s.dropped >= Math.max(1, Math.floor(budget.maxTurns / 10));
  if (!overBudget && !manyDropped) return undefined;
  if (fs.existsSync(path.join(undoDir(home), 'journal.json'))) return undefined;
  let done: Collected;
  try {
    done = await collect(home, budget.maxBytes);
  } catch {
    // An object could not be read (a damaged store, a stale handle on a shared filesystem): nothing
    // was deleted, the call's own answer stands, and the next collection waits for more to collect.
    s.added = 0;
    s.dropped = 0;
    return undefined;
  }
  sinceByHome.set(home, { measured: done.keptBytes, added: 0, dropped: 0 });
  writeBytes(statePath(home), JSON.stringify({ keptBytes: done.keptBytes, at: Date.now() }));
  return done;
}

interface Marks {
  gitdir: string;
  head: string;
  /** Object ids kept: commits, trees, blobs. */
  kept: Set<string>;
  /** The trees and commits of the shadow's log, with the bytes each takes (read once per collection). */
  logged: Map<string, number>;
}

/**
 * What the last collection of a shadow repository kept, in this process. The next one deletes only
 * what may have become garbage since: what that one kept, and what the commits made since wrote.
 * Listing every loose object instead (a 10,000-file Storage has as many) was half of a collection's
 * time. Every tenth collection, and the first of a process, still lists them all: objects of a call
 * killed before its commit are in no commit, and only a listing finds them.
 */
interface LastKept {
  head: string;
  kept: Set<string>;
  collections: number;
}
const lastKept = new Map<string, LastKept>();
/**
 * Object ids remembered across repositories (a kept set holds one per object of the current state:
 * about 10,000 for a 10,000-file Storage, ~100 bytes each); the least recently collected go first.
 */
const LAST_KEPT_IDS = 500_000;
let lastKeptIds = 0;

function rememberKept(gitdir: string, kept: LastKept): void {
  const old = lastKept.get(gitdir);
  if (old !== undefined) {
    lastKept.delete(gitdir);
    lastKeptIds -= old.kept.size;
  }
  if (kept.kept.size > LAST_KEPT_IDS) return; // such a store is listed whole at each collection
  for (const [dir, k] of lastKept) {
    if (lastKeptIds + kept.kept.size <= LAST_KEPT_IDS) break;
    lastKept.delete(dir);
    lastKeptIds -= k.kept.size;
  }
  lastKept.set(gitdir, kept);
  lastKeptIds += kept.kept.size;
}

const FULL_SWEEP_EVERY = 10;
/** Commits since the last collection followed at most; more (or a rebuilt store), everything is listed. */
const MAX_CHAIN = 10_000;

/** Marks what the kept turns need, drops the turns past the budget, and deletes the rest. */
async function collect(home: string, maxBytes: number): Promise<Collected> {
  const slice = new TimeSlice();
  const repos: Marks[] = [];
  for (const s of shadowsOf(home)) {
    const head = readHead(s.repo.gitdir).oid;
    if (head === undefined) continue;
    const m: Marks = { gitdir: s.repo.gitdir, head, kept: new Set(), logged: loggedSizes(s.repo.gitdir) };
    // The current state: free (a copy of the zones), never dropped, so not measured either: no stat
    // of each of its objects (a zone of 10,000 files), its deltas' bases kept before the sweep.
    await markCommit(m, head, m.kept, slice, false);
    repos.push(m);
  }
  const out: Collected = { keptBytes: 0, lost: [] };
  if (repos.length === 0) return out;
  const turns = listTurns(home);
  let over = false;
  for (const [i, rec] of turns.entries()) {
    if (over) {
      dropTurn(home, rec.turn);
      continue;
    }
    const adds = new Map<Marks, Set<string>>();
    let cost = 0;
    for (const c of rec.commits) {
      const m = !c.versioned ? repos.find((r) => r.gitdir === c.gitdir) : undefined;
      if (m === undefined) continue;
      const add = adds.get(m) ?? new Set<string>();
      adds.set(m, add);
      cost += await markTurnCommit(m, c.oid, add, slice);
    }
    if (maxBytes === 0 || out.keptBytes + cost <= maxBytes) {
      for (const [m, add] of adds) for (const oid of add) m.kept.add(oid);
      out.keptBytes += cost;
      continue;
    }
    over = true;
    if (i === 0) out.lost.push(...(await keepAsLost(home, rec, maxBytes)));
    else dropTurn(home, rec.turn);
  }
  // Only now, every kept object known: a read that failed above deleted nothing.
  for (const m of repos) {
    await keepDeltaBases(m, slice);
    const last = lastKept.get(m.gitdir);
    const written = last !== undefined && last.collections % FULL_SWEEP_EVERY !== 0 ? await writtenSince(m.gitdir, last.head, m.head, slice) : undefined;
    if (last !== undefined && written !== undefined) await sweepSome(m, [last.kept, written], slice);
    else await sweep(m, slice);
    rememberKept(m.gitdir, { head: m.head, kept: m.kept, collections: (last?.collections ?? 0) + 1 });
  }
  return out;
}

/**
 * Every object the commits after `from` up to `to` (first parents) brought: each commit, and in its
 * tree whatever its parent's tree did not hold. Undefined when `from` is not met (the store was
 * rebuilt, or too many commits) or an object cannot be read: the caller lists everything instead.
 */
async function writtenSince(gitdir: string, from: string, to: string, slice: TimeSlice): Promise<Set<string> | undefined> {
  const out = new Set<string>();
  try {
    for (let cur = to, n = 0; cur !== from; n++) {
      const commit = await readCommit(gitdir, cur);
      const parent = commit.parents[0];
      if (parent === undefined || n >= MAX_CHAIN) return undefined;
      out.add(cur);
      await treeObjectsNotIn(gitdir, (await readCommit(gitdir, parent)).tree, commit.tree, out, slice);
      cur = parent;
    }
  } catch {
    return undefined;
  }
  return out;
}

/** Adds `tree` and every object below it that `before` (the same folder one commit earlier) does not hold. */
async function treeObjectsNotIn(gitdir: string, before: string | undefined, tree: string, out: Set<string>, slice: TimeSlice): Promise<void> {
  // A tree already added had its new objects added with it: what it shares with its own `before` is
  // an older commit's (or the last collection's), so it was a candidate already.
  if (tree === before || out.has(tree)) return;
  out.add(tree);
  await slice.tick();
  const old = new Map((before === undefined ? [] : await readTree(gitdir, before)).map((e) => [e.name, e]));
  for (const e of await readTree(gitdir, tree)) {
    const was = old.get(e.name);
    if (was?.oid === e.oid) continue;
    if (isTreeMode(e.mode)) await treeObjectsNotIn(gitdir, was !== undefined && isTreeMode(was.mode) ? was.oid : undefined, e.oid, out, slice);
    else if (e.mode !== '160000') out.add(e.oid);
  }
}

/** The newest turn alone is over the budget: listed still, its shadow changes as not undoable. */
async function keepAsLost(home: string, rec: TurnRecord, maxBytes: number): Promise<TurnRecord['lost']> {
  const why = `over the undo store budget (undo_max_store_mb=${Math.round(maxBytes / MIB)}): not kept`;
  const lost: TurnRecord['lost'] = [];
  for (const c of rec.commits) {
    if (c.versioned) continue;
    const commit = await readCommit(c.gitdir, c.oid);
    const parent = commit.parents[0] === undefined ? undefined : (await readCommit(c.gitdir, commit.parents[0])).tree;
    for (const ch of await diffTrees({ root: c.root, gitdir: c.gitdir, label: c.label }, parent, commit.tree)) {
      lost.push({ tree: c.tree, path: Buffer.from(ch.path, 'latin1').toString('utf8'), why });
    }
  }
  writeTurn(home, { ...rec, commits: rec.commits.filter((c) => c.versioned), lost: [...rec.lost, ...lost] });
  return lost;
}

/** A turn's commit: it, its tree, and the state before it (the first parent's commit and tree). */
async function markTurnCommit(m: Marks, oid: string, add: Set<string>, slice: TimeSlice): Promise<number> {
  let cost = await markCommit(m, oid, add, slice);
  const parent = (await readCommit(m.gitdir, oid)).parents[0];
  if (parent !== undefined) cost += await markCommit(m, parent, add, slice);
  return cost;
}

/**
 * Marks a commit and its tree (not its ancestry); answers the bytes newly marked. Not `counted`: the
 * objects are only marked (no stat each, 0 answered; keepDeltaBases keeps what their deltas need).
 */
async function markCommit(m: Marks, oid: string, add: Set<string>, slice: TimeSlice, counted = true): Promise<number> {
  if (m.kept.has(oid) || add.has(oid)) return 0;
  add.add(oid);
  const commit = await readCommit(m.gitdir, oid);
  return (counted ? objectBytes(m, oid) : 0) + (await markTree(m, commit.tree, add, slice, counted));
}

async function markTree(m: Marks, oid: string, add: Set<string>, slice: TimeSlice, counted: boolean): Promise<number> {
  if (m.kept.has(oid) || add.has(oid)) return 0;
  add.add(oid);
  await slice.tick();
  let bytes = counted ? objectBytes(m, oid) : 0;
  for (const e of await readTree(m.gitdir, oid)) {
    if (isTreeMode(e.mode)) bytes += await markTree(m, e.oid, add, slice, counted);
    else if (e.mode === '160000') continue;
    else if (counted) bytes += markBlob(m, e.oid, add);
    else add.add(e.oid);
  }
  return bytes;
}

/**
 * A kept blob stored as a reverse delta keeps its base chain. Turns' blobs had their chains marked
 * (markBlob); the current state's were only marked: each delta of the store (one per big file
 * version, few) whose blob is kept has its chain marked here.
 */
async function keepDeltaBases(m: Marks, slice: TimeSlice): Promise<void> {
  for await (const { oid, file } of storedObjects(`${m.gitdir}.deltas`, slice)) {
    if (!m.kept.has(oid)) continue;
    const base = deltaBase(readBytes(file));
    if (base !== undefined) markBlob(m, base, m.kept);
  }
}

/**
 * The finished objects of a fan-out folder (`xx/` + 38 hex digits: loose objects, deltas), in slices;
 * a temp file of a writer is not one (none runs under the call lock). Nothing when the folder is missing.
 */
async function* storedObjects(top: string, slice: TimeSlice): AsyncGenerator<{ oid: string; file: string }> {
  let fans: fs.Dirent[];
  try {
    fans = await listSliced(top, slice);
  } catch {
    return;
  }
  for (const fan of fans) {
    if (!fan.isDirectory() || !/^[0-9a-f]{2}$/.test(fan.name)) continue;
    const dir = path.join(top, fan.name);
    for (const e of await listSliced(dir, slice)) {
      await slice.tick();
      if (/^[0-9a-f]{38}$/.test(e.name)) yield { oid: fan.name + e.name, file: path.join(dir, e.name) };
    }
  }
}

/** A blob, whole or as a reverse delta; a delta keeps its base chain (newer versions). */
function markBlob(m: Marks, oid: string, add: Set<string>): number {
  let bytes = 0;
  for (let cur: string | undefined = oid, hops = 0; cur !== undefined && hops < 10_000; hops++) {
    if (m.kept.has(cur) || add.has(cur)) break;
    add.add(cur);
    const whole = lstatIfAny(loosePath(m.gitdir, cur));
    if (whole !== undefined) {
      bytes += whole.size;
      break;
    }
    const delta = deltaPath(m.gitdir, cur);
    const st = lstatIfAny(delta);
    if (st === undefined) break;
    bytes += st.size;
    cur = deltaBase(readBytes(delta));
  }
  return bytes;
}

function objectBytes(m: Marks, oid: string): number {
  return m.logged.get(oid) ?? lstatIfAny(loosePath(m.gitdir, oid))?.size ?? 0;
}

/** Deletes every loose object and delta of the repository not marked, and rewrites its trees and commits' log without them. */
async function sweep(m: Marks, slice: TimeSlice): Promise<void> {
  for (const top of [path.join(m.gitdir, 'objects'), `${m.gitdir}.deltas`]) await sweepListed(m, top, slice);
  compactLog(m.gitdir, (oid) => m.kept.has(oid));
}

async function sweepListed(m: Marks, top: string, slice: TimeSlice): Promise<void> {
  for await (const { oid, file } of storedObjects(top, slice)) if (!m.kept.has(oid)) fs.rmSync(file, { force: true });
}

/**
 * Deletes the loose objects among `candidates` not marked (those in the shadow's log are left to its
 * rewrite; a loose copy an earlier version also wrote goes at the next full sweep), every delta not
 * marked (few: listed), and rewrites the log without what is not marked.
 */
async function sweepSome(m: Marks, candidates: readonly Set<string>[], slice: TimeSlice): Promise<void> {
  for (const set of candidates) {
    for (const oid of set) {
      await slice.tick();
      if (!m.kept.has(oid) && !m.logged.has(oid)) fs.rmSync(loosePath(m.gitdir, oid), { force: true });
    }
  }
  await sweepListed(m, `${m.gitdir}.deltas`, slice);
  compactLog(m.gitdir, (oid) => m.kept.has(oid));
}
