/**
 * Chooses the identity mode from the credential a request carries, among the enabled modes
 * (SPEC 13.2). A credential that is present but wrong is refused (401): the server never falls
 * back to a weaker mode. No credential at all is `local` when enabled, else 401.
 */
import { keyMatches, apiKeyCaller } from './api-key.js';
import { jwtCaller } from './jwt.js';
import { sessionVerifier } from './session.js';
import { header, type Headers, type Identified } from './types.js';
import type { ServerSettings } from '../settings.js';

export type { Caller, Identified, Refusal } from './types.js';

export type IdentityResolver = (headers: Headers) => Promise<Identified>;

/** `openwebuiUrl`: where sessions are verified, read at each verification (the valve may change). */
export function identityResolver(settings: ServerSettings, fetchImpl: typeof fetch = fetch, openwebuiUrl: () => string = () => settings.openwebuiUrl): IdentityResolver {
  const modes = new Set(settings.auth);
  const session = modes.has('openwebui-session') ? sessionVerifier(openwebuiUrl, fetchImpl) : undefined;
  return async (headers) => {
    const jwt = header(headers, 'x-openwebui-user-jwt')?.trim();
    if (jwt && modes.has('openwebui-jwt')) return jwtCaller(jwt, settings.jwtSecret ?? '');
    const auth = header(headers, 'authorization') ?? '';
    const bearer = /^Bearer\s+(.*)$/i.exec(auth)?.[1]?.trim() ?? '';
    if (bearer) {
      if (modes.has('api-key') && keyMatches(settings.apiKeys, bearer)) return apiKeyCaller(headers);
      if (session) return session.verify(bearer);
      return { ok: false, status: 401, detail: modes.has('api-key') ? 'The API key is not valid.' : `This server does not accept bearer tokens (auth modes: ${settings.auth.join(', ')}).` };
    }
    if (modes.has('local')) {
      return { ok: true, caller: { mode: 'local', user: { id: settings.localUser, name: settings.localUser, email: '', role: 'admin' } } };
    }
    return { ok: false, status: 401, detail: `Credentials are required (auth modes: ${settings.auth.join(', ')}): ${describe(settings)}.` };
  };
}

function describe(settings: ServerSettings): string {
  const ways: string[] = [];
  if (settings.auth.includes('api-key')) ways.push('Authorization: Bearer <API key> with X-OpenWebUI-User-Id');
  if (settings.auth.includes('openwebui-session')) ways.push('Authorization: Bearer <Open WebUI token> (tool server auth "Session")');
  if (settings.auth.includes('openwebui-jwt')) ways.push('X-OpenWebUI-User-Jwt (Open WebUI FORWARD_USER_INFO_HEADER_JWT_SECRET)');
  return ways.join('; or ');
}

/** The WWW-Authenticate challenge of a 401, naming the schemes the server accepts. */
export function challenge(settings: ServerSettings): string {
  return settings.auth.includes('api-key') || settings.auth.includes('openwebui-session') ? 'Bearer realm="fileshed"' : 'OpenWebUI-User-Jwt realm="fileshed"';
}
