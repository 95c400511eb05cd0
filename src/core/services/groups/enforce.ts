/**
 * Ownership enforcement in group zones, shared by every write path: a check before a file (or a
 * folder's files) changes, and the bookkeeping after (new file → record, delete → records removed,
 * rename → records moved). Outside group zones every helper does nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { allRecords, deniedRecords, denial, getRecord, moveRecords, recordsUnder, removeExact, removeRecords, setRecord, setRecords, type OwnershipRecord } from './access.js';
import { OWNERSHIP_MODES, type OwnershipMode } from './accessdb.js';
import { shedError } from '../../base/errors.js';
import type { Zone } from '../../base/zones/zones.js';
import type { Identity } from '../../base/identity.js';
import type { Valves } from '../../base/valves.js';
import type { ZonedPath } from '../../base/files/located.js';
import { diskRel } from '../../base/files/entries.js';
import { lstatIfAny } from '../../base/fs/stat.js';
import { listSliced } from '../../base/fs/list.js';
import { TimeSlice } from '../../base/fs/slice.js';

/** What ownership rules need of a call (the core's CallScope has it all). */
export interface Writer {
  user: Identity;
  valves: Valves;
  /** The call's arguments: a new file's `mode` comes from here. */
  args: Readonly<Record<string, unknown>>;
}

export function deniedError(zone: Zone, rec: OwnershipRecord, reason: 'FILE_OWNER_ONLY' | 'FILE_READ_ONLY', action: string): Error {
  const shown = `${zone.label}/${rec.path}`;
  return shedError('PERMISSION_DENIED', reason === 'FILE_READ_ONLY'
    ? `${shown} is read-only (mode owner_ro): nobody may ${action} it, the owner included.`
    : `${shown} can only be changed by its owner '${rec.owner}' (mode owner); you may read it but not ${action} it.`, {
    details: { reason, path: rec.path, owner: rec.owner, mode: rec.mode },
    hint: reason === 'FILE_READ_ONLY'
      ? `The owner can allow changes first: shed_group_set_mode(group="${zone.group?.name ?? ''}", path="${rec.path}", mode="owner").`
      : `Copy it to a new name instead, e.g. shed_exec(zone="group", group="${zone.group?.name ?? ''}", cmd="cp", args=["${rec.path}", "my-copy-${rec.path.split('/').pop()}"]), or ask '${rec.owner}'.`,
  });
}

/** Refuses when the caller may not change the entry (a folder: any file below it). */
export async function guardWrite(ctx: Writer, p: ZonedPath, action = 'modify'): Promise<void> {
  if (p.zone.group === undefined) return;
  await guardDiskPath(ctx.user.id, p.zone, diskRel(p), action);
}

/**
 * The same guard for a path already known by its real zone-relative location (no link on the way),
 * for writers that do not start from a path parameter (the in-process git restore).
 */
export async function guardDiskPath(userId: string, zone: Zone, rel: string, action = 'modify'): Promise<void> {
  const g = zone.group;
  if (g === undefined) return;
  const isFolder = fs.lstatSync(path.join(zone.root, rel), { throwIfNoEntry: false })?.isDirectory() ?? false;
  const recs = isFolder ? await recordsUnder(g.base, g.id, rel) : [await getRecord(g.base, g.id, rel)].filter((r): r is OwnershipRecord => r !== undefined);
  const slice = new TimeSlice();
  for (const rec of recs) {
    await slice.tick();
    const reason = denial(rec, userId);
    if (reason !== undefined) throw deniedError(zone, rec, reason, action);
  }
}

/**
 * Many paths guarded within one call (a history restore of a folder of 20,000 files): the group's
 * records are read once, on first use, and each path is then judged from memory. The call holds the
 * space's lock, so no other call of this space changes the records meanwhile.
 */
export function callGuard(userId: string, zone: Zone): (rel: string, action?: string) => Promise<void> {
  const g = zone.group;
  if (g === undefined) return async () => undefined;
  let denied: Promise<OwnershipRecord[]> | undefined;
  return async (rel, action = 'modify') => {
    denied ??= deniedRecords(g.base, g.id, userId);
    const recs = await denied;
    const isFolder = fs.lstatSync(path.join(zone.root, rel), { throwIfNoEntry: false })?.isDirectory() ?? false;
    const hit = isFolder ? firstBelow(recs, rel) : recs[lowerBound(recs, rel)];
    if (hit !== undefined && (hit.path === rel || isFolder)) throw deniedError(zone, hit, denial(hit, userId)!, action);
  };
}

