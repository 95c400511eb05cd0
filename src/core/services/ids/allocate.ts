/**
 * Kernel identities: a uid per user (whose personal gid is the same number) and a gid per group, from
 * one number space, so a user's personal gid never equals a group's. Allocated once, on first need,
 * under the access database's cross-process lock (kernel_ids: UNIQUE id, one row per user or group),
 * so every instance sharing the storage base, on any host, agrees; never changed or reused afterwards
 * (files on disk carry the numbers). A number a host account or group already uses (this host's
 * /etc/passwd, /etc/group) is skipped.
 */
import { readBytes } from '../../base/fs/read.js';
import { readAccess, rows, writeAccess } from '../groups/accessdb.js';
import type { IdRange } from './range.js';

export type IdKind = 'user' | 'group';

/** What a user's commands run as: uid, and its personal gid (the same number). */
export interface UserIds {
  uid: number;
  gid: number;
}

/** Allocated numbers never change: a process remembers them (per storage base). */
const known = new Map<string, number>();
const key = (base: string, kind: IdKind, name: string) => `${base}\0${kind}\0${name}`;

/** The id of a user or group, allocated now if it has none. */
export async function kernelId(base: string, range: IdRange, kind: IdKind, name: string): Promise<number> {
  const k = key(base, kind, name);
  const cached = known.get(k);
  if (cached !== undefined) return cached;
  const find = (db: Parameters<Parameters<typeof readAccess>[1]>[0]) => {
    const row = rows(db, 'SELECT id FROM kernel_ids WHERE kind = ? AND name = ?', [kind, name])[0];
    return row ? Number(row.id) : undefined;
  };
  let id = await readAccess(base, find);
  if (id === undefined) {
    const taken = hostIds();
    id = await writeAccess(base, (db) => {
      const existing = find(db);
      if (existing !== undefined) return existing;
      const top = rows(db, 'SELECT max(id) AS top FROM kernel_ids WHERE id BETWEEN ? AND ?', [range.first, range.last])[0]?.top;
      let next = top === null || top === undefined ? range.first : Number(top) + 1;
      while (taken.has(next) && next <= range.last) next++;
      if (next > range.last) {
        throw new Error(`no kernel id left for ${kind} '${name}': identity_id_first=${range.first}..${range.last} are all allocated; an admin raises identity_id_count (or moves identity_id_first to a free range)`);
      }
      db.run('INSERT INTO kernel_ids (kind, name, id) VALUES (?, ?, ?)', [kind, name, next]);
      return next;
    });
  }
  known.set(k, id);
  return id;
}

/** A user's uid and personal gid. */
export async function userIds(base: string, range: IdRange, userId: string): Promise<UserIds> {
  const id = await kernelId(base, range, 'user', userId);
  return { uid: id, gid: id };
}

/** A group's gid. */
export function groupGid(base: string, range: IdRange, groupId: string): Promise<number> {
  return kernelId(base, range, 'group', groupId);
}

/** Every allocation, for doctor and the admin page. */
export function listKernelIds(base: string): Promise<{ kind: IdKind; name: string; id: number }[]> {
  return readAccess(base, (db) => rows(db, 'SELECT kind, name, id FROM kernel_ids ORDER BY id').map((r) => ({ kind: r.kind as IdKind, name: String(r.name), id: Number(r.id) })));
}

/** Numbers this host's accounts and groups use (small files, read once per allocation). */
function hostIds(): Set<number> {
  const out = new Set<number>();
  for (const [file, field] of [['/etc/passwd', 2], ['/etc/group', 2]] as const) {
    let text = '';
    try {
      text = readBytes(file).toString('utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const n = Number(line.split(':')[field]);
      if (line && Number.isInteger(n)) out.add(n);
    }
  }
  return out;
}

/** Tests only: forget what this process remembers (as a fresh process would). */
export function forgetKernelIds(): void {
  known.clear();
}
