/**
 * Who may use the admin page, and the rules for requests that change something.
 *
 * Admins: `local` mode (the loopback user), the API key (Bearer header, or the sign-in form that
 * opens a session), an Open WebUI session whose role is admin (its token in the Bearer header or
 * the sign-in form; verified by the server's identity module). Sessions live in memory: a random
 * 256-bit id in a cookie (HttpOnly, SameSite=Strict, Path=/admin, Secure when the request came
 * over https), 8 hours.
 *
 * State-changing requests (POST) must carry the CSRF token of their session or bearer
 * credential (an HMAC of it under a per-process secret, compared in constant time), and when the
 * browser says where the request comes from (Origin, Sec-Fetch-Site) it must be this origin. A
 * cross-site POST is refused before anything is read or changed.
 */
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { keyMatches } from '../identity/api-key.js';
import { header } from '../identity/types.js';
import type { ServerContext } from '../route.js';

const COOKIE = 'fileshed_admin';
const SESSION_MS = 8 * 3600_000;
const MAX_SESSIONS = 1000;

export interface Admin {
  user: string;
  /** How the admin was recognised (for the audit log). */
  via: 'local' | 'api-key' | 'openwebui-session' | 'session';
  /** The CSRF token every form of this page carries. */
  csrf: string;
  /** Set-Cookie header to send with the page (a session opened by this request). */
  setCookie?: string;
}

export type AdminCheck =
  | { kind: 'admin'; admin: Admin }
  /** No credential (or a wrong one): the sign-in page; openwebuiDown: Open WebUI could not check a token. */
  | { kind: 'signin'; error?: string; openwebuiDown?: boolean }
  /** Known but not an admin: the 403 page. */
  | { kind: 'forbidden'; user: string; why: string };

interface Session {
  user: string;
  via: Admin['via'];
  expires: number;
}

export class AdminGuard {
  private readonly sessions = new Map<string, Session>();
  private readonly secret = crypto.randomBytes(32);

  constructor(private readonly ctx: ServerContext) {}

  /** Recognises the admin of a request; `open` creates a session (cookie) for callers without one (local mode, GET). */
  async check(req: IncomingMessage, open: boolean): Promise<AdminCheck> {
    const sid = cookieOf(req, COOKIE);
    const session = sid ? this.sessions.get(sid) : undefined;
    if (session && session.expires > Date.now()) return { kind: 'admin', admin: { user: session.user, via: 'session', csrf: this.csrfFor(`s:${sid}`) } };
    if (sid && session) this.sessions.delete(sid);

    const bearer = /^Bearer\s+(.*)$/i.exec(header(req.headers, 'authorization') ?? '')?.[1]?.trim() ?? '';
    if (bearer) {
      const who = await this.credential(bearer);
      if (who.kind !== 'admin') return who;
      return { kind: 'admin', admin: { ...who.admin, csrf: this.csrfFor(`b:${sha256(bearer)}`) } };
    }
    if (this.ctx.settings.auth.includes('local')) {
      // A loopback-only mode (serve refuses `local` on a network address): the local user is the admin.
      // Forms still need a session so that the CSRF token is per browser, not per server.
      if (!open) return { kind: 'admin', admin: { user: this.ctx.settings.localUser, via: 'local', csrf: this.csrfFor('local:no-session') } };
      return { kind: 'admin', admin: this.open(req, this.ctx.settings.localUser, 'local') };
    }
    return { kind: 'signin' };
  }

  /** An API key or an Open WebUI token, given in a header or in the sign-in form. */
  async credential(secret: string): Promise<AdminCheck> {
    const settings = this.ctx.settings;
    if (settings.apiKeys.length > 0 && keyMatches(settings.apiKeys, secret)) return { kind: 'admin', admin: { user: 'api-key', via: 'api-key', csrf: '' } };
    if (settings.auth.includes('openwebui-session')) {
      const who = await this.ctx.identify({ authorization: `Bearer ${secret}` });
      if (who.ok && who.caller.mode === 'openwebui-session') {
        if (who.caller.user.role === 'admin') return { kind: 'admin', admin: { user: who.caller.user.id, via: 'openwebui-session', csrf: '' } };
        return { kind: 'forbidden', user: who.caller.user.id, why: `Open WebUI says your role is '${who.caller.user.role}'; the admin page needs the role admin.` };
      }
      if (!who.ok && who.status === 503) return { kind: 'signin', error: who.detail, openwebuiDown: true };
    }
    return { kind: 'signin', error: 'That key or token is not valid.' };
  }

  /** Opens a session for a recognised admin; the answer must send `setCookie`. */
  open(req: IncomingMessage, user: string, via: Admin['via']): Admin {
    this.prune();
    const sid = crypto.randomBytes(32).toString('base64url');
    this.sessions.set(sid, { user, via, expires: Date.now() + SESSION_MS });
    const secure = isHttps(req) ? '; Secure' : '';
    return { user, via, csrf: this.csrfFor(`s:${sid}`), setCookie: `${COOKIE}=${sid}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=${SESSION_MS / 1000}${secure}` };
  }

  /** Ends the request's session; returns the Set-Cookie header that clears the cookie. */
  close(req: IncomingMessage): string {
    const sid = cookieOf(req, COOKIE);
    if (sid) this.sessions.delete(sid);
    return `${COOKIE}=; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=0${isHttps(req) ? '; Secure' : ''}`;
  }

  /**
   * The checks of a state-changing request, before its form is acted on: where it comes from,
   * then the CSRF token. Returns why it is refused, or undefined when it may proceed.
   */
  refusal(req: IncomingMessage, admin: Admin, token: string | undefined): string | undefined {
    const cross = crossSite(req, this.ctx.publicUrl());
    if (cross) return cross;
    if (admin.via === 'local' && cookieOf(req, COOKIE) === undefined) return 'this form was not sent from a page of this admin session (no session cookie)';
    if (!token || !sameSecret(token, admin.csrf)) return 'the form carries no valid CSRF token (reload the page and try again)';
    return undefined;
  }

  private csrfFor(binding: string): string {
    return crypto.createHmac('sha256', this.secret).update(binding).digest('base64url');
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, s] of this.sessions) if (s.expires <= now) this.sessions.delete(id);
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
  }
}

/** Why a request is cross-site (browsers send Sec-Fetch-Site and Origin on POST), or undefined. */
export function crossSite(req: IncomingMessage, publicUrl: string): string | undefined {
  const site = header(req.headers, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `the request came from another site (Sec-Fetch-Site: ${site})`;
  const origin = header(req.headers, 'origin');
  if (origin === undefined) return undefined;
  const own = `${isHttps(req) ? 'https' : 'http'}://${header(req.headers, 'host') ?? ''}`;
  let publicOrigin = '';
  try {
    publicOrigin = new URL(publicUrl).origin;
  } catch {
    // no usable public URL
  }
  if (origin === own || origin === publicOrigin) return undefined;
  return `the request came from another origin (${origin.slice(0, 100)})`;
}

export function isHttps(req: IncomingMessage): boolean {
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  return encrypted || (header(req.headers, 'x-forwarded-proto') ?? '').split(',')[0]?.trim().toLowerCase() === 'https';
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (header(req.headers, 'cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

function sameSecret(a: string, b: string): boolean {
  const x = crypto.createHash('sha256').update(a).digest();
  const y = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(x, y) && b !== '';
}

