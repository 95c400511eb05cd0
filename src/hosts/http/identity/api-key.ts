/**
 * `api-key` mode: a trusted backend (the Open WebUI tool file, a private network) presents a key
 * and says who the user is in the X-OpenWebUI-User-* headers. Keys are compared in constant time.
 */
import crypto from 'node:crypto';
import { header, type Headers, type Identified } from './types.js';

const digest = (s: string) => crypto.createHash('sha256').update(s).digest();

export function keyMatches(keys: readonly string[], presented: string): boolean {
  const given = digest(presented);
  let found = false;
  // Every key is compared (no early exit), each comparison in constant time over equal-length digests.
  for (const key of keys) found = crypto.timingSafeEqual(digest(key), given) || found;
  return found;
}

/** Percent-decodes the user name (Open WebUI sends quote(name, safe=' ')); undecodable text stays as sent. */
export function decodeName(raw: string | undefined): string {
  if (raw === undefined) return '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export function apiKeyCaller(headers: Headers): Identified {
  const id = header(headers, 'x-openwebui-user-id')?.trim();
  if (!id) {
    return { ok: false, status: 400, detail: 'api-key mode needs the user in the X-OpenWebUI-User-Id header (the Open WebUI tool file sends it).' };
  }
  return {
    ok: true,
    caller: {
      mode: 'api-key',
      user: {
        id,
        name: decodeName(header(headers, 'x-openwebui-user-name')) || id,
        email: header(headers, 'x-openwebui-user-email')?.trim() ?? '',
        role: header(headers, 'x-openwebui-user-role')?.trim() || 'user',
      },
    },
  };
}
