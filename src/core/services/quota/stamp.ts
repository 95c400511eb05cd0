/**
 * Per-scope change stamps: usage known in memory stays exact when other processes (other hosts on
 * a network filesystem, where inotify sees nothing) write to the same space, without walking it.
 *
 * Usage answers rely on inotify (usage.ts), which sees this host's writes but not other hosts'.
 * So every modifying call, under its call lock, rewrites a small stamp file in its scope's state
 * folder (outside the zones, not counted) before it returns. The stamp is a journal: a sequence
 * number and, for the last calls, which folders each call changed (what its own inotify watches
 * saw), plus the usage totals it ended with. Before trusting what it knows, a process reads the
 * stamp: entries it has not seen mark just those folders to be read again (O(change), as for its
 * own writes); a call that could not vouch for a tree (it had not loaded it, a command ran there,
 * watches were lost) names the tree, which is then walked again; a gap in the journal (more calls
 * than it keeps) or a stamp of another format drops everything known about the scope. The totals
 * are a cross-check: a process whose refreshed totals disagree walks again.
 *
 * The stamp is rewritten in place at a fixed size (no temp + rename, no truncate: either cost every
 * modifying call most of a millisecond); a reader without the lock that catches it half-written
 * cannot parse it and measures again, which is the safe side. With a coordination service the
 * stamp also records the writer's fencing token (lease.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { QuotaScope } from '../../base/zones/zones.js';
import { currentFence, leaseHeld, type Lease } from '../../base/locks/lease.js';
import { foldersChangedSince, invalidateTree, markFoldersDirty, treeLoaded, usageMark } from './usage.js';
import { callLockPath, scopeHome, scopeStateDir, STAMP_NAME } from '../../base/locks/state-dir.js';
import { retryStale } from '../../base/fs/read.js';

/** Fixed size of the stamp file: the journal is trimmed (oldest calls first) to fit. */
const STAMP_BYTES = 8192;
/** Calls kept in the journal: a process that missed more walks the scope again. */
const MAX_ENTRIES = 64;

/** One modifying call: its sequence number, the folders it changed, the trees it cannot vouch for (relative to the home). */
type Entry = [seq: number, folders: string[], unknown: string[]];

interface Stamp {
  v: 2;
  /** Random per journal: a stamp recreated from scratch is never mistaken for a continuation. */
  epoch: string;
  seq: number;
  /** Fencing token of the writer's lease (0 without a coordination service). */
  fence: number;
  entries: Entry[];
  /** Bytes and files of each tree the writer could vouch for, when it wrote (relative to the home). */
  totals: Record<string, [number, number]>;
}

/** What this process knows: per scope key, the stamp (epoch + seq) its trees reflect, or the raw text of a stamp it could not parse. */
const seen = new Map<string, string>();
/**
 * The stamp as read by the call holding the scope's call lock: nobody else writes it while the
 * lock is held, so one read per call is enough (dropped when the call bumps it, at its end).
 */
const readUnderLock = new Map<string, { lease: Lease; raw: string }>();

function stampPath(scope: Pick<QuotaScope, 'key'>): string {
  return path.join(scopeStateDir(scopeHome(scope)), STAMP_NAME);
}

/** The trees that a scope's calls may change: its zone trees and the editzone (working copies) beside each. */
function rootsOf(scope: QuotaScope): string[] {
  const roots = new Set<string>();
  for (const tree of Object.values(scope.trees)) {
    roots.add(tree);
    roots.add(path.join(path.dirname(tree), 'editzone'));
  }
  return [...roots];
}

/** The stamp's text ('' when there is none yet). */
function readRaw(file: string): string {
  try {
    return retryStale(() => {
      // Server state: a link or FIFO there is never followed nor waited on (read as "no stamp").
      const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
      try {
        if (!fs.fstatSync(fd).isFile()) return '';
        const buf = Buffer.alloc(STAMP_BYTES);
        const n = fs.readSync(fd, buf, 0, STAMP_BYTES, 0);
        return buf.subarray(0, n).toString('utf8').trimEnd();
      } finally {
        fs.closeSync(fd);
      }
    });
  } catch {
    return ''; // none yet (or unreadable: treated as none, the writer under the lock recreates it)
  }
}

/**
 * The last text parsed and what it gave: a call asks for usage several times and reads the same
 * 8 KiB stamp each time (or its copy under the lock); parsing it once is enough. Keyed by the whole
 * text, so a changed stamp is always parsed. Callers never modify the object.
 */
let lastParsed: { raw: string; stamp: Stamp | undefined } | undefined;

function parse(raw: string): Stamp | undefined {
  if (lastParsed?.raw === raw) return lastParsed.stamp;
  let stamp: Stamp | undefined;
  try {
    const s = JSON.parse(raw) as Stamp;
    stamp = s?.v === 2 && typeof s.epoch === 'string' && Number.isInteger(s.seq) && Array.isArray(s.entries) ? s : undefined;
  } catch {
    stamp = undefined;
  }
  lastParsed = { raw, stamp };
  return stamp;
}

const keyOf = (s: Stamp) => `${s.epoch}:${s.seq}`;

/**
 * Brings this process's knowledge of the scope's trees up to the stamp `raw`: marks the folders
 * other processes changed, or forgets trees it cannot update. Returns the totals to cross-check.
 */
