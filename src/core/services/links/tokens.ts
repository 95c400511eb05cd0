/**
 * Link tokens: `{id}.{signature}`. The id is 128 random bits (base64url, 22 characters) and is the
 * link's primary key; the signature is HMAC-SHA256(secret, "fileshed-link:" + id). The database
 * stores only the id, so a copy of it gives nobody a working URL; a guessed or altered token fails
 * the constant-time signature check before the database is even read.
 */
import crypto from 'node:crypto';
import type { SigningKeys } from './secret.js';

const ID_BYTES = 16;
const ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
const SIG_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newLinkId(): string {
  return crypto.randomBytes(ID_BYTES).toString('base64url');
}

function sign(secret: Buffer, id: string): Buffer {
  return crypto.createHmac('sha256', secret).update(`fileshed-link:${id}`).digest();
}

export function tokenFor(keys: SigningKeys, id: string): string {
  return `${id}.${sign(keys.current, id).toString('base64url')}`;
}

/** The link id of a well-formed token whose signature verifies with a valid key, else undefined. */
export function verifyToken(keys: SigningKeys, token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot < 0) return undefined;
  const id = token.slice(0, dot);
  const sigText = token.slice(dot + 1);
  if (!ID_PATTERN.test(id) || !SIG_PATTERN.test(sigText)) return undefined;
  const given = Buffer.from(sigText, 'base64url');
  // base64url decoding is lenient about the last character's spare bits: insist on the canonical form.
  if (given.toString('base64url') !== sigText) return undefined;
  for (const secret of [keys.current, keys.previous]) {
    if (secret !== undefined && crypto.timingSafeEqual(sign(secret, id), given)) return id;
  }
  return undefined;
}
