/**
 * One function call on behalf of an authenticated caller, shared by every network host (HTTP
 * functions, MCP over HTTP and stdio): the host arguments (`__user__`, `__metadata__`,
 * `__event_emitter__`) come only from the caller, never from the body, whose `__*` keys are
 * dropped; the per-call host bridge carries the attachments and, for an Open WebUI session, the
 * user's token for group lookups. The call itself goes through the plugin's one dispatcher.
 */
import type { AttachedFile, HostBridge, hostApi as HostApi, StatusEvent } from '../index.js';
import { openwebuiGroups } from './http/openwebui.js';
import type { Caller } from './http/identity/index.js';

export interface CallRequest {
  caller: Caller;
  chatId?: string | undefined;
  messageId?: string | undefined;
  files?: AttachedFile[];
  userValves?: Record<string, unknown> | undefined;
  onStatus?: (event: StatusEvent) => void | Promise<void>;
  /** Open WebUI base URL (REST providers when the caller has a session token). */
  openwebuiUrl?: string;
}

export function callArguments(args: Record<string, unknown>, req: CallRequest): Record<string, unknown> {
  const own = Object.fromEntries(Object.entries(args).filter(([k]) => !k.startsWith('__')));
  return {
    ...own,
    __user__: { ...req.caller.user, valves: req.userValves ?? {} },
    __metadata__: { chat_id: req.chatId ?? '', message_id: req.messageId ?? '' },
    ...(req.onStatus ? { __event_emitter__: req.onStatus } : {}),
  };
}

export function callHost(req: CallRequest): HostBridge {
  const files = req.files ?? [];
  const token = req.caller.token;
  return {
    name: `fileshed-serve (${req.caller.mode})`,
    attachedFiles: () => files,
    ...(token && req.openwebuiUrl ? { groups: () => openwebuiGroups(req.openwebuiUrl!, token, req.caller.user) } : {}),
    // The link backend "openwebui" uploads with the caller's own session token.
    ...(token && req.openwebuiUrl ? { openWebUI: { url: req.openwebuiUrl, token } } : {}),
  };
}

export function runCall(api: typeof HostApi, name: string, args: Record<string, unknown>, valves: Record<string, unknown>, req: CallRequest): Promise<string> {
  return api.call(name, callArguments(args, req), valves, callHost(req));
}

/** The registered names closest to an unknown one (for a 404 that teaches). */
export function closestNames(name: string, names: readonly string[], count = 3): string[] {
  const target = name.toLowerCase().replace(/^shed_/, '');
  return names
    .map((n) => ({ n, d: distance(target, n.toLowerCase().replace(/^shed_/, '')) }))
    .sort((a, b) => a.d - b.d || a.n.localeCompare(b.n))
    .slice(0, count)
    .map((x) => x.n);
}

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}
