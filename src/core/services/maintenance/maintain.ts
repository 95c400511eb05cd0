/**
 * Maintenance of one user's zones (shed_maintenance) and of the whole storage (the server's
 * schedule and the admin page's "run now"): stale locks and working copies, temp files of
 * interrupted writes, and Uploads folders past `uploads_retention_days`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { cleanLocks, cleanTempFiles, emptyCleaned, type Ages, type Cleaned } from '../../base/locks/maintenance.js';
import { removeExpiredUploads } from '../uploads/retention.js';
import type { Valves } from '../../base/valves.js';
import { groupHome, labelZone, openGroupZone, openZone, userHome, userScope } from '../../base/zones/zones.js';
import { ID_RULE } from '../../base/identity.js';

const HOUR = 3600_000;

export interface MaintenanceReport extends Cleaned {
  /** Conversation upload folders removed by the retention rule ("Uploads/<conversation>"). */
  expired_uploads: string[];
}

export function emptyReport(): MaintenanceReport {
  return { ...emptyCleaned(), expired_uploads: [] };
}

function ages(valves: Valves, now: number): Ages {
  return { maxLockAgeHours: valves.lock_max_age_hours, scratchMs: (valves.exec_timeout_max + 120) * 1000, tempMs: HOUR, now };
}

/** One user's zones; only folders that exist are looked at (nothing is created). */
export async function maintainUser(valves: Valves, userId: string, now = Date.now(), out = emptyReport()): Promise<MaintenanceReport> {
  const a = ages(valves, now);
  const identity = { id: userId, name: userId, email: '', role: 'user' as const };
  const home = userHome(valves, userId);
  for (const name of ['storage', 'documents'] as const) {
    const workBase = path.join(home, name === 'storage' ? 'Storage' : 'Documents');
    if (isDir(workBase)) cleanLocks(openZone({ valves, user: identity, convId: 'maintenance' }, name, undefined), a, out);
  }
  for (const [label, root] of Object.entries(userScope(valves, userId).trees)) {
    // A repository's temp files are swept under its lock (vcs/lock.ts), never here.
    if (isDir(root) && !labelZone(label).history) await cleanTempFiles(label, root, a, out);
  }
  for (const conv of await removeExpiredUploads(path.join(home, 'Uploads'), valves.uploads_retention_days, now)) out.expired_uploads.push(`Uploads/${conv}`);
  return out;
}

/** One group space (its id is its folder name). */
export async function maintainGroup(valves: Valves, groupId: string, now = Date.now(), out = emptyReport()): Promise<MaintenanceReport> {
  if (!isDir(path.join(groupHome(valves, groupId), 'data'))) return out;
  const zone = openGroupZone(valves, { id: groupId, name: groupId });
  const a = ages(valves, now);
  cleanLocks(zone, a, out);
  await cleanTempFiles(zone.label, zone.root, a, out);
  return out;
}

export interface StorageMaintenance {
  users: number;
  groups: number;
  /** Per user or group ("user:<id>", "group:<id>") whatever was cleaned; untouched ones are left out. */
  cleaned: Record<string, MaintenanceReport>;
  total: number;
  ms: number;
}

/** Every user and group folder of the storage base. */
export async function maintainAll(valves: Valves, now = Date.now()): Promise<StorageMaintenance> {
  const started = performance.now();
  const base = path.resolve(valves.storage_base_path);
  const result: StorageMaintenance = { users: 0, groups: 0, cleaned: {}, total: 0, ms: 0 };
  const record = (key: string, report: MaintenanceReport) => {
    const n = reportCount(report);
    if (n === 0) return;
    result.cleaned[key] = report;
    result.total += n;
  };
  for (const id of listIds(path.join(base, 'users'))) {
    result.users++;
    record(`user:${id}`, await maintainUser(valves, id, now));
  }
  for (const id of listIds(path.join(base, 'groups'))) {
    result.groups++;
    record(`group:${id}`, await maintainGroup(valves, id, now));
  }
  result.ms = Math.round(performance.now() - started);
  return result;
}

export function reportCount(r: MaintenanceReport): number {
  return r.expired_locks.length + r.corrupted_locks.length + r.orphan_editzones.length + r.temp_files.length + r.expired_uploads.length + r.internal;
}

function listIds(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((n) => ID_RULE.test(n) && isDir(path.join(dir, n))).sort();
  } catch {
    return [];
  }
}

function isDir(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}
