/**
 * Group access: resolving the `group` parameter (id or exact name), membership, and the per-file
 * write rule of the ownership modes (no record = group):
 *   owner    → only the owner writes, renames or deletes
 *   group    → every member
 *   owner_ro → nobody (the owner must change the mode first)
 */
import type { Database } from 'sql.js';
import { shedError, showValue } from '../../base/errors.js';
import type { Identity } from '../../base/identity.js';
import { readAccess, readAccessMemo, rows, rowsSliced, writeAccess, type OwnershipMode } from './accessdb.js';
import { TimeSlice } from '../../base/fs/slice.js';
import type { GroupDirectory, GroupInfo } from './directory.js';
import { ID_RULE } from '../../base/identity.js';

const SAFE_ID = ID_RULE; // group ids and user ids follow the same rule

/** Finds the group named by `raw` (id first, then exact name) and checks that the user is a member. */
export async function resolveGroup(dir: GroupDirectory, raw: string | undefined, user: Identity, fn = 'shed_group_info'): Promise<GroupInfo> {
  const text = (raw ?? '').trim();
  if (text === '' || text.includes('..') || /[/\\]/.test(text) || /\p{Cc}/u.test(text)) {
    throw shedError('INVALID_GROUP_ID', `group must be the name or id of one of your groups; got ${showValue(raw)}.`, {
      details: { parameter: 'group', received: raw },
      hint: `List your groups with shed_group_list(), then e.g. ${fn}(group="team").`,
    });
  }
  let group = await dir.byId(text);
  if (group === undefined) {
    const similar = await dir.byNameIgnoringCase(text);
    group = similar.find((g) => g.name === text);
    if (group === undefined && similar.length > 0) {
      throw shedError('GROUP_NOT_FOUND', `Group not found: '${text}' (names are case-sensitive).`, {
        details: { parameter: 'group', requested: text, similar: similar.map((g) => g.name) },
        hint: `Did you mean group="${similar[0]!.name}"?`,
      });
    }
  }
  if (group === undefined || !SAFE_ID.test(group.id)) {
    throw shedError('GROUP_NOT_FOUND', `Group not found: '${text}'.`, {
      details: { parameter: 'group', requested: text },
      hint: 'shed_group_list() lists the groups you belong to (by name and id).',
    });
  }
  if (!(await dir.members(group.id)).includes(user.id)) {
    throw shedError('GROUP_ACCESS_DENIED', `You are not a member of the group '${group.name}'.`, {
      details: { group: group.name },
      hint: 'shed_group_list() lists the groups you belong to; ask an admin to add you.',
    });
  }
  return group;
}

export interface OwnershipRecord {
  path: string;
  owner: string;
  mode: OwnershipMode;
}

const asRecord = (r: Record<string, unknown>): OwnershipRecord => ({ path: String(r.file_path), owner: String(r.owner_id), mode: r.write_access as OwnershipMode });

/** Why the user may not write a file with this record, or undefined when they may. */
export function denial(rec: OwnershipRecord | undefined, userId: string): 'FILE_OWNER_ONLY' | 'FILE_READ_ONLY' | undefined {
  if (rec === undefined || rec.mode === 'group') return undefined;
  if (rec.mode === 'owner_ro') return 'FILE_READ_ONLY';
  return rec.owner === userId ? undefined : 'FILE_OWNER_ONLY';
}

export function getRecord(base: string, groupId: string, rel: string): Promise<OwnershipRecord | undefined> {
  return readAccess(base, (db) => rows(db, 'SELECT * FROM file_ownership WHERE group_id = ? AND file_path = ?', [groupId, rel]).map(asRecord)[0]);
}

/** Records of `rel` and, when it is a folder, of everything below it. */
export function recordsUnder(base: string, groupId: string, rel: string): Promise<OwnershipRecord[]> {
  return readAccess(base, (db) => recordsBelow(db, groupId, rel, new TimeSlice()));
}

/** A list of records the caller may change (what readAccessMemo keeps stays as it was read). */
const copyRecords = (records: OwnershipRecord[]): OwnershipRecord[] => records.map((r) => ({ ...r }));

export function allRecords(base: string, groupId: string): Promise<OwnershipRecord[]> {
  return readAccessMemo(base, `all\0${groupId}`, async (db) => (await rowsSliced(db, 'SELECT * FROM file_ownership WHERE group_id = ? ORDER BY file_path', [groupId])).map(asRecord), copyRecords);
}

/**
 * The records `userId` may not follow with a write (mode owner_ro, or owner of someone else), found
 * by the database rather than by loading every record of the group.
 */
