/**
 * One function call on behalf of an authenticated caller, shared by every network host (HTTP
 * functions, MCP over HTTP and stdio): the host arguments (`__user__`, `__metadata__`,
 * `__event_emitter__`) come only from the caller, never from the body, whose `__*` keys are
 * dropped; the per-call host bridge carries the attachments and, for an Open WebUI session, the
 * user's token for group lookups. The call itself goes through the plugin's one dispatcher.
 */
import type { AttachedFile, HostBridge, StatusEvent } from '../index.js';
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
