import type { AuthMode } from '../settings.js';

/** Who is calling, as established by one identity mode from the request alone. */
export interface Caller {
  mode: AuthMode;
  user: { id: string; name: string; email: string; role: string };
  /** The user's Open WebUI token (session mode): used for Open WebUI's REST API, never logged. */
  token?: string;
}

/** A refusal: the transport status and the message (JSON `detail`). */
export interface Refusal {
  status: 400 | 401 | 403 | 503;
  detail: string;
}

export type Identified = { ok: true; caller: Caller } | ({ ok: false } & Refusal);

/** Header values as node gives them (lower-case names). */
export type Headers = Record<string, string | string[] | undefined>;

export function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
