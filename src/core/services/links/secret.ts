/**
 * The link-signing secret, kept in the `keys` table of access_auth.sqlite so the in-process plugin
 * and `fileshed serve` on the same storage sign and verify with the same key. Generated on first
 * use; a server given its own secret makes it current and keeps the old one as `previous`, which
 * is still accepted for a grace period so links handed out just before a rotation keep working.
 */
import crypto from 'node:crypto';
import { readAccess, rows, writeAccess } from '../groups/accessdb.js';

const CURRENT = 'link_current';
const PREVIOUS = 'link_previous';
/** How long a retired secret still verifies: the longest a link may live by default (7 days). */
export const ROTATION_GRACE_MS = 7 * 24 * 3600 * 1000;

export interface SigningKeys {
  current: Buffer;
  /** The retired secret while its grace period lasts. */
  previous?: Buffer;
}

/** The keys as stored (undefined before the first secret was generated). */
export function loadKeys(db: Parameters<Parameters<typeof readAccess>[1]>[0], now: number): SigningKeys | undefined {
  const byName = new Map(rows(db, 'SELECT name, secret, created_at FROM keys WHERE name IN (?, ?)', [CURRENT, PREVIOUS]).map((r) => [String(r.name), r]));
  const cur = byName.get(CURRENT);
  if (cur === undefined) return undefined;
  const keys: SigningKeys = { current: Buffer.from(String(cur.secret), 'base64url') };
  const prev = byName.get(PREVIOUS);
  // The previous row's created_at is when it was retired.
  if (prev !== undefined && now - Date.parse(String(prev.created_at)) < ROTATION_GRACE_MS) keys.previous = Buffer.from(String(prev.secret), 'base64url');
  return keys;
}

/** The signing keys, generating the first secret when there is none yet. */
export async function signingKeys(base: string, now = Date.now()): Promise<SigningKeys> {
  const existing = await readAccess(base, (db) => loadKeys(db, now));
  if (existing !== undefined) return existing;
  return writeAccess(base, (db) => {
    // Another process may have generated it between our read and our lock: keep theirs.
    const again = loadKeys(db, now);
    if (again !== undefined) return again;
    db.run('INSERT INTO keys (name, secret, created_at) VALUES (?, ?, ?)', [CURRENT, crypto.randomBytes(32).toString('base64url'), new Date(now).toISOString()]);
    return loadKeys(db, now)!;
  });
}

/**
 * Makes `secret` (a server's configured secret, at least 16 bytes of text) the current one; the
 * secret it replaces becomes `previous`. Nothing changes when it is already current.
 */
export async function adoptSecret(base: string, secret: string, now = Date.now()): Promise<SigningKeys> {
  if (Buffer.byteLength(secret) < 16) throw new Error('the link-signing secret must be at least 16 bytes long');
  const encoded = Buffer.from(secret, 'utf8').toString('base64url');
  return writeAccess(base, (db) => {
    const cur = rows(db, 'SELECT secret FROM keys WHERE name = ?', [CURRENT])[0];
    if (cur !== undefined && String(cur.secret) === encoded) return loadKeys(db, now)!;
    const stamp = new Date(now).toISOString();
    if (cur !== undefined) db.run('INSERT OR REPLACE INTO keys (name, secret, created_at) VALUES (?, ?, ?)', [PREVIOUS, String(cur.secret), stamp]);
    db.run('INSERT OR REPLACE INTO keys (name, secret, created_at) VALUES (?, ?, ?)', [CURRENT, encoded, stamp]);
    return loadKeys(db, now)!;
  });
}

/** Generates a fresh secret and makes it current (the old one stays valid for the grace period). */
export function rotateSecret(base: string, now = Date.now()): Promise<SigningKeys> {
  return adoptSecret(base, crypto.randomBytes(32).toString('base64url'), now);
}
