/**
 * One function call on behalf of an authenticated caller, shared by every network host (HTTP
 * functions, MCP over HTTP and stdio): the host arguments (`__user__`, `__metadata__`,
 * `__event_emitter__`) come only from the caller, never from the body, whose `__*` keys are
 * dropped; the per-call host bridge carries the attachments and, for an Open WebUI session, the
 * user's token for group lookups. The call itself goes through the plugin's one dispatcher.
 */
import type { AttachedFile, HostBridge, StatusEvent } from '../index.js';
import { openwebuiGroups } from './http/openwebui.js';
import { chatFiles, chatFilesUnavailable } from './openwebui-chat.js';
import type { Caller } from './http/identity/index.js';

export interface CallRequest {
  caller: Caller;
  chatId?: string | undefined;
  messageId?: string | undefined;
  /** The user's message of this turn ({{USER_MESSAGE_ID}}), when the connection sends it. */
  userMessageId?: string | undefined;
  /** The Open WebUI tool file forwards attachments itself (their bytes): no chat reading then. */
  toolFile?: boolean;
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
  const { chatId, messageId, userMessageId } = req;
  const canReadChat = !req.toolFile && token !== undefined && req.openwebuiUrl !== undefined && chatId !== undefined && !chatId.startsWith('local:');
  const unavailable = req.toolFile ? undefined : chatFilesUnavailable({ mode: req.caller.mode, hasToken: token !== undefined, chatId, messageId });
  return {
    name: `fileshed-serve (${req.caller.mode})`,
    attachedFiles: () => files,
    ...(canReadChat ? { chatFiles: ({ earlier }: { earlier: boolean }) => chatFiles({ url: req.openwebuiUrl!, token: token!, chatId: chatId!, messageId, userMessageId, earlier }) } : {}),
    ...(unavailable ? { attachHint: unavailable } : {}),
    ...(token && req.openwebuiUrl ? { groups: () => openwebuiGroups(req.openwebuiUrl!, token, req.caller.user) } : {}),
    // The link backend "openwebui" uploads with the caller's own session token.
    ...(token && req.openwebuiUrl ? { openWebUI: { url: req.openwebuiUrl, token } } : {}),
  };
}