export function deniedRecords(base: string, groupId: string, userId: string): Promise<OwnershipRecord[]> {
  return readAccessMemo(
    base,
    `denied\0${groupId}\0${userId}`,
    async (db) => (await rowsSliced(db, `SELECT * FROM file_ownership WHERE group_id = ? AND (write_access = 'owner_ro' OR (write_access = 'owner' AND owner_id <> ?)) ORDER BY file_path`, [groupId, userId])).map(asRecord),
    copyRecords,
  );
}

async function recordsBelow(db: Database, groupId: string, rel: string, slice: TimeSlice): Promise<OwnershipRecord[]> {
  if (rel === '') return (await rowsSliced(db, 'SELECT * FROM file_ownership WHERE group_id = ?', [groupId], slice)).map(asRecord);
  // substr instead of LIKE: file names may hold % and _.
  return (await rowsSliced(db, 'SELECT * FROM file_ownership WHERE group_id = ? AND (file_path = ? OR substr(file_path, 1, ?) = ?)', [groupId, rel, rel.length + 1, `${rel}/`], slice)).map(asRecord);
}

const UPSERT = `INSERT INTO file_ownership (group_id, file_path, owner_id, write_access) VALUES (?, ?, ?, ?)
  ON CONFLICT(group_id, file_path) DO UPDATE SET owner_id = excluded.owner_id, write_access = excluded.write_access, updated_at = CURRENT_TIMESTAMP`;

/** Creates or replaces the record of a file (new file, copy_to_group). */
export function setRecord(base: string, groupId: string, rel: string, owner: string, mode: OwnershipMode): Promise<void> {
  return setRecords(base, groupId, [rel], owner, mode);
}

/**
 * Creates or replaces the records of many files in ONE write of the database (a copied folder of
 * 20,000 files is one load, one export, one fsync; inserting yields in slices). `onlyNew`: files that
 * already have a record keep it (what a command wrote over stays its owner's).
 */
export async function setRecords(base: string, groupId: string, rels: readonly string[], owner: string, mode: OwnershipMode, onlyNew = false): Promise<void> {
  if (rels.length === 0) return;
  await writeAccess(base, async (db) => {
    const slice = new TimeSlice();
    const stmt = db.prepare(onlyNew ? 'INSERT OR IGNORE INTO file_ownership (group_id, file_path, owner_id, write_access) VALUES (?, ?, ?, ?)' : UPSERT);
    try {
      for (const rel of rels) {
        await slice.tick();
        stmt.run([groupId, rel, owner, mode]);
      }
    } finally {
      stmt.free();
    }
  });
}

/** Updates mode or owner of an existing record. */
export function updateRecord(base: string, groupId: string, rel: string, change: { mode?: OwnershipMode; owner?: string }): Promise<void> {
  return writeAccess(base, (db) => {
    if (change.mode !== undefined) db.run('UPDATE file_ownership SET write_access = ?, updated_at = CURRENT_TIMESTAMP WHERE group_id = ? AND file_path = ?', [change.mode, groupId, rel]);
    if (change.owner !== undefined) db.run('UPDATE file_ownership SET owner_id = ?, updated_at = CURRENT_TIMESTAMP WHERE group_id = ? AND file_path = ?', [change.owner, groupId, rel]);
  });
}

/** Removes the records of a deleted file or folder. */
export function removeRecords(base: string, groupId: string, rel: string): Promise<void> {
  return writeAccess(base, async (db) => {
    const slice = new TimeSlice();
    const stmt = db.prepare('DELETE FROM file_ownership WHERE group_id = ? AND file_path = ?');
    try {
      for (const r of await recordsBelow(db, groupId, rel, slice)) {
        await slice.tick();
        stmt.run([groupId, r.path]);
      }
    } finally {
      stmt.free();
    }
  });
}

/** Removes the records of exactly these paths (files gone after a command), in one write. */
export async function removeExact(base: string, groupId: string, rels: readonly string[]): Promise<void> {
  if (rels.length === 0) return;
  await writeAccess(base, async (db) => {
    const slice = new TimeSlice();
    const stmt = db.prepare('DELETE FROM file_ownership WHERE group_id = ? AND file_path = ?');
    try {
      for (const rel of rels) {
        await slice.tick();
        stmt.run([groupId, rel]);
      }
    } finally {
      stmt.free();
    }
  });
}

/** Moves the records of a renamed file or folder (prefix rewrite for a folder). */
export function moveRecords(base: string, groupId: string, from: string, to: string): Promise<void> {
  return writeAccess(base, async (db) => {
    const slice = new TimeSlice();
    for (const r of await recordsBelow(db, groupId, from, slice)) {
      await slice.tick();
      const dest = to + r.path.slice(from.length);
      db.run('DELETE FROM file_ownership WHERE group_id = ? AND file_path = ?', [groupId, dest]);
      db.run('UPDATE file_ownership SET file_path = ?, updated_at = CURRENT_TIMESTAMP WHERE group_id = ? AND file_path = ?', [dest, groupId, r.path]);
    }
  });
}