/** First index whose path is >= `rel` (records sorted by path, as SQLite's BINARY collation orders them). */
function lowerBound(recs: readonly OwnershipRecord[], rel: string): number {
  let lo = 0;
  let hi = recs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (Buffer.compare(Buffer.from(recs[mid]!.path), Buffer.from(rel)) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first record at `rel` or below it: a record of `rel/...` (its prefix sorts before any later name). */
function firstBelow(recs: readonly OwnershipRecord[], rel: string): OwnershipRecord | undefined {
  if (rel === '') return recs[0];
  const at = recs[lowerBound(recs, rel)];
  if (at?.path === rel) return at;
  const below = recs[lowerBound(recs, `${rel}/`)];
  return below?.path.startsWith(`${rel}/`) ? below : undefined;
}

/**
 * Files written by a writer that is not a path parameter (git restore, a command or script): those
 * without a record become the caller's, all in ONE write of the access database.
 */
export async function recordWritten(ctx: Writer, zone: Zone, rels: readonly string[]): Promise<void> {
  const g = zone.group;
  if (g === undefined || rels.length === 0) return;
  await setRecords(g.base, g.id, rels, ctx.user.id, newFileMode(ctx), true);
}

/** The mode of a file the caller creates: the call's `mode`, else the admin default. */
export function newFileMode(ctx: Writer): OwnershipMode {
  const m = ctx.args.mode;
  return typeof m === 'string' && (OWNERSHIP_MODES as readonly string[]).includes(m) ? (m as OwnershipMode) : ctx.valves.group_default_mode;
}

export async function recordCreated(ctx: Writer, p: ZonedPath, mode = newFileMode(ctx)): Promise<void> {
  const g = p.zone.group;
  if (g !== undefined) await setRecord(g.base, g.id, diskRel(p), ctx.user.id, mode);
}

export async function forgetEntry(zone: Zone, rel: string): Promise<void> {
  if (zone.group !== undefined) await removeRecords(zone.group.base, zone.group.id, rel);
}

export async function moveEntry(zone: Zone, from: string, to: string): Promise<void> {
  if (zone.group !== undefined) await moveRecords(zone.group.base, zone.group.id, from, to);
}

/**
 * Files of a group zone the caller may not change (existing regular files only), zone-relative.
 * A group holds as many records and files as its members make: every loop yields within a slice.
 */
export async function lockedFiles(ctx: Writer, zone: Zone): Promise<OwnershipRecord[]> {
  const g = zone.group;
  if (g === undefined) return [];
  const slice = new TimeSlice();
  const locked: OwnershipRecord[] = [];
  // A hard link made while the file was still open to all would be a writable way into it: every
  // other name of a locked file's inode is locked too (searched only when such links exist).
  const inodes = new Map<string, OwnershipRecord>();
  for (const r of await deniedRecords(g.base, g.id, ctx.user.id)) {
    await slice.tick();
    const st = lstatIfAny(path.join(zone.root, r.path));
    if (!st?.isFile()) continue;
    locked.push(r);
    if (st.nlink > 1) inodes.set(`${st.dev}:${st.ino}`, r);
  }
  if (inodes.size === 0) return locked;
  const named = new Set(locked.map((r) => r.path));
  const stack = [''];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = await listSliced(path.join(zone.root, rel), slice);
    } catch {
      continue;
    }
    for (const e of entries) {
      await slice.tick();
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        stack.push(child);
      } else if (e.isFile() && !named.has(child)) {
        const st = lstatIfAny(path.join(zone.root, child));
        const rec = st && inodes.get(`${st.dev}:${st.ino}`);
        if (rec !== undefined) locked.push({ ...rec, path: child });
      }
    }
  }
  return locked;
}

/**
 * After a command: records of files that no longer exist are dropped (a later creator must not
 * inherit them). The group's records are checked within slices and the vanished ones removed in
 * one write (none at all when nothing vanished: the usual case costs one read).
 */
export async function dropVanished(zone: Zone): Promise<void> {
  const g = zone.group;
  if (g === undefined) return;
  const slice = new TimeSlice();
  const gone: string[] = [];
  for (const r of await allRecords(g.base, g.id)) {
    await slice.tick();
    if (!fs.existsSync(path.join(zone.root, r.path))) gone.push(r.path);
  }
  await removeExact(g.base, g.id, gone);
}
