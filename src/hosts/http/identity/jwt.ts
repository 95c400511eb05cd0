/**
 * `openwebui-jwt` mode: Open WebUI's FORWARD_USER_INFO_HEADER_JWT_SECRET turns the user headers
 * into one HS256 token in X-OpenWebUI-User-Jwt (claims sub, name, role, email; exp required).
 */
import { jwtVerify } from 'jose';
import type { Identified } from './types.js';

export async function jwtCaller(token: string, secret: string): Promise<Identified> {
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ['HS256'], requiredClaims: ['exp', 'sub'] });
    const text = (v: unknown) => (typeof v === 'string' ? v : '');
    const id = text(payload.sub);
    return { ok: true, caller: { mode: 'openwebui-jwt', user: { id, name: text(payload.name) || id, email: text(payload.email), role: text(payload.role) || 'user' } } };
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    const why = code === 'ERR_JWT_EXPIRED' ? 'it has expired' : code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' ? 'its signature does not match the configured secret' : code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' ? 'a required claim (exp, sub) is missing or invalid' : 'it is not a valid HS256 token';
    return { ok: false, status: 401, detail: `The X-OpenWebUI-User-Jwt token was refused: ${why}.` };
  }
}
