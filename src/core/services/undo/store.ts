/**
 * The capture store of one user: server state beside `Storage/locks/` (outside every zone's
 * `data/`, so no command, path parameter or link reaches it), on the same storage as the zones so
 * every instance on a shared filesystem sees it. It holds the turns' records (the commits each
 * turn made in each repository, what it could not keep: one log, below) and the shadow repositories
 * of the unversioned zones (shadow.ts). Written only under the user's call lock (every modifying
 * call holds it), so records need no lock of their own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { listSliced } from '../../base/fs/list.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { undoDir, whereIs } from './where.js';
import type { TurnCall, TurnCommit } from './turn.js';
import { readText } from '../../base/fs/read.js';
import { appendLines, readNewLines, rewriteLines, type LogCursor } from '../../base/fs/line-log.js';
import { lstatIfAny } from '../../base/fs/stat.js';
import { readHead } from '../vcs/refs.js';

export interface TurnRecord {
  v: 1;
  turn: string;
  conv: string;
  /** Epoch ms of the first and the last call of the turn. */
  started: number;
  updated: number;
  calls: { fn: string; at: number }[];
  commits: TurnCommit[];
  lost: { tree: string; path: string; why: string }[];
}

export { undoDir } from './where.js';

/**
 * The records: one log of JSON lines per user (line-log.ts), one line per call of a turn ({add}), a
 * turn's record rewritten whole ({set}: the collection, a compaction) or dropped ({drop}). A call
 * appends one line: no file is made or renamed for it, and nothing else is read but what other
 * calls (other instances) appended since. Records of turns are small and few (undo_max_turns): a
 * log with many more lines than live turns is compacted (one {set} per turn).
 */
function logPath(home: string): string {
  return path.join(undoDir(home), 'turns.log');
}

/** Where records were kept before the log: one JSON file per turn. Read until the first write migrates them. */
function legacyDir(home: string): string {
  return path.join(undoDir(home), 'turns');
}

/** One call of a turn, as appended. */
interface CallLine {
  turn: string;
  conv: string;
  fn: string;
  at: number;
  commits: TurnCommit[];
  lost: TurnRecord['lost'];
}

type Line = { add: CallLine } | { set: TurnRecord } | { drop: string };

/** What this process knows of a user's log: where it stopped reading, and the records folded from it. */
interface View {
  cursor?: LogCursor;
  records: Map<string, TurnRecord>;
  /** Lines read since the log's start (compaction: many more than records). */
  lines: number;
  /** Records of the earlier layout were there when the log was read from its start (moved in by the next write). */
  legacy: boolean;
}
/** The users seen last (up to 200 records each); another one's log is read again whole (a few dozen KB). */
const views = new Map<string, View>();
const MAX_VIEWS = 256;

/** The user's records as the log says now (what other instances appended included). */
function view(home: string): View {
  let v = views.get(home);
  const read = readNewLines(logPath(home), v?.cursor);
  if (v === undefined || read.fresh) {
    const legacy = legacyRecords(home);
    v = { records: legacy ?? new Map(), lines: 0, legacy: legacy !== undefined };
  }
  views.delete(home); // the most recently used last
  if (views.size >= MAX_VIEWS) views.delete(views.keys().next().value as string);
  views.set(home, v);
  v.cursor = read.cursor;
  for (const line of read.lines) {
    v.lines++;
    fold(v.records, line);
  }
  return v;
}

function fold(records: Map<string, TurnRecord>, text: string): void {
  try {
    apply(records, JSON.parse(text) as Line);
  } catch {
    // not a line this store wrote (damaged on disk): ignored, as an unreadable record file was
  }
}

function apply(records: Map<string, TurnRecord>, line: Line): void {
  if ('add' in line) {
    const { turn, conv, fn, at, commits, lost } = line.add;
    // Checked whole before anything changes: a damaged line must not leave a record half changed.
    if (typeof turn !== 'string' || typeof at !== 'number' || !Array.isArray(commits) || !Array.isArray(lost)) return;
    const rec = records.get(turn) ?? { v: 1, turn, conv, started: at, updated: at, calls: [], commits: [], lost: [] };
    rec.updated = Math.max(rec.updated, at); // only grows (instances' clocks differ a little): pruneTurns relies on it
    rec.calls.push({ fn, at });
    rec.commits.push(...commits.map(withUsual));
    rec.lost.push(...lost);
    records.set(turn, rec);
  } else if ('set' in line && line.set?.v === 1 && typeof line.set.updated === 'number' && Array.isArray(line.set.commits)) {
    records.set(line.set.turn, { ...line.set, commits: line.set.commits.map(withUsual) });
  } else if ('drop' in line) {
    records.delete(line.drop);
  }
}

