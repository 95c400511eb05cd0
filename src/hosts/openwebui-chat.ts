/**
 * The files a user attached in an Open WebUI chat, read from Open WebUI itself with the user's own
 * session token (SPEC 13.2 "The chat's files reach the workspace"). Open WebUI sends a tool server no
 * attachment ids; what it sends is the chat id and the assistant message being written. Shapes, from
 * Open WebUI 0.11 (commit f9590b8):
 * - `GET /api/v1/chats/{id}` (routers/chats.py get_chat_by_id: the caller's own chats; another user's
 *   answers 401) → `{chat: {history: {messages: {<id>: {parentId, role, files: [...]}}}}}`;
 * - a message's `files[]` entry as the frontend writes it (MessageInput.svelte uploadFileHandler):
 *   `{type: "file", id, name, url: <id>, file: {id, filename, meta: {name, content_type}}, ...}`;
 *   a temporary chat's picture is `{type: "image", url: "data:image/..."}`;
 * - `GET /api/v1/files/{id}` (routers/files.py get_file_by_id) → `{id, filename, meta: {name,
 *   content_type, size}}`; `GET /api/v1/files/{id}/content` (get_file_content_by_id) → the bytes,
 *   whatever the storage provider (local disk or object storage).
 */
import type { AttachedFile } from '../index.js';
import { openwebuiFile } from './http/openwebui.js';

const MAX_FILES = 100;

export interface ChatFilesRequest {
  url: string;
  token: string;
  chatId: string;
  /** The assistant message being written (X-OpenWebUI-Message-Id). */
  messageId?: string | undefined;
  /** The user's message itself ({{USER_MESSAGE_ID}}), when the admin sends it. */
  userMessageId?: string | undefined;
  /** Also the files of earlier messages of the same chat (newest first after the current ones). */
  earlier: boolean;
}

interface Message {
  id?: string;
  parentId?: string | null;
  role?: string;
  files?: unknown[];
  timestamp?: number;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** Thrown with a sentence that names what to change; shed_import shows it. */
export class ChatFilesProblem extends Error {}

async function getJson(url: string, token: string, what: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' }, signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    throw new ChatFilesProblem(`Open WebUI could not be reached for ${what} (${(err as Error).message}); the admin checks the server setting openwebui_api_url`);
  }
  if (res.status === 401 || res.status === 403 || res.status === 404) {
    throw new ChatFilesProblem(`Open WebUI refused ${what} to this user (HTTP ${res.status}): only the user's own chats are readable`);
  }
  if (!res.ok) throw new ChatFilesProblem(`Open WebUI answered HTTP ${res.status} to ${what}`);
  return res.json();
}

/** The user message that holds this turn's attachments: the one named, or the assistant message's parent. */
function currentUserMessage(messages: Record<string, Message>, req: ChatFilesRequest, currentId: string | undefined): Message | undefined {
  if (req.userMessageId && messages[req.userMessageId]) return messages[req.userMessageId];
  // A message id the chat does not hold (not stored yet, or a wrong template) falls back to the
  // chat's current message: the newest turn, which is the one being answered.
  const start = req.messageId && messages[req.messageId] ? req.messageId : currentId;
  let m = start ? messages[start] : undefined;
  // Walk up from the assistant message to the nearest user message (usually its parent).
  for (let hops = 0; m && m.role !== 'user' && hops < 4; hops++) m = m.parentId ? messages[m.parentId] : undefined;
  return m;
}

/** The branch from the root to `leaf`, newest first. */
function branch(messages: Record<string, Message>, leaf: Message | undefined): Message[] {
  const out: Message[] = [];
  const seen = new Set<Message>();
  for (let m = leaf; m && !seen.has(m); m = m.parentId ? messages[m.parentId] : undefined) {
    seen.add(m);
    out.push(m);
  }
  return out;
}

function dataUriFile(entry: Record<string, unknown>, index: number): AttachedFile | undefined {
  const url = str(entry.url);
  const m = url === undefined ? null : /^data:([\w.+-]+\/[\w.+-]+);base64,(.*)$/s.exec(url);
  if (m === null) return undefined;
  const ext = m[1]!.split('/')[1]!.replace(/[^a-z0-9]/gi, '').slice(0, 8) || 'bin';
  return { name: str(entry.name) ?? `image-${index + 1}.${ext}`, bytes: Buffer.from(m[2]!, 'base64') };
}

