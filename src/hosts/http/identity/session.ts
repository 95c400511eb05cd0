/**
 * `openwebui-session` mode: the bearer token is the user's own Open WebUI session token (the tool
 * server connection's auth "Session"). Open WebUI says who it belongs to (GET /api/v1/auths/);
 * answers are cached by token hash for at most 60 s so a chat's burst of calls costs one lookup.
 */
import crypto from 'node:crypto';
import type { Identified } from './types.js';

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

export interface SessionVerifier {
  verify(token: string): Promise<Identified>;
}

export function sessionVerifier(urlNow: () => string, fetchImpl: typeof fetch = fetch): SessionVerifier {
  const cache = new Map<string, { until: number; result: Identified }>();
  return {
    async verify(token) {
      const key = crypto.createHash('sha256').update(token).digest('hex');
      const hit = cache.get(key);
      if (hit && hit.until > Date.now()) return withToken(hit.result, token);
      const openwebuiUrl = urlNow();
      let res: Response;
      try {
        res = await fetchImpl(`${openwebuiUrl}/api/v1/auths/`, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
      } catch {
        return { ok: false, status: 503, detail: `Open WebUI at ${openwebuiUrl} is unreachable, so the session token cannot be verified; try again later or check the valve openwebui_api_url (its default is the server's --openwebui-url).` };
      }
      let result: Identified;
      if (res.status === 401 || res.status === 403) {
        result = { ok: false, status: 401, detail: 'Open WebUI did not accept the session token (expired or signed out).' };
      } else if (!res.ok) {
        const wrong = res.status === 404 || res.status === 405;
        return { ok: false, status: 503, detail: wrong ? `${openwebuiUrl} answered ${res.status} to GET /api/v1/auths/: it does not look like Open WebUI's address; check the valve openwebui_api_url (its default is the server's --openwebui-url).` : `Open WebUI at ${openwebuiUrl} answered ${res.status} when verifying the session; try again later.` };
      } else {
        const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
        const text = (v: unknown) => (typeof v === 'string' ? v : '');
        const id = text(body?.id);
        if (!id) return { ok: false, status: 503, detail: `${openwebuiUrl} answered GET /api/v1/auths/ without a user id: it does not look like Open WebUI's address; check the valve openwebui_api_url (its default is the server's --openwebui-url).` };
        result = { ok: true, caller: { mode: 'openwebui-session', user: { id, name: text(body?.name) || id, email: text(body?.email), role: text(body?.role) || 'user' } } };
      }
      if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
      cache.set(key, { until: Date.now() + TTL_MS, result });
      return withToken(result, token);
    },
  };
}

/** The token rides along with the caller (for REST calls) but is never stored in the cache entry. */
function withToken(result: Identified, token: string): Identified {
  return result.ok ? { ok: true, caller: { ...result.caller, token } } : result;
}
