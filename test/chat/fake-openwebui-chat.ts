/**
 * A fake Open WebUI on loopback for the chat's files, answering as Open WebUI 0.11 (commit f9590b8)
 * does; every endpoint names the function it follows:
 * - GET  /api/v1/auths/                       routers/auths.py get_session_user (who am I)
 * - GET  /api/v1/chats/{id}                   routers/chats.py get_chat_by_id: the caller's own chat,
 *                                             another user's → 401 {"detail": "...not found"}
 * - GET  /api/v1/files/{id}                   routers/files.py get_file_by_id: owner or admin, else 404
 * - GET  /api/v1/files/{id}/content           routers/files.py get_file_content_by_id: the bytes
 * - POST /api/v1/files/                       routers/files.py upload_file (multipart `file`)
 * - POST /api/v1/chats/{id}/messages/{m}/event routers/chats.py send_chat_message_event_by_id, then
 *                                             socket/main.py get_event_emitter: a `files` event's
 *                                             data.files are put before the message's files
 * Files live in memory only, as with an object-storage provider: no local path reaches a client.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatMessage {
  id: string;
  parentId: string | null;
  childrenIds: string[];
  role: 'user' | 'assistant';
  content: string;
  files?: Record<string, unknown>[];
}

export interface OwuiFile {
  id: string;
  user_id: string;
  filename: string;
  meta: { name: string; content_type: string; size: number };
  bytes: Buffer;
}

export interface FakeChatOwui {
  url: string;
  tokens: Map<string, { id: string; name: string; role?: string }>;
  files: Map<string, OwuiFile>;
  chats: Map<string, { user_id: string; chat: { title: string; history: { currentId: string | null; messages: Record<string, ChatMessage> } } }>;
  events: { chat: string; message: string; body: { type: string; data: Record<string, unknown> } }[];
  hits: string[];
  /** Adds a file owned by `user` and returns the message `files[]` entry the frontend would write. */
  upload(user: string, name: string, bytes: Buffer, contentType: string): Record<string, unknown>;
  /** A chat with a user message holding `files` and the assistant message being written; returns both ids. */
  chat(user: string, chatId: string, turns: Record<string, unknown>[][]): { user: string; assistant: string };
  close(): Promise<void>;
}

export async function fakeChatOwui(): Promise<FakeChatOwui> {
  const tokens = new Map<string, { id: string; name: string; role?: string }>();
  const files = new Map<string, OwuiFile>();
  const chats: FakeChatOwui['chats'] = new Map();
  const events: FakeChatOwui['events'] = [];
  const hits: string[] = [];
  let next = 1;
  const addFile = (user: string, name: string, bytes: Buffer, contentType: string): OwuiFile => {
    const f: OwuiFile = { id: `0f${String(next++).padStart(6, '0')}-aaaa-bbbb`, user_id: user, filename: name, meta: { name, content_type: contentType, size: bytes.length }, bytes };
    files.set(f.id, f);
    return f;
  };
  const view = (f: OwuiFile) => ({ id: f.id, user_id: f.user_id, filename: f.filename, meta: f.meta, created_at: 1_700_000_000, updated_at: 1_700_000_000 });

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const p = (req.url ?? '').split('?')[0]!;
    hits.push(`${req.method} ${p}`);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const user = tokens.get(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
    if (!user) return json(401, { detail: 'Not authenticated' });
    const admin = user.role === 'admin';
    if (p === '/api/v1/auths/') return json(200, { id: user.id, name: user.name, email: '', role: user.role ?? 'user' });
    if (p === '/api/v1/groups/') return json(200, []);
    let m = /^\/api\/v1\/chats\/([^/]+)$/.exec(p);
    if (m && req.method === 'GET') {
      const c = chats.get(decodeURIComponent(m[1]!));
      // get_chat_by_id: Chats.get_chat_by_id_and_user_id; admins only with ENABLE_ADMIN_CHAT_ACCESS.
      if (!c || c.user_id !== user.id) return json(401, { detail: 'We could not find what you\'re looking for :/' });
      return json(200, { id: m[1], user_id: c.user_id, title: c.chat.title, chat: c.chat, updated_at: 1, created_at: 1, share_id: null, archived: false, pinned: false, meta: {}, folder_id: null });
    }
    m = /^\/api\/v1\/chats\/([^/]+)\/messages\/([^/]+)\/event$/.exec(p);
    if (m && req.method === 'POST') {
      const c = chats.get(decodeURIComponent(m[1]!));
      if (!c || (c.user_id !== user.id && !admin)) return json(401, { detail: 'You do not have permission to access this resource.' });
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: Record<string, unknown> };
      events.push({ chat: m[1]!, message: m[2]!, body });
      const msg = c.chat.history.messages[m[2]!];
      if (msg && body.type === 'files') msg.files = [...((body.data.files as Record<string, unknown>[]) ?? []), ...(msg.files ?? [])];
      return json(200, true);
    }
    if (p === '/api/v1/files/' && req.method === 'POST') {
      const form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body: Buffer.concat(chunks) }).formData();
      const file = form.get('file');
      if (file === null || typeof file === 'string') return json(422, { detail: 'file missing' });
      return json(200, view(addFile(user.id, file.name, Buffer.from(await file.arrayBuffer()), file.type)));
    }
    m = /^\/api\/v1\/files\/([^/]+)(\/content)?$/.exec(p);
    if (m && req.method === 'GET') {
      const f = files.get(decodeURIComponent(m[1]!));
      if (!f || (f.user_id !== user.id && !admin)) return json(404, { detail: 'We could not find what you\'re looking for :/' });
      if (!m[2]) return json(200, view(f));
      res.writeHead(200, { 'Content-Type': f.meta.content_type || 'application/octet-stream', 'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(f.meta.name)}` });
      return res.end(f.bytes);
    }
    json(404, { detail: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens,
    files,
    chats,
    events,
    hits,
    upload(user, name, bytes, contentType) {
      const f = addFile(user, name, bytes, contentType);
      // MessageInput.svelte uploadFileHandler: the entry the frontend puts in the user message's files.
      return { type: 'file', file: view(f), id: f.id, url: f.id, name, collection_name: '', status: 'uploaded', size: bytes.length, error: '', itemId: `item-${f.id}`, content_type: contentType };
    },
    chat(user, chatId, turns) {
      const messages: Record<string, ChatMessage> = {};
      let parent: string | null = null;
      let ids = { user: '', assistant: '' };
      turns.forEach((turnFiles, i) => {
        const u = `u${i + 1}-${chatId}`;
        const a = `a${i + 1}-${chatId}`;
        messages[u] = { id: u, parentId: parent, childrenIds: [a], role: 'user', content: `turn ${i + 1}`, ...(turnFiles.length > 0 ? { files: turnFiles } : {}) };
        messages[a] = { id: a, parentId: u, childrenIds: [], role: 'assistant', content: '' };
        if (parent) messages[parent]!.childrenIds.push(u);
        parent = a;
        ids = { user: u, assistant: a };
      });
      chats.set(chatId, { user_id: user, chat: { title: 'Chat', history: { currentId: ids.assistant, messages } } });
      return ids;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