/** The records of the earlier layout; undefined when there is none (the usual case: no exception for it). */
function legacyRecords(home: string): Map<string, TurnRecord> | undefined {
  const out = new Map<string, TurnRecord>();
  const dir = legacyDir(home);
  if (!fs.existsSync(dir)) return undefined;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (!name.endsWith('.json') || !TURN_ID.test(name.slice(0, -5))) continue;
    try {
      const rec = JSON.parse(readText(path.join(dir, name), { noFollow: true })) as TurnRecord;
      if (rec.v === 1 && rec.turn === name.slice(0, -5)) out.set(rec.turn, { ...rec, commits: rec.commits.map(withUsual) });
    } catch {
      // unreadable: not a turn (as before)
    }
  }
  return out;
}

/** A record as the log keeps it: trees by name, no disk paths (where.ts). */
function stored(rec: TurnRecord): TurnRecord {
  return { ...rec, commits: rec.commits.map(keptCommit) };
}

/**
 * A personal zone's label and kind, which its commits' lines leave out (a turn's line was ~200 bytes,
 * a fifth of them these); a line without them gets them back when read. (An instance of an earlier
 * version reads such a line too, without the label and kind: it never drops the turn.)
 */
const USUAL: Readonly<Record<string, { label: string; versioned: boolean }>> = {
  storage: { label: 'Storage', versioned: false },
  uploads: { label: 'Uploads', versioned: false },
  documents: { label: 'Documents', versioned: true },
};

function keptCommit({ tree, label, oid, versioned, fromEmpty }: TurnCommit): TurnCommit {
  // root and gitdir are resolved when read (resolved()); stored without them.
  const usual = USUAL[tree];
  return { tree, oid, ...(label !== usual?.label ? { label } : {}), ...(versioned !== usual?.versioned ? { versioned } : {}), ...(fromEmpty ? { fromEmpty } : {}) } as TurnCommit;
}

/** A commit as read from a line: what keptCommit left out put back. */
function withUsual(c: TurnCommit): TurnCommit {
  const usual = USUAL[c.tree];
  return { ...c, label: c.label ?? usual?.label ?? c.tree, versioned: c.versioned ?? usual?.versioned ?? true };
}

