/**
 * Files in and out of an Open WebUI chat over the native connections (issue 32, items 1-3), with
 * `fileshed serve` (dist/) in session mode against a fake Open WebUI whose endpoints follow Open
 * WebUI 0.11's source (fake-openwebui-chat.ts names each function):
 * - attachments come from the chat itself: GET /api/v1/chats/{id} → chat.history.messages[<the
 *   parentId of X-OpenWebUI-Message-Id>].files[].id; names from GET /api/v1/files/{id}; bytes from
 *   /content (the fake keeps no local path, like object storage); a second user cannot read them;
 * - a picture read over OpenAPI answers Content-Type image/* for Open WebUI (utils/tools.py
 *   execute_tool_server turns it into the `data:image/` string utils/middleware.py
 *   process_tool_result hands the model as an image), the JSON envelope for everyone else;
 * - a chart a script made reaches the chat: uploaded with the user's token and shown by a `files`
 *   event (routers/chats.py send_chat_message_event_by_id); over MCP as `image` content.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, serve, type Served } from '../hosts/helpers.js';
import { makePng } from '../helpers/documents.mjs';
import { fakeChatOwui, type FakeChatOwui } from './fake-openwebui-chat.js';

const KEY = 'chat-files-key-0123456789';
let owui: FakeChatOwui;
let s: Served;

beforeAll(async () => {
  owui = await fakeChatOwui();
  owui.tokens.set('tok-alice', { id: 'alice', name: 'Alice' });
  owui.tokens.set('tok-bob', { id: 'bob', name: 'Bob' });
  s = await serve(['--auth', 'openwebui-session,api-key', '--api-key', KEY, '--openwebui-url', owui.url, '--access-log', 'off', '--valve', 'allow_python=true']);
});
afterAll(async () => {
  await s.stop();
  await owui.close();
  fs.rmSync(s.base, { recursive: true, force: true });
});

const session = (token: string, chat?: string, message?: string, extra: Record<string, string> = {}) => ({
  Authorization: `Bearer ${token}`,
  ...(chat ? { 'X-OpenWebUI-Chat-Id': chat } : {}),
  ...(message ? { 'X-OpenWebUI-Message-Id': message } : {}),
  ...extra,
});
/** Uploads are per conversation: users/{user}/Uploads/{chat id}/. */
const uploads = (user: string, chat: string, rel: string) => path.join(s.base, 'users', user, 'Uploads', chat, rel);