function catchUp(scope: QuotaScope, raw: string): Stamp['totals'] | undefined {
  const stamp = parse(raw);
  const now = stamp !== undefined ? keyOf(stamp) : `raw:${raw}`;
  const known = seen.get(scope.key);
  if (known === now) return undefined;
  seen.set(scope.key, now);
  const home = scopeHome(scope);
  const roots = rootsOf(scope);
  const [epoch, seqText] = (known ?? '').split(':');
  const from = Number(seqText);
  const continues = stamp !== undefined && known !== undefined && epoch === stamp.epoch && Number.isInteger(from) && from < stamp.seq;
  const missed = continues ? stamp.entries.filter(([seq]) => seq > from) : [];
  if (!continues || missed.length !== stamp.seq - from) {
    // First look, another format, a new journal, or more calls than it keeps: start over.
    for (const root of roots) invalidateTree(root);
    return stamp?.totals;
  }
  for (const [, folders, unknown] of missed) {
    for (const rel of unknown) invalidateTree(path.join(home, rel));
    const byRoot = new Map<string, string[]>();
    for (const rel of folders) {
      const abs = path.join(home, rel);
      const root = roots.find((r) => abs === r || abs.startsWith(`${r}/`));
      if (root !== undefined) byRoot.set(root, [...(byRoot.get(root) ?? []), abs]);
    }
    for (const [root, dirs] of byRoot) markFoldersDirty(root, dirs);
  }
  return stamp.totals;
}

/**
 * Before a usage answer: applies what other processes changed in the scope since this process
 * last looked. Returns the totals the last writer ended with (relative tree → [bytes, files]),
 * when it did not already know them, for `crossCheck`.
 */
export function checkStamp(scope: QuotaScope): Record<string, [number, number]> | undefined {
  return catchUp(scope, currentRaw(scope));
}

function currentRaw(scope: QuotaScope): string {
  const lease = leaseHeld(callLockPath(scopeHome(scope)));
  const cached = lease !== undefined ? readUnderLock.get(scope.key) : undefined;
  if (cached !== undefined && cached.lease === lease) return cached.raw;
  const raw = readRaw(stampPath(scope));
  if (lease !== undefined) readUnderLock.set(scope.key, { lease, raw });
  return raw;
}

/** After measuring: a tree whose totals disagree with the last writer's is forgotten (the caller measures again). */
export function crossCheck(scope: QuotaScope, totals: Record<string, [number, number]>, measured: Record<string, { bytes: number; files: number }>): boolean {
  const home = scopeHome(scope);
  let agreed = true;
  for (const [label, root] of Object.entries(scope.trees)) {
    const expected = totals[path.relative(home, root)];
    const got = measured[label];
    if (expected === undefined || got === undefined || (expected[0] === got.bytes && expected[1] === got.files)) continue;
    invalidateTree(root);
    agreed = false;
  }
  return agreed;
}

/** A point to pass to `bumpStamp` at the end of the call (taken under the call lock, before the call writes). */
export const stampMark = usageMark;

/**
 * Records that this process changed the scope (after each modifying call, under its call lock):
 * appends the call's changed folders (seen since `mark`) to the journal, with the trees it cannot
 * vouch for and the totals it ends with.
 */
export async function bumpStamp(scope: QuotaScope, mark: number, totalsNow: () => Promise<Record<string, { bytes: number; files: number }>>): Promise<void> {
  const file = stampPath(scope);
  const home = scopeHome(scope);
  try {
    // The copy read under the lock stays good until this write (totalsNow asks for usage again,
    // which needs no second read); it is dropped in `finally`.
    const raw = currentRaw(scope);
    catchUp(scope, raw);
    const previous = parse(raw);
    const folders = new Set<string>();
    const unknown: string[] = [];
    const roots = rootsOf(scope);
    const changes = await Promise.all(roots.map((root) => foldersChangedSince(root, mark))); // their event-loop turns shared
    for (const [i, root] of roots.entries()) {
      const changed = changes[i];
      // A tree this process did not load and that does not exist (an unused editzone) changed nowhere.
      if (changed === undefined && (treeLoaded(root) || fs.existsSync(root))) unknown.push(path.relative(home, root));
      else for (const dir of changed ?? []) folders.add(path.relative(home, dir));
    }
    const totals: Stamp['totals'] = {};
    const measured = await totalsNow();
    for (const [label, root] of Object.entries(scope.trees)) {
      const m = measured[label];
      if (m !== undefined && !unknown.includes(path.relative(home, root))) totals[path.relative(home, root)] = [m.bytes, m.files];
    }
    const seq = (previous?.seq ?? 0) + 1;
    const next: Stamp = {
      v: 2,
      epoch: previous?.epoch ?? crypto.randomBytes(6).toString('hex'),
      seq,
      fence: currentFence(),
      entries: [...(previous?.entries ?? []).slice(-(MAX_ENTRIES - 1)), [seq, [...folders].sort(), unknown]],
      totals,
    };
    let text = JSON.stringify(next);
    while (Buffer.byteLength(text) > STAMP_BYTES && next.entries.length > 1) {
      next.entries.shift(); // readers that missed those calls walk again
      text = JSON.stringify(next);
    }
    if (Buffer.byteLength(text) > STAMP_BYTES) {
      // This call alone changed too many folders to list: readers walk the trees again.
      next.entries = [[seq, [], rootsOf(scope).map((r) => path.relative(home, r))]];
      next.totals = {};
      text = JSON.stringify(next);
    }
    writeInPlace(file, text.padEnd(STAMP_BYTES, ' '));
    seen.set(scope.key, keyOf(next));
  } catch {
    seen.delete(scope.key); // unknown state: the next question starts over
  } finally {
    readUnderLock.delete(scope.key);
  }
}

function writeInPlace(file: string, text: string): void {
  const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;
  let fd: number;
  try {
    fd = fs.openSync(file, flags, 0o644);
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fd = fs.openSync(file, flags, 0o644);
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new Error('the change stamp is not a regular file');
    const bytes = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off, off);
  } finally {
    fs.closeSync(fd);
  }
}