/** Appends lines to the user's log (under the call lock); records of the older layout are moved in first. */
function write(home: string, lines: Line[]): void {
  const file = logPath(home);
  const before = view(home);
  if (before.legacy) {
    // One rewrite with every record, then the old files go (a kill in between: done again next time).
    fs.mkdirSync(undoDir(home), { recursive: true });
    rewriteWhole(file, before);
    fs.rmSync(legacyDir(home), { recursive: true, force: true });
  }
  const text = lines.map((l) => JSON.stringify(l));
  try {
    appendLines(file, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(undoDir(home), { recursive: true }); // the user's first record
    appendLines(file, text);
  }
  const v = view(home);
  if (v.lines > COMPACT_MIN_LINES && v.lines > COMPACT_RATIO * v.records.size) rewriteWhole(file, v);
}

/** The log as one {set} line per kept turn. */
function rewriteWhole(file: string, v: View): void {
  rewriteLines(file, [...v.records.values()].map((rec) => JSON.stringify({ set: stored(rec) })));
}
const COMPACT_MIN_LINES = 256;
const COMPACT_RATIO = 4;

/** What a turn id may be: Open WebUI's message ids and ours. */
const TURN_ID = /^[A-Za-z0-9_-]{1,140}$/;

export function readTurn(home: string, turn: string): TurnRecord | undefined {
  if (!TURN_ID.test(turn)) return undefined;
  const rec = view(home).records.get(turn);
  return rec === undefined ? undefined : resolved(home, rec);
}

/**
 * A copy the caller may change. Records name trees, not disk paths (where.ts): resolved here,
 * against this instance's storage.
 */
function resolved(home: string, rec: TurnRecord): TurnRecord {
  return { ...rec, calls: [...rec.calls], lost: [...rec.lost], commits: rec.commits.map((c) => ({ ...c, ...whereIs(home, c.tree) })) };
}

/** Adds one call's commits (and losses) to its turn's record. */
export function appendTurn(home: string, call: TurnCall, at: number): void {
  write(home, [{ add: { turn: call.turn, conv: call.conv, fn: call.fn, at, commits: call.commits.map(keptCommit), lost: call.lost } }]);
}

/** A turn no longer kept (retention): its record goes; the collection frees what only it needed. */
export function dropTurn(home: string, turn: string): void {
  write(home, [{ drop: turn }]);
}

/** Writes a turn's record whole (also when the collection turns its shadow changes into "not undoable"). */
export function writeTurn(home: string, rec: TurnRecord): void {
  write(home, [{ set: stored(rec) }]);
}

/** True when a turn's last call is older than the retention by age (valve undo_max_age_days; 0: no limit). */
export function agedOut(rec: Pick<TurnRecord, 'updated'>, maxAgeDays: number, now = Date.now()): boolean {
  return maxAgeDays > 0 && now - rec.updated > maxAgeDays * 86_400_000;
}

/** Every turn record of the user, newest first. */
export function listTurns(home: string): TurnRecord[] {
  return [...view(home).records.values()].map((rec) => resolved(home, rec)).sort((a, b) => b.updated - a.updated);
}

/**
 * Retention (valves undo_max_turns, undo_max_age_days): the oldest records beyond the count or the
 * age are dropped; their turns can no longer be undone (the list no longer shows them). Under the
 * call lock: the log read just now is every record there is.
 */
export function pruneTurns(home: string, maxTurns: number, maxAgeDays: number, now = Date.now()): number {
  const records = view(home).records;
  if (records.size <= maxTurns && maxAgeDays === 0) return 0;
  const newestFirst = [...records.values()].sort((a, b) => b.updated - a.updated);
  const doomed = newestFirst.filter((rec, i) => i >= maxTurns || agedOut(rec, maxAgeDays, now));
  if (doomed.length > 0) write(home, doomed.map((rec) => ({ drop: rec.turn })));
  return doomed.length;
}

/** Bytes the capture store of a user home takes on disk (admin page); walked in slices. */
export async function storeBytes(home: string): Promise<number> {
  const slice = new TimeSlice();
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await listSliced(dir, slice);
    } catch {
      return;
    }
    for (const e of entries) {
      await slice.tick();
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) await walk(abs);
      else total += lstatIfAny(abs)?.size ?? 0;
    }
  };
  await walk(undoDir(home));
  return total;
}

/**
 * The last measure of each store (admin page) and the store's state then: the shadows' commits,
 * the collection's note (written after its sweep) and the records' log. A store unchanged since
 * is not walked again (a 10,000-file Storage's store takes ~80 ms to walk): the page stays quick
 * with many idle users.
 */
const measures = new Map<string, { state: string; bytes: number }>();
const MAX_MEASURES = 100_000;

function storeState(home: string): string {
  // The shadows' commits and the collection's note change with every capture and every sweep, also
  // where the kernel stamps times coarsely; the log grows with every record written (or is replaced).
  const heads = ['storage', 'uploads'].map((t) => {
    try {
      return readHead(whereIs(home, t).gitdir).oid ?? '-';
    } catch {
      return '-';
    }
  });
  let note = '-';
  try {
    note = readText(path.join(undoDir(home), 'collected.json'));
  } catch {
    // never collected
  }
  const log = lstatIfAny(logPath(home));
  return [...heads, note, log === undefined ? '-' : `${log.ino}:${log.size}:${log.mtimeMs}`, fs.existsSync(legacyDir(home))].join('|');
}

/** The capture store's size of every user of a storage base (admin page: user id -> bytes). */
export async function storeSizes(storageBase: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const users = path.join(path.resolve(storageBase), 'users');
  let ids: string[];
  try {
    ids = fs.readdirSync(users);
  } catch {
    return out;
  }
  for (const id of ids) {
    const home = path.join(users, id);
    const state = storeState(home);
    const last = measures.get(home);
    const bytes = last !== undefined && last.state === state ? last.bytes : await storeBytes(home);
    if (measures.size >= MAX_MEASURES) measures.clear();
    measures.set(home, { state, bytes });
    if (bytes > 0) out.set(id, bytes);
  }
  return out;
}
