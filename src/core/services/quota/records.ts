/**
 * Usage records: one small JSON file per user or group, in its scope's state folder outside every
 * zone (locks/.shed-usage.json, see scopeStateDir), holding zone sizes, file counts and the last activity. The
 * dispatcher refreshes the caller's record after calls (treeUsage makes that cheap), so the admin
 * page lists 1,000 users by reading 1,000 small files instead of walking 1,000 trees per view.
 * Records are a cache: losing one loses nothing (the next call or "measure" rebuilds it).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ID_RULE } from '../../base/identity.js';
import type { Valves } from '../../base/valves.js';
import { groupHome, groupScope, labelZone, userHome, userScope, type QuotaScope } from '../../base/zones/zones.js';
import { scopeUsage } from './quota.js';
import { writeBytes } from '../../base/fs/read.js';
import { readStateText } from '../../base/fs/nofollow.js';
import { scopeStateDir, USAGE_RECORD_NAME } from '../../base/locks/state-dir.js';

export interface UsageRecord {
  kind: 'user' | 'group';
  id: string;
  /** Per zone (Uploads, Storage, Documents; or Group:<name>) and history ("Documents history"): bytes and files. */
  zones: Record<string, { bytes: number; files: number }>;
  /** Bytes of every tree, history included (it counts toward the quota). */
  total_bytes: number;
  /** The user's (or group's) files, not the repository's objects. */
  total_files: number;
  quota_bytes: number;
  /** ISO time of the last call that touched this scope (or of the measurement when none is known). */
  last_activity: string;
  measured_at: string;
}

function recordFile(storageBase: string, kind: 'user' | 'group', id: string): string {
  return path.join(scopeStateDir(path.join(realBase(storageBase), `${kind}s`, id)), USAGE_RECORD_NAME);
}

/** The storage base as the kernel names it (it may be reached through a link): server state is checked against real paths. */
function realBase(storageBase: string): string {
  try {
    return fs.realpathSync(storageBase);
  } catch {
    return path.resolve(storageBase);
  }
}

/** Reads-only calls refresh a record at most this often (writes always do). */
const READ_REFRESH_MS = 60_000;
/** Writes refresh at most this often; one more refresh follows the last throttled write (a timer). */
const WRITE_REFRESH_MS = 5_000;
const lastWritten = new Map<string, number>();
const trailing = new Set<string>();

async function measure(scope: QuotaScope, kind: 'user' | 'group', id: string, activity: string | undefined): Promise<UsageRecord> {
  const zones = await scopeUsage(scope);
  let bytes = 0;
  let files = 0;
  for (const [label, u] of Object.entries(zones)) {
    bytes += u.bytes;
    if (!labelZone(label).history) files += u.files; // the user's files, not the repository's objects
  }
  const now = new Date().toISOString();
  return { kind, id, zones, total_bytes: bytes, total_files: files, quota_bytes: scope.limitBytes, last_activity: activity ?? now, measured_at: now };
}

function save(storageBase: string, record: UsageRecord): void {
  const file = recordFile(storageBase, record.kind, record.id);
  // Only for scopes whose folder exists (callers check): a record never creates a user or group.
  // temp + rename: a reader sees the old or the new record, never half of one (no fsync: a cache).
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  writeBytes(tmp, JSON.stringify(record), { mode: 0o600, exclusive: true });
  fs.renameSync(tmp, file);
}

/**
 * After a call: refreshes the record of the user (and of the group space the call used). Never
 * throws (bookkeeping must not fail a call); a call that wrote nothing refreshes at most once a
 * minute, one that wrote at most every 5 s (measuring and saving on every write cost each call
 * about half a millisecond), with a trailing refresh so the record never stays behind the last write.
 */
