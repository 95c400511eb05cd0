/**
 * Link records in access_auth.sqlite (table `links`). A record names what the link opens (zone,
 * group, conversation for Uploads, path relative to the zone root) and when it stops working;
 * deleting a link revokes it (the row stays, marked, so the page can say so, until it is swept).
 */
import type { Database, SqlValue } from 'sql.js';
import { readAccess, rows, writeAccess } from '../groups/accessdb.js';
import type { ZoneName } from '../../base/zones/zones.js';

export type LinkKind = 'file' | 'folder';

export interface LinkRecord {
  id: string;
  userId: string;
  zone: ZoneName;
  groupId: string | undefined;
  convId: string;
  path: string;
  kind: LinkKind;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | undefined;
}

/** Revoked and expired rows are kept this long (so their pages say 410), then swept. */
const KEEP_DEAD_MS = 30 * 24 * 3600 * 1000;

const asRecord = (r: Record<string, SqlValue>): LinkRecord => ({
  id: String(r.id),
  userId: String(r.user_id),
  zone: String(r.zone) as ZoneName,
  groupId: r.group_id === null ? undefined : String(r.group_id),
  convId: String(r.conv_id ?? ''),
  path: String(r.path),
  kind: String(r.kind) as LinkKind,
  createdAt: String(r.created_at),
  expiresAt: String(r.expires_at),
  revokedAt: r.revoked_at === null ? undefined : String(r.revoked_at),
});

export async function insertLink(base: string, rec: Omit<LinkRecord, 'revokedAt'>, now = Date.now()): Promise<void> {
  await writeAccess(base, (db) => {
    const cutoff = new Date(now - KEEP_DEAD_MS).toISOString();
    db.run('DELETE FROM links WHERE expires_at < ? OR (revoked_at IS NOT NULL AND revoked_at < ?)', [cutoff, cutoff]);
    db.run('INSERT INTO links (id, user_id, zone, group_id, conv_id, path, kind, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      rec.id, rec.userId, rec.zone, rec.groupId ?? null, rec.convId, rec.path, rec.kind, rec.createdAt, rec.expiresAt,
    ]);
  });
}

export function getLink(base: string, id: string): Promise<LinkRecord | undefined> {
  return readAccess(base, (db) => linkRow(db, id));
}

export function linkRow(db: Database, id: string): LinkRecord | undefined {
  return rows(db, 'SELECT * FROM links WHERE id = ?', [id]).map(asRecord)[0];
}

/** The user's links that are not revoked, newest first (expired ones included: the list says so). */
export function linksOf(base: string, userId: string): Promise<LinkRecord[]> {
  return readAccess(base, (db) => rows(db, 'SELECT * FROM links WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id', [userId]).map(asRecord));
}

/** Every link (the admin page lists and revokes them). */
export function allLinks(base: string): Promise<LinkRecord[]> {
  return readAccess(base, (db) => rows(db, 'SELECT * FROM links ORDER BY created_at DESC, id').map(asRecord));
}

export async function revokeLink(base: string, id: string, now = Date.now()): Promise<boolean> {
  return writeAccess(base, (db) => {
    db.run('UPDATE links SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [new Date(now).toISOString(), id]);
    return db.getRowsModified() > 0;
  });
}
