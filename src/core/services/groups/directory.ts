/**
 * Group membership as the host provides it. The standalone provider reads the groups tables of the
 * access database (administered with `fileshed groups ...`); an Open WebUI provider (REST
 * GET /api/v1/groups/ with the user's token) implements the same interface in the hosts issue.
 */
import { readAccess, rows, writeAccess } from './accessdb.js';
import { ID_RULE } from '../../base/identity.js';

export interface GroupInfo {
  id: string;
  name: string;
  description: string;
}

export interface GroupDirectory {
  /** Groups the user belongs to. */
  groupsOf(userId: string): Promise<GroupInfo[]>;
  byId(id: string): Promise<GroupInfo | undefined>;
  /** Groups whose name equals `name` ignoring case (the caller decides exact vs "did you mean"). */
  byNameIgnoringCase(name: string): Promise<GroupInfo[]>;
  members(groupId: string): Promise<string[]>;
}

const asInfo = (r: Record<string, unknown>): GroupInfo => ({ id: String(r.id), name: String(r.name), description: String(r.description ?? '') });

export function standaloneDirectory(base: string): GroupDirectory {
  return {
    groupsOf: (userId) =>
      readAccess(base, (db) => rows(db, 'SELECT g.* FROM groups g JOIN group_members m ON m.group_id = g.id WHERE m.user_id = ? ORDER BY g.name', [userId]).map(asInfo)),
    byId: (id) => readAccess(base, (db) => rows(db, 'SELECT * FROM groups WHERE id = ?', [id]).map(asInfo)[0]),
    byNameIgnoringCase: (name) => readAccess(base, (db) => rows(db, 'SELECT * FROM groups WHERE lower(name) = lower(?) ORDER BY name', [name]).map(asInfo)),
    members: (groupId) => readAccess(base, (db) => rows(db, 'SELECT user_id FROM group_members WHERE group_id = ? ORDER BY user_id', [groupId]).map((r) => String(r.user_id))),
  };
}

/** Administration of the standalone directory (the CLI's `fileshed groups ...`). */
export const groupAdmin = {
  async add(base: string, id: string, name = id, description = ''): Promise<GroupInfo> {
    checkAdminId(id, 'group id');
    if (!name.trim()) throw new Error('the group name must not be empty');
    return writeAccess(base, (db) => {
      if (rows(db, 'SELECT 1 FROM groups WHERE id = ?', [id]).length > 0) throw new Error(`group '${id}' already exists`);
      if (rows(db, 'SELECT 1 FROM groups WHERE name = ?', [name]).length > 0) throw new Error(`a group named '${name}' already exists`);
      db.run('INSERT INTO groups (id, name, description) VALUES (?, ?, ?)', [id, name, description]);
      return { id, name, description };
    });
  },
  async remove(base: string, id: string): Promise<void> {
    await writeAccess(base, (db) => {
      if (rows(db, 'SELECT 1 FROM groups WHERE id = ?', [id]).length === 0) throw new Error(`no group '${id}'`);
      db.run('DELETE FROM group_members WHERE group_id = ?', [id]);
      db.run('DELETE FROM groups WHERE id = ?', [id]);
    });
  },
  list(base: string): Promise<(GroupInfo & { members: number })[]> {
    return readAccess(base, (db) =>
      rows(db, 'SELECT g.*, (SELECT count(*) FROM group_members m WHERE m.group_id = g.id) AS members FROM groups g ORDER BY g.name').map((r) => ({ ...asInfo(r), members: Number(r.members) })),
    );
  },
  members(base: string, id: string): Promise<string[]> {
    return standaloneDirectory(base).members(id);
  },
  async addMember(base: string, id: string, user: string): Promise<void> {
    checkAdminId(user, 'user id');
    await writeAccess(base, (db) => {
      if (rows(db, 'SELECT 1 FROM groups WHERE id = ?', [id]).length === 0) throw new Error(`no group '${id}'`);
      db.run('INSERT OR IGNORE INTO group_members (group_id, user_id) VALUES (?, ?)', [id, user]);
    });
  },
  async removeMember(base: string, id: string, user: string): Promise<void> {
    await writeAccess(base, (db) => {
      db.run('DELETE FROM group_members WHERE group_id = ? AND user_id = ?', [id, user]);
    });
  },
};

/** Group ids become folder names and user ids come from the host: the same safe alphabet as user ids. */
function checkAdminId(id: string, what: string): void {
  if (!ID_RULE.test(id)) throw new Error(`invalid ${what} '${id}': use 1-128 characters from A-Z a-z 0-9 _ - (not starting with -)`);
}
