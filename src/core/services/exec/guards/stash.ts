/**
 * What a call puts aside while its command runs, journalled so that a kill at any moment loses
 * nothing (the blocked entries of the zone, see hide-blocked.ts; the saved names of group files the
 * caller may not change, see guard-group.ts).
 *
 * One folder per call under the scope's stash folder (scopeStashDir: server state, outside every
 * zone, same filesystem): `journal.json` says what goes where, written to a temp file, fsynced and
 * renamed into place (and the folder fsynced) BEFORE anything is moved into `items/`. So:
 * - no journal: nothing was moved yet; the folder is a leftover to remove;
 * - a journal: every entry is either still at its place in the zone, or in `items/`, or already
 *   put back; undoing it (each kind's `restore`) is idempotent, and the folder is removed last.
 * Calls of one scope run one at a time (the call lock), and the lock's takeover, the server's start
 * and shed_maintenance undo what a killed call left (leftovers.ts), as does the next call here.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { syncDirOffLoop } from '../../../base/fs/atomic.js';
import { readText } from '../../../base/fs/read.js';
import { scopeStashDir } from '../../../base/locks/state-dir.js';

export const STASH_KINDS = ['blocked', 'guard'] as const;
export type StashKind = (typeof STASH_KINDS)[number];

export interface Journal<E> {
  kind: StashKind;
  /** The zone's root, relative to the scope's home (`Storage/data`, `Uploads/c1`, `data`). */
  zone: string;
  entries: E[];
}

export interface Stash<E> {
  dir: string;
  /** Where entries are kept (`items/<index>`). */
  items: string;
  journal: Journal<E>;
}

const JOURNAL = 'journal.json';

/**
 * Writes the journal durably, then makes `items/`: from now on a kill leaves a leftover to undo. The
 * flushes and the rename wait on the thread pool (a CI disk took 220 ms once; no other user waits).
 */
export async function openStash<E>(home: string, kind: StashKind, zoneRoot: string, entries: E[]): Promise<Stash<E>> {
  const base = scopeStashDir(home);
  fs.mkdirSync(base, { recursive: true, mode: 0o700 });
  const dir = path.join(base, `${kind}-${Date.now().toString(36)}-${crypto.randomBytes(4).toString('hex')}`);
  fs.mkdirSync(dir, { mode: 0o700 });
  const journal: Journal<E> = { kind, zone: path.relative(fs.realpathSync(home), zoneRoot).split(path.sep).join('/'), entries };
  const tmp = path.join(dir, `${JOURNAL}.tmp`);
  const file = await fs.promises.open(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  try {
    await file.writeFile(JSON.stringify(journal));
    await file.sync();
  } finally {
    await file.close();
  }
  await fs.promises.rename(tmp, path.join(dir, JOURNAL));
  await syncDirOffLoop(dir);
  await syncDirOffLoop(base);
  const items = path.join(dir, 'items');
  fs.mkdirSync(items, { mode: 0o700 });
  return { dir, items, journal };
}

/** The place of entry `index` in the stash. */
export function itemPath(stash: Stash<unknown>, index: number): string {
  return path.join(stash.items, String(index));
}

/**
 * Everything is back: the stash is removed (its journal last, so a kill meanwhile repeats a no-op),
 * and the scope's stash folder too once empty, so nothing of it stays beside the zones between calls.
 */
export function closeStash(stash: Pick<Stash<unknown>, 'dir'>): void {
  fs.rmSync(path.join(stash.dir, 'items'), { recursive: true, force: true });
  fs.rmSync(stash.dir, { recursive: true, force: true });
  try {
    fs.rmdirSync(path.dirname(stash.dir));
  } catch {
    // another stash is still there (a leftover kept for later), or it is gone already
  }
}

export interface Leftover {
  dir: string;
  /** 'none': no journal, nothing was moved (the folder is removed); 'unreadable': left alone, never guessed at. */
  state: 'ok' | 'none' | 'unreadable';
  stash?: Stash<unknown>;
}

/** Stashes a killed call left in this scope. */
export function leftoverStashes(home: string): Leftover[] {
  const base = scopeStashDir(home);
  let names: string[];
  try {
    names = fs.readdirSync(base);
  } catch {
    return [];
  }
  return names.sort().map((name) => {
    const dir = path.join(base, name);
    const file = path.join(dir, JOURNAL);
    if (!fs.existsSync(file)) return { dir, state: 'none' };
    const journal = readJournal(file);
    return journal === undefined ? { dir, state: 'unreadable' } : { dir, state: 'ok', stash: { dir, items: path.join(dir, 'items'), journal } };
  });
}

/** A journal as this module writes it (server state out of every command's reach, checked all the same). */
function readJournal(file: string): Journal<unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readText(file, { noFollow: true }));
  } catch {
    return undefined;
  }
  const j = parsed as Partial<Journal<unknown>>;
  if (typeof j !== 'object' || j === null || !STASH_KINDS.includes(j.kind as StashKind) || typeof j.zone !== 'string' || !Array.isArray(j.entries)) return undefined;
  if (path.isAbsolute(j.zone) || j.zone.split('/').includes('..')) return undefined;
  return j as Journal<unknown>;
}

/** A journalled zone's absolute root. */
export function zoneOf(home: string, journal: Journal<unknown>): string {
  return path.join(home, journal.zone);
}

/** A zone-relative path from a journal entry, checked (no absolute path, no `..`). */
export function safeRel(rel: unknown): string | undefined {
  if (typeof rel !== 'string' || rel === '' || rel.startsWith('/')) return undefined;
  const parts = rel.split('/');
  return parts.includes('..') || parts.includes('') ? undefined : rel;
}