/**
 * The attachments of the current user message first, then (on request) those of earlier messages
 * of the same branch; each file once. Names and bytes come from the files API, never a local path.
 */
export async function chatFiles(req: ChatFilesRequest): Promise<AttachedFile[]> {
  const body = obj(await getJson(`${req.url}/api/v1/chats/${encodeURIComponent(req.chatId)}`, req.token, `the chat ${req.chatId}`));
  const history = obj(obj(body?.chat)?.history);
  const messages = (obj(history?.messages) ?? {}) as Record<string, Message>;
  const current = currentUserMessage(messages, req, str(history?.currentId));
  if (current === undefined) {
    const named = req.userMessageId ?? req.messageId;
    throw new ChatFilesProblem(
      named
        ? `the message ${named} is not in the chat ${req.chatId} (the header X-OpenWebUI-Message-Id must be {{MESSAGE_ID}}, or X-OpenWebUI-User-Message-Id {{USER_MESSAGE_ID}})`
        : `no message of the chat ${req.chatId} was named: the admin adds the header X-OpenWebUI-Message-Id: {{MESSAGE_ID}} to the connection`,
    );
  }
  const order = req.earlier ? branch(messages, current).filter((m) => m.role === 'user') : [current];
  const entries: Record<string, unknown>[] = [];
  for (const m of order) for (const f of Array.isArray(m.files) ? m.files : []) if (obj(f)) entries.push(obj(f)!);

  const out: AttachedFile[] = [];
  const ids = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    if (out.length >= MAX_FILES) break;
    const inline = dataUriFile(entry, index);
    if (inline) {
      out.push(inline);
      continue;
    }
    const id = str(entry.id) ?? str(obj(entry.file)?.id);
    if (id === undefined || ids.has(id)) continue;
    ids.add(id);
    out.push(await describe(req, id, entry));
  }
  return out;
}

/** A file named by its Open WebUI id (the X-OpenWebUI-File-Ids header), under its real name. */
export function fileById(url: string, token: string, id: string): Promise<AttachedFile> {
  return describe({ url, token }, id, {});
}

/** One attachment: its real name and type from GET /api/v1/files/{id}, bytes fetched when imported. */
async function describe(req: Pick<ChatFilesRequest, 'url' | 'token'>, id: string, entry: Record<string, unknown>): Promise<AttachedFile> {
  let name = str(entry.name) ?? str(obj(obj(entry.file)?.meta)?.name) ?? str(obj(entry.file)?.filename);
  try {
    const meta = obj(await getJson(`${req.url}/api/v1/files/${encodeURIComponent(id)}`, req.token, `the file ${id}`));
    name = str(obj(meta?.meta)?.name) ?? str(meta?.filename) ?? name;
  } catch {
    // The content request below says what went wrong, per file.
  }
  return openwebuiFile(req.url, req.token, id, name ?? id);
}

/** The one-line reason an import cannot see the chat's files, naming the admin's fix. */
export function chatFilesUnavailable(opts: { mode: string; hasToken: boolean; chatId?: string | undefined; messageId?: string | undefined }): string | undefined {
  if (!opts.hasToken) {
    // local mode: one person on this machine, who sends files with the call (multipart) if at all.
    return opts.mode === 'openwebui-session' || opts.mode === 'local'
      ? undefined
      : `This connection (auth ${opts.mode}) carries no Open WebUI session, so Fileshed cannot read the chat's attachments: the admin sets the connection's Auth to "Session" (fileshed serve --auth openwebui-session) and adds the header X-OpenWebUI-Chat-Id: {{CHAT_ID}} and X-OpenWebUI-Message-Id: {{MESSAGE_ID}}, or uses the Fileshed tool file, which forwards the attachments`;
  }
  if (!opts.chatId) return 'The connection sends no chat id, so Fileshed cannot find the attachments: the admin adds the header X-OpenWebUI-Chat-Id: {{CHAT_ID}} (and X-OpenWebUI-Message-Id: {{MESSAGE_ID}}) to the Fileshed connection in Open WebUI';
  if (opts.chatId.startsWith('local:')) return 'This is a temporary chat: Open WebUI keeps its attachments in the browser only, so no tool server can read them. The user attaches the file in a normal (saved) chat';
  return undefined;
}
