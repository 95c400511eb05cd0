/**
 * The capture store of one user: server state beside `Storage/locks/` (outside every zone's
 * `data/`, so no command, path parameter or link reaches it), on the same storage as the zones so
 * every instance on a shared filesystem sees it. It holds one small record per turn (the commits
 * the turn made in each repository, what it could not keep) and the shadow repositories of the
 * unversioned zones (shadow.ts). Written only under the user's call lock (every modifying call
 * holds it), so records need no lock of their own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { listSliced } from '../../base/fs/list.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { undoDir, whereIs } from './where.js';
import type { TurnCall, TurnCommit } from './turn.js';
import { readText, writeBytes } from '../../base/fs/read.js';
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

function turnsDir(home: string): string {
  return path.join(undoDir(home), 'turns');
}

function recordPath(home: string, turn: string): string {
  return recordIn(turnsDir(home), turn);
}

/** A record's file in the records' folder: a concatenation (a user past the retention count names 200 per call). */
function recordIn(dir: string, turn: string): string {
  return `${dir}/${turn}.json`;
}

/**
 * Records as stored, by file, with the identity of the file they were read from. Every write is a new
 * file (temp + rename: a new inode), so one lstat tells whether a record changed since (a later call,
 * another instance): a user past the retention count has every record looked at on every modifying
 * call (the oldest goes), and parsing 200 of them each time cost more than the rest of the capture.
 */
const parsed = new Map<string, { sig: string; stored: TurnRecord }>();
const MAX_PARSED = 50_000;

function signature(st: fs.Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

function remember(file: string, st: fs.Stats | undefined, stored: TurnRecord): void {
  if (st === undefined) return;
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(file, { sig: signature(st), stored });
}

function readStored(file: string): TurnRecord | undefined {
  const st = lstatIfAny(file);
  if (st === undefined || !st.isFile()) return undefined;
  const hit = parsed.get(file);
  if (hit !== undefined && hit.sig === signature(st)) return hit.stored;
  // Replaced between the lstat and the read: a newer text under an older signature, read again next time.
  const rec = JSON.parse(readText(file)) as TurnRecord;
  if (rec.v !== 1) return undefined;
  remember(file, st, rec);
  return rec;
}

/** readStored, or undefined when the record cannot be read (unreadable: not a turn, as listTurns skips it). */
function readStoredIfAny(file: string): TurnRecord | undefined {
  try {
    return readStored(file);
  } catch {
    return undefined;
  }
}

/** What a turn id may be (it names a file): Open WebUI's message ids and ours. */
const TURN_ID = /^[A-Za-z0-9_-]{1,140}$/;

export function readTurn(home: string, turn: string): TurnRecord | undefined {
  if (!TURN_ID.test(turn)) return undefined;
  try {
    const stored = readStored(recordPath(home, turn));
    if (stored === undefined) return undefined;
    // A copy the caller may change. Records name trees, not disk paths (where.ts): resolved here,
    // against this instance's storage.
    return { ...stored, calls: [...stored.calls], lost: [...stored.lost], commits: stored.commits.map((c) => ({ ...c, ...whereIs(home, c.tree) })) };
  } catch {
    return undefined;
  }
}

/** Adds one call's commits (and losses) to its turn's record. */
export function appendTurn(home: string, call: TurnCall, at: number): void {
  const rec: TurnRecord = readTurn(home, call.turn) ?? { v: 1, turn: call.turn, conv: call.conv, started: at, updated: at, calls: [], commits: [], lost: [] };
  rec.updated = Math.max(rec.updated, at); // only grows (instances' clocks differ a little): pruneTurns relies on it
  rec.calls.push({ fn: call.fn, at });
  rec.commits.push(...call.commits);
  rec.lost.push(...call.lost);
  writeTurn(home, rec);
}

/** A turn no longer kept (retention): its record goes; the collection frees what only it needed. */
export function dropTurn(home: string, turn: string): void {
  fs.rmSync(recordPath(home, turn), { force: true });
  parsed.delete(recordPath(home, turn));
}

/** Writes a turn's record whole (also when the collection turns its shadow changes into "not undoable"). */
export function writeTurn(home: string, rec: TurnRecord): void {
  fs.mkdirSync(turnsDir(home), { recursive: true });
  const stored = { ...rec, commits: rec.commits.map(({ tree, label, oid, versioned, fromEmpty }) => ({ tree, label, oid, versioned, ...(fromEmpty ? { fromEmpty } : {}) })) };
  // Temp + rename without fsync, like git's refs and loose objects (vcs/refs.ts): a kill leaves the
  // old record or the new one; two fsyncs per call cost more than the rest of the capture.
  const file = recordPath(home, rec.turn);
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const text = JSON.stringify(stored);
  writeBytes(tmp, text, { exclusive: true });
  fs.renameSync(tmp, file);
  remember(file, lstatIfAny(file), JSON.parse(text) as TurnRecord); // its own copy: the caller keeps `rec`
}

/** The turn ids that have a record, as the folder lists them. */
function recordedTurns(home: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(turnsDir(home));
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith('.json') && TURN_ID.test(n.slice(0, -5))).map((n) => n.slice(0, -5));
}