describe('attachments from the chat itself (session mode)', () => {
  it('imports the current message\'s files under their real names; a duplicate name gets a suffix', async () => {
    const report = owui.upload('alice', 'report.pdf', Buffer.from('%PDF-1.4 fake bytes\n'), 'application/pdf');
    const dupA = owui.upload('alice', 'data.csv', Buffer.from('a,b\n1,2\n'), 'text/csv');
    const dupB = owui.upload('alice', 'data.csv', Buffer.from('a,b\n3,4\n'), 'text/csv');
    const { assistant } = owui.chat('alice', 'chat-a', [[report, dupA, dupB]]);
    const r = await json(await s.post('shed_import', { import_all: true }, session('tok-alice', 'chat-a', assistant)));
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(r.data.imported.map((f: { path: string }) => f.path)).toEqual(['report.pdf', 'data.csv', 'data-2.csv']);
    expect(fs.readFileSync(uploads('alice', 'chat-a', 'report.pdf'), 'utf8')).toBe('%PDF-1.4 fake bytes\n');
    expect(fs.readFileSync(uploads('alice', 'chat-a', 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
    expect(fs.readFileSync(uploads('alice', 'chat-a', 'data-2.csv'), 'utf8')).toBe('a,b\n3,4\n');
    // Read through the API: the chat, each file's metadata and content.
    expect(owui.hits).toContain('GET /api/v1/chats/chat-a');
    expect(owui.hits).toContain(`GET /api/v1/files/${report.id as string}/content`);
  });

  it('one file by name; earlier messages only on request; {{USER_MESSAGE_ID}} also names the turn', async () => {
    const old = owui.upload('alice', 'old.txt', Buffer.from('old\n'), 'text/plain');
    const now = owui.upload('alice', 'now.txt', Buffer.from('now\n'), 'text/plain');
    const { user, assistant } = owui.chat('alice', 'chat-b', [[old], [now]]);
    const one = await json(await s.post('shed_import', { filename: 'now.txt', dest_subdir: 'b1' }, session('tok-alice', 'chat-b', assistant)));
    expect(one.data.imported.map((f: { path: string }) => f.path)).toEqual(['b1/now.txt']);
    const missing = await json(await s.post('shed_import', { filename: 'old.txt' }, session('tok-alice', 'chat-b', assistant)));
    expect(missing.error.code).toBe('FILE_NOT_FOUND');
    const all = await json(await s.post('shed_import', { import_all: true, earlier_messages: true, dest_subdir: 'b2' }, session('tok-alice', 'chat-b', assistant)));
    expect(all.data.imported.map((f: { path: string }) => f.path)).toEqual(['b2/now.txt', 'b2/old.txt']);
    const byUser = await json(await s.post('shed_import', { import_all: true, dest_subdir: 'b3' }, session('tok-alice', 'chat-b', undefined, { 'X-OpenWebUI-User-Message-Id': user })));
    expect(byUser.data.imported.map((f: { path: string }) => f.path)).toEqual(['b3/now.txt']);
    // A message id the chat does not hold: the chat's current turn (history.currentId).
    const unknown = await json(await s.post('shed_import', { import_all: true, dest_subdir: 'b4' }, session('tok-alice', 'chat-b', 'not-a-message')));
    expect(unknown.data.imported.map((f: { path: string }) => f.path)).toEqual(['b4/now.txt']);
  });

  it('a message without files says so and offers the earlier ones, never "ask the user to attach"', async () => {
    const early = owui.upload('alice', 'early.txt', Buffer.from('e\n'), 'text/plain');
    const { assistant } = owui.chat('alice', 'chat-c', [[early], []]);
    const r = await json(await s.post('shed_import', { import_all: true }, session('tok-alice', 'chat-c', assistant)));
    expect(r.error.code).toBe('FILE_NOT_FOUND');
    expect(r.error.hint).toMatch(/earlier_messages=true/);
  });

  it('another user\'s chat is refused by Open WebUI (the user\'s own token): nothing is imported', async () => {
    const secret = owui.upload('alice', 'secret.txt', Buffer.from('alice only\n'), 'text/plain');
    const { assistant } = owui.chat('alice', 'chat-d', [[secret]]);
    const r = await json(await s.post('shed_import', { import_all: true }, session('tok-bob', 'chat-d', assistant)));
    expect(r.success).toBe(false);
    expect(r.error.message).toMatch(/refused.*HTTP 401.*own chats/);
    expect(fs.existsSync(uploads('bob', 'chat-d', 'secret.txt'))).toBe(false);
  });

  it('without the chat id header, or on a connection without a session, the error names the admin\'s fix', async () => {
    const noChat = await json(await s.post('shed_import', { import_all: true }, session('tok-alice')));
    expect(noChat.error.hint).toMatch(/X-OpenWebUI-Chat-Id: \{\{CHAT_ID\}\}/);
    expect(noChat.error.hint).not.toMatch(/Ask the user to attach/i);
    const key = await json(await s.post('shed_import', { import_all: true }, { Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': 'carol', 'X-OpenWebUI-Chat-Id': 'chat-a' }));
    expect(key.error.hint).toMatch(/Auth to "Session"/);
    expect(key.error.hint).not.toMatch(/Ask the user to attach/i);
    expect(key.error.message).not.toMatch(/No files are attached/);
    // A temporary chat keeps its files in the browser: no tool server can read them, and it says so.
    const temporary = await json(await s.post('shed_import', { import_all: true }, session('tok-alice', 'local:abc', 'm1')));
    expect(temporary.error.hint).toMatch(/temporary chat/);
    expect(owui.hits).not.toContain('GET /api/v1/chats/local:abc');
  });

  it('a file named by X-OpenWebUI-File-Ids comes in under its real name, not its id', async () => {
    const f = owui.upload('alice', 'by id.txt', Buffer.from('by id\n'), 'text/plain');
    const r = await json(await s.post('shed_import', { import_all: true, dest_subdir: 'ids' }, session('tok-alice', 'chat-ids', undefined, { 'X-OpenWebUI-File-Ids': f.id as string })));
    expect(r.data.imported.map((x: { path: string }) => x.path)).toEqual(['ids/by id.txt']);
    expect(fs.readFileSync(uploads('alice', 'chat-ids', 'ids/by id.txt'), 'utf8')).toBe('by id\n');
  });

  it('the files an MCP connection (Streamable HTTP, session) imports come from the chat too', async () => {
    const f = owui.upload('alice', 'via-mcp.txt', Buffer.from('mcp\n'), 'text/plain');
    const { assistant } = owui.chat('alice', 'chat-e', [[f]]);
    const client = new Client({ name: 'owui', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: session('tok-alice', 'chat-e', assistant) } }));
    try {
      const r = (await client.callTool({ name: 'shed_import', arguments: { import_all: true, dest_subdir: 'mcp' } })) as unknown as { structuredContent: { success: boolean } };
      expect(r.structuredContent.success, JSON.stringify(r)).toBe(true);
      expect(fs.readFileSync(uploads('alice', 'chat-e', 'mcp/via-mcp.txt'), 'utf8')).toBe('mcp\n');
    } finally {
      await client.close();
    }
  });
});

describe('pictures to the model over OpenAPI', () => {
  it('Open WebUI gets the image itself (Content-Type image/png); other clients keep the JSON envelope', async () => {
    const put = await json(await s.post('shed_patch_bytes', { zone: 'storage', path: 'pic.png', content: (makePng(40, 30) as Buffer).toString('hex'), content_format: 'hex', overwrite: true }, session('tok-alice')));
    expect(put.success, JSON.stringify(put)).toBe(true);
    const owuiRead = await s.post('shed_read', { zone: 'storage', path: 'pic.png' }, session('tok-alice', 'chat-a'));
    expect(owuiRead.status).toBe(200);
    expect(owuiRead.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await owuiRead.arrayBuffer());
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    // Asked for JSON, or not Open WebUI (the API key without chat headers): the envelope.
    const asJson = await s.post('shed_read', { zone: 'storage', path: 'pic.png' }, session('tok-alice', 'chat-a', undefined, { Accept: 'application/json' }));
    expect((await json(asJson)).data.image.data_uri).toMatch(/^data:image\/png;base64,/);
    const other = await s.post('shed_read', { zone: 'storage', path: 'pic.png' }, { Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': 'alice' });
    expect(other.headers.get('content-type')).toMatch(/^application\/json/);
    // Any client may ask for the picture.
    const asked = await s.post('shed_read', { zone: 'storage', path: 'pic.png' }, { Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': 'alice', Accept: 'image/*' });
    expect(asked.headers.get('content-type')).toBe('image/png');
    // Every other result stays JSON for Open WebUI too.
    const text = await s.post('shed_tree', { zone: 'storage' }, session('tok-alice', 'chat-a'));
    expect(text.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe('pictures a script makes reach the chat', () => {
  const chart = "import struct, zlib\nw,h=8,6\nraw=b''.join(b'\\x00'+b'\\xff\\x00\\x00'*w for _ in range(h))\nc=lambda t,d: struct.pack('>I',len(d))+t+d+struct.pack('>I',zlib.crc32(t+d))\nopen('chart.png','wb').write(b'\\x89PNG\\r\\n\\x1a\\n'+c(b'IHDR',struct.pack('>IIBBBBB',w,h,8,2,0,0,0))+c(b'IDAT',zlib.compress(raw))+c(b'IEND',b''))\nprint('saved')\n";

  it('over OpenAPI in session mode: uploaded with the user\'s token and shown on the assistant message', async () => {
    const { assistant } = owui.chat('alice', 'chat-f', [[]]);
    const before = owui.files.size;
    const r = await json(await s.post('shed_run_python', { zone: 'documents', code: chart }, session('tok-alice', 'chat-f', assistant)));
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(r.data.files_changed).toContain('chart.png');
    expect(r.data.images_shown).toEqual(['chart.png']);
    expect(owui.files.size).toBe(before + 1);
    const event = owui.events.find((e) => e.chat === 'chat-f');
    expect(event?.message).toBe(assistant);
    expect(event?.body.type).toBe('files');
    const shown = (event!.body.data.files as { type: string; url: string }[])[0]!;
    expect(shown.type).toBe('image');
    const id = /^\/api\/v1\/files\/([^/]+)\/content$/.exec(shown.url)?.[1];
    expect(owui.files.get(id!)?.user_id).toBe('alice');
    expect(owui.files.get(id!)?.bytes.subarray(1, 4).toString()).toBe('PNG');
    // What Open WebUI stored: the picture is in the assistant message's files.
    expect(owui.chats.get('chat-f')!.chat.history.messages[assistant]!.files?.[0]).toMatchObject({ type: 'image', url: shown.url });
    // Its link is one click away, and a Markdown image the chat renders inline (any connection).
    const link = await json(await s.post('shed_link_create', { zone: 'documents', path: 'chart.png' }, session('tok-alice')));
    expect(link.data.image_markdown).toBe(`![chart.png](${link.data.url})`);
    expect(link.message).toContain(link.data.image_markdown);
    const served = await fetch(link.data.url);
    expect(served.headers.get('content-type')).toMatch(/^image\/png/);
    expect(served.headers.get('content-disposition')).toMatch(/^inline/);
  });

  it('over MCP: the chart is image content beside the envelope', async () => {
    const client = new Client({ name: 'owui', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: session('tok-alice') } }));
    try {
      const r = (await client.callTool({ name: 'shed_run_python', arguments: { zone: 'storage', code: chart.replace('chart.png', 'mcp-chart.png') } })) as unknown as { content: { type: string; mimeType?: string; data?: string }[] };
      const image = r.content.find((c) => c.type === 'image');
      expect(image?.mimeType, JSON.stringify(r.content[0])).toBe('image/png');
      expect(Buffer.from(image!.data!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    } finally {
      await client.close();
    }
  });
});