export async function noteActivity(valves: Valves, userId: string, group: { id: string; name: string } | undefined, wrote: boolean): Promise<void> {
  const now = Date.now();
  const targets: [QuotaScope, 'user' | 'group', string, string][] = [];
  if (fs.existsSync(userHome(valves, userId))) targets.push([userScope(valves, userId), 'user', userId, userHome(valves, userId)]);
  if (group !== undefined && fs.existsSync(groupHome(valves, group.id))) targets.push([groupScope(valves, group), 'group', group.id, groupHome(valves, group.id)]);
  for (const [scope, kind, id] of targets) {
    const key = `${path.resolve(valves.storage_base_path)}:${kind}:${id}`;
    const since = now - (lastWritten.get(key) ?? 0);
    if (!wrote && since < READ_REFRESH_MS) continue;
    if (wrote && since < WRITE_REFRESH_MS) {
      if (!trailing.has(key)) {
        trailing.add(key);
        const timer = setTimeout(() => {
          trailing.delete(key);
          void noteActivity(valves, userId, kind === 'group' ? group : undefined, true);
        }, WRITE_REFRESH_MS - since);
        timer.unref();
      }
      continue;
    }
    try {
      save(valves.storage_base_path, await measure(scope, kind, id, new Date(now).toISOString()));
      lastWritten.set(key, now);
      if (lastWritten.size > 10_000) lastWritten.delete(lastWritten.keys().next().value as string);
    } catch {
      // a full disk or a vanished folder: the record stays as it was
    }
  }
}

/** Every record of a storage base (users and groups), as stored; unreadable files are skipped. */
export function readUsageRecords(storageBase: string): UsageRecord[] {
  const out: UsageRecord[] = [];
  for (const kind of ['user', 'group'] as const) {
    const dir = path.join(path.resolve(storageBase), `${kind}s`);
    let ids: string[];
    try {
      ids = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const id of ids) {
      if (!ID_RULE.test(id)) continue;
      try {
        const r = JSON.parse(readStateText(recordFile(storageBase, kind, id)) ?? '') as UsageRecord;
        if (r.kind === kind && r.id === id) out.push(r);
      } catch {
        // no record yet, or a torn one: skipped
      }
    }
  }
  return out;
}

/**
 * Measures users and groups of the storage that have no record yet (or all with `all`), e.g.
 * for a storage created before records existed. Last activity of a new record is the newest
 * modification time of the scope's top folders (the best guess without a call).
 */
export async function measureUsage(valves: Valves, all = false): Promise<{ measured: number; ms: number }> {
  const started = performance.now();
  const base = path.resolve(valves.storage_base_path);
  const have = new Set(readUsageRecords(base).map((r) => `${r.kind}:${r.id}`));
  let measured = 0;
  for (const kind of ['user', 'group'] as const) {
    for (const id of listIds(path.join(base, `${kind}s`))) {
      if (!all && have.has(`${kind}:${id}`)) continue;
      const home = kind === 'user' ? userHome(valves, id) : groupHome(valves, id);
      const scope = kind === 'user' ? userScope(valves, id) : groupScope(valves, { id, name: id });
      const previous = readRecord(base, kind, id)?.last_activity;
      try {
        save(base, await measure(scope, kind, id, previous ?? newestMtime(home)));
        measured++;
      } catch {
        // vanished meanwhile
      }
    }
  }
  return { measured, ms: Math.round(performance.now() - started) };
}

function readRecord(base: string, kind: 'user' | 'group', id: string): UsageRecord | undefined {
  try {
    return JSON.parse(readStateText(recordFile(base, kind, id)) ?? '') as UsageRecord;
  } catch {
    return undefined;
  }
}

function newestMtime(home: string): string {
  let newest = 0;
  const visit = (p: string) => {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (st !== undefined && st.mtimeMs > newest) newest = st.mtimeMs;
  };
  visit(home);
  try {
    for (const name of fs.readdirSync(home)) visit(path.join(home, name));
  } catch {
    // no home
  }
  return new Date(newest || Date.now()).toISOString();
}

function listIds(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((n) => ID_RULE.test(n) && fs.statSync(path.join(dir, n), { throwIfNoEntry: false })?.isDirectory());
  } catch {
    return [];
  }
}