/** True when a turn's last call is older than the retention by age (valve undo_max_age_days; 0: no limit). */
export function agedOut(rec: Pick<TurnRecord, 'updated'>, maxAgeDays: number, now = Date.now()): boolean {
  return maxAgeDays > 0 && now - rec.updated > maxAgeDays * 86_400_000;
}

/** Every turn record of the user, newest first. */
export function listTurns(home: string): TurnRecord[] {
  const out: TurnRecord[] = [];
  for (const turn of recordedTurns(home)) {
    const rec = readTurn(home, turn);
    if (rec !== undefined) out.push(rec);
  }
  return out.sort((a, b) => b.updated - a.updated);
}

/**
 * Retention (valves undo_max_turns, undo_max_age_days): the oldest records beyond the count or the
 * age are dropped; their turns can no longer be undone (the list no longer shows them).
 */
export function pruneTurns(home: string, maxTurns: number, maxAgeDays: number, now = Date.now()): number {
  // Cheap on every call: one listing, the records ordered by what this process knows of them (read
  // once each), and only those to drop looked at again; if one of them changed since (another
  // instance), all are.
  const turns = recordedTurns(home);
  if (turns.length <= maxTurns && maxAgeDays === 0) return 0;
  return dropOldest(home, turns, maxTurns, maxAgeDays, now, false) ?? dropOldest(home, turns, maxTurns, maxAgeDays, now, true)!;
}

/**
 * Drops the records past `maxTurns` (newest first) or aged out. Not `fresh`: each record
 * as last read by this process; a record's `updated` only grows (appendTurn), so one to drop, found
 * unchanged, is as old as it seemed and every record ranked above it at least as new. Undefined when
 * one to drop changed since: nothing was dropped, the caller asks again with every record read fresh.
 */
function dropOldest(home: string, turns: readonly string[], maxTurns: number, maxAgeDays: number, now: number, fresh: boolean): number | undefined {
  const times: { turn: string; updated: number }[] = [];
  const dir = turnsDir(home);
  for (const turn of turns) {
    const file = recordIn(dir, turn);
    const rec = (fresh ? undefined : parsed.get(file)?.stored) ?? readStoredIfAny(file);
    if (rec !== undefined) times.push({ turn, updated: rec.updated });
  }
  times.sort((a, b) => b.updated - a.updated);
  const doomed = times.filter((t, i) => i >= maxTurns || agedOut(t, maxAgeDays, now));
  if (!fresh) {
    for (const t of doomed) {
      const current = readStoredIfAny(recordIn(dir, t.turn));
      if (current !== undefined && current.updated !== t.updated) return undefined;
    }
  }
  for (const t of doomed) dropTurn(home, t.turn);
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
 * the collection's note (written after its sweep) and the records' folder. A store unchanged since
 * is not walked again (a 10,000-file Storage's store takes ~80 ms to walk): the page stays quick
 * with many idle users.
 */
const measures = new Map<string, { state: string; bytes: number }>();
const MAX_MEASURES = 100_000;

function storeState(home: string): string {
  // The shadows' commits and the collection's note change with every capture and every sweep, also
  // where the kernel stamps times coarsely; the records' folder's time stands for the records.
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
  return [...heads, note, lstatIfAny(turnsDir(home))?.mtimeMs ?? '-'].join('|');
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
