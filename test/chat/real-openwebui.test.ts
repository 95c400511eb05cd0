/**
 * The whole flow against the REAL Open WebUI 0.11 backend (/work/shared/tools/openwebui-real, set up
 * in OWUI_REAL_DIR, default /tmp/owui-real): a user attaches a CSV in a chat, the (scripted) model
 * calls Fileshed over the native OpenAPI connection in session mode → shed_import → shed_run_python
 * draws a chart → shed_link_create; the chart must be in the assistant message Open WebUI stored,
 * and the link in its answer. A second user cannot import the first one's attachment. Skips with the
 * reason when the backend is not set up (CI has no Open WebUI mirror).
 *
 * Driven only through Open WebUI's own API: routers/auths.py signup, routers/configs.py
 * set_tool_servers_config (auth_type "session", custom headers with {{CHAT_ID}} / {{MESSAGE_ID}},
 * utils/headers.py get_custom_headers), routers/files.py upload_file, routers/chats.py
 * create_new_chat / get_chat_by_id, main.py chat_completion (chat_id + id + session_id: a background
 * task that stores its result in the chat).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type Served } from '../hosts/helpers.js';
import { makePng } from '../helpers/documents.mjs';

const DIR = process.env.OWUI_REAL_DIR ?? '/tmp/owui-real';
const TOOLS = process.env.OWUI_REAL_TOOLS ?? '/work/shared/tools/openwebui-real';
const ready = fs.existsSync(path.join(DIR, 'venv', 'bin', 'python')) && fs.existsSync(path.join(TOOLS, 'start.py'));
const why = ready ? '' : `the real Open WebUI backend is not set up (${DIR}/venv from ${TOOLS}/setup.sh)`;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

interface Owui {
  url: string;
  model: string;
  logs: string;
  pgids: number[];
}

async function startOwui(toolUrl: string): Promise<Owui> {
  const child = spawn('python3', [path.join(TOOLS, 'start.py'), '--dir', DIR, '--tool-url', toolUrl, '--detach'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  const get = (k: string) => new RegExp(`^${k}=(.*)$`, 'm').exec(out)?.[1]?.trim();
  if (code !== 0 || !get('OPEN_WEBUI')) throw new Error(`start.py failed (${code}): ${out} ${err}`);
  return { url: get('OPEN_WEBUI')!, model: get('FAKE_MODEL')!, logs: get('LOGS')!, pgids: (get('PGIDS') ?? '').split(/\s+/).filter(Boolean).map(Number) };
}

async function api(base: string, token: string, method: string, p: string, body?: unknown): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- Open WebUI's answers
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body instanceof FormData || body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: body instanceof FormData ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status}: ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : null;
}

describe.skipIf(!ready)(`the real Open WebUI 0.11 backend${why ? ` (skipped: ${why})` : ''}`, () => {
  let s: Served;
  let owui: Owui;
  let admin: string;
  let alice: string;
  let bob: string;
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    const port = await freePort();
    const t0 = performance.now();
    owui = await startOwui(`http://127.0.0.1:${port}`);
    figures.owui_start_ms = Math.round(performance.now() - t0);
    s = await serve(['--port', String(port), '--auth', 'openwebui-session', '--openwebui-url', owui.url, '--access-log', 'off', '--valve', 'allow_python=true']);
    // The first sign-up is the admin; the admin adds the users (routers/auths.py add_user, role "user").
    const user = (name: string) => ({ name, email: `${name.toLowerCase()}@example.com`, password: 'pw-123456-Aa!' });
    admin = (await api(owui.url, '', 'POST', '/api/v1/auths/signup', user('Admin'))).token as string;
    alice = (await api(owui.url, admin, 'POST', '/api/v1/auths/add', { ...user('Alice'), role: 'user' })).token as string;
    bob = (await api(owui.url, admin, 'POST', '/api/v1/auths/add', { ...user('Bob'), role: 'user' })).token as string;
    // The README's connection: native OpenAPI, auth Session, the chat and message headers.
    const proxy = fs.readFileSync(path.join(owui.logs, '..', 'logs', 'fakes.out'), 'utf8');
    const proxyPort = /proxy=(\d+)/.exec(proxy)?.[1];
    await api(owui.url, admin, 'POST', '/api/v1/configs/tool_servers', {
      TOOL_SERVER_CONNECTIONS: [
        {
          url: `http://127.0.0.1:${proxyPort}`,
          path: 'openapi.json',
          type: 'openapi',
          auth_type: 'session',
          key: '',
          headers: { 'X-OpenWebUI-Chat-Id': '{{CHAT_ID}}', 'X-OpenWebUI-Message-Id': '{{MESSAGE_ID}}' },
          // utils/access_control has_connection_access: no grants = admins only; "*" = every user.
          config: { enable: true, access_grants: [{ principal_type: 'user', principal_id: '*', permission: 'read' }] },
          info: { id: 'fileshed', name: 'Fileshed', description: 'files' },
        },
        {
          // The same server over MCP (Streamable HTTP), same auth and headers (utils/middleware.py
          // connect_mcp_server; tools are named {server_id}_{name}).
          url: `http://127.0.0.1:${proxyPort}/mcp`,
          path: '',
          type: 'mcp',
          auth_type: 'session',
          key: '',
          headers: { 'X-OpenWebUI-Chat-Id': '{{CHAT_ID}}', 'X-OpenWebUI-Message-Id': '{{MESSAGE_ID}}' },
          config: { enable: true, access_grants: [{ principal_type: 'user', principal_id: '*', permission: 'read' }] },
          info: { id: 'fsmcp', name: 'Fileshed MCP', description: 'files' },
        },
      ],
    });
  }, 240_000);

  afterAll(async () => {
    await s?.stop();
    for (const pgid of owui?.pgids ?? []) {
      try {
        process.kill(-pgid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    if (Object.keys(figures).length > 0) console.log(`real Open WebUI figures: ${JSON.stringify(figures)}`);
  });

  /** One chat turn as the frontend sends it; waits until the assistant message is done. */
  async function turn(token: string, fileItems: unknown[], steps: unknown[], final: string, tick?: () => Promise<void>, toolIds: string[] = ['server:fileshed']): Promise<{ chatId: string; assistant: any; user: any; ms: number }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- stored messages
    await fetch(`${owui.model}/script`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ steps, final }) });
    const u = crypto.randomUUID();
    const a = crypto.randomUUID();
    const now = Math.floor(Date.now() / 1000);
    const userMsg = { id: u, parentId: null, childrenIds: [a], role: 'user', content: 'Plot the attached sales by region.', files: fileItems, timestamp: now, models: ['fake-model'] };
    const t0 = performance.now();
    // A new chat as 0.11's frontend starts it (Chat.svelte sendMessageSocket): no chat_id, parent_id
    // null, the user message with its files, the assistant message id; main.py chat_completion
    // creates the chat and runs the turn as a background task that stores its result.
    const started = await api(owui.url, token, 'POST', '/api/chat/completions', {
      stream: true,
      model: 'fake-model',
      messages: [{ role: 'user', content: userMsg.content }],
      params: {},
      files: fileItems,
      tool_ids: toolIds,
      session_id: 'no-socket-session',
      id: a,
      parent_id: null,
      user_message: userMsg,
      background_tasks: {},
    });
    const chat = { id: started.chat_id as string };
    for (let i = 0; i < 240; i++) {
      const stored = await api(owui.url, token, 'GET', `/api/v1/chats/${chat.id}`);
      const m = stored.chat.history.messages[a];
      if (m?.done === true) return { chatId: chat.id, assistant: m, user: stored.chat.history.messages[u], ms: Math.round(performance.now() - t0) };
      await tick?.();
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error('the turn did not finish within 120 s');
  }

  async function attach(token: string, name: string, bytes: Buffer, type: string): Promise<Record<string, unknown>> {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(bytes)], { type }), name);
    const f = await api(owui.url, token, 'POST', '/api/v1/files/?process=false', form);
    // MessageInput.svelte uploadFileHandler: the item the frontend keeps in the user message's files.
    return { type: 'file', file: f, id: f.id, url: f.id, name, collection_name: '', status: 'uploaded', size: bytes.length, error: '', itemId: crypto.randomUUID(), content_type: type };
  }

  it('attach → import → script → chart in the chat → link', async () => {
    const csv = ['region,amount', ...Array.from({ length: 60 }, (_, i) => `${['North', 'South', 'East'][i % 3]},${(i * 2.5).toFixed(1)}`)].join('\n') + '\n';
    const item = await attach(alice, 'sales 2024.csv', Buffer.from(csv), 'text/csv');
    const code = [
      'import csv, collections',
      'import matplotlib; matplotlib.use("Agg")',
      'import matplotlib.pyplot as plt',
      't = collections.Counter()',
      'for r in csv.DictReader(open("sales 2024.csv")): t[r["region"]] += float(r["amount"])',
      'plt.bar(list(t), list(t.values())); plt.savefig("chart.png", dpi=60)',
      'print(dict(t))',
    ].join('\n');
    const r = await turn(
      alice,
      [item],
      [
        { tool: 'shed_import', args: { import_all: true } },
        { tool: 'shed_move_uploads_to_storage', args: { src: 'sales 2024.csv', dest: 'sales 2024.csv' } },
        { tool: 'shed_run_python', args: { zone: 'storage', code } },
        { tool: 'shed_link_create', args: { zone: 'storage', path: 'chart.png' } },
      ],
      'Here is your chart.',
    );
    figures.turn_ms = r.ms;
    const tool = fs.readFileSync(path.join(owui.logs, 'tool.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { path: string; status: number; headers: Record<string, string>; answer: string });
    const calls = tool.filter((c) => c.path !== '/openapi.json');
    figures.tool_calls = calls.map((c) => `${c.path} ${c.status}`);
    const answer = (p: string) => JSON.parse(calls.find((c) => c.path === p)!.answer) as { success: boolean; data: Record<string, any>; message: string }; // eslint-disable-line @typescript-eslint/no-explicit-any -- envelopes
    // What Open WebUI sent: the user's own token and the chat and message ids.
    expect(calls[0]!.headers['X-OpenWebUI-Chat-Id'] ?? calls[0]!.headers['x-openwebui-chat-id']).toBe(r.chatId);
    const imported = answer('/shed_import');
    expect(imported.success, JSON.stringify(imported)).toBe(true);
    expect(imported.data.imported[0].path).toBe('sales 2024.csv');
    const ran = answer('/shed_run_python');
    expect(ran.success, JSON.stringify(ran)).toBe(true);
    expect(ran.data.images_shown).toEqual(['chart.png']);
    expect(ran.data.images_in_chat).toBe(1);
    const link = answer('/shed_link_create');
    expect(link.success).toBe(true);
    // What Open WebUI stored in the chat: the chart among the assistant message's files.
    figures.stored_assistant_files = r.assistant.files;
    figures.stored_content = String(r.assistant.content).slice(0, 300);
    const images = ((r.assistant.files ?? []) as { type: string; url: string }[]).filter((f) => f.type === 'image');
    expect(images.length, JSON.stringify(r.assistant)).toBe(1);
    const id = /\/api\/v1\/files\/([^/]+)\/content/.exec(images[0]!.url)?.[1];
    const png = Buffer.from(await (await fetch(`${owui.url}/api/v1/files/${id}/content`, { headers: { Authorization: `Bearer ${alice}` } })).arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // The link works (fileshed serve's own link page).
    const linked = await fetch(link.data.url as string);
    expect(linked.status).toBe(200);
    expect(link.data.image_markdown).toBe(`![chart.png](${link.data.url})`);
    figures.link = link.data.url;

    // Bob cannot read Alice's chat: the import through his session is refused by Open WebUI.
    const leak = await fetch(`${s.url}/shed_import`, { method: 'POST', headers: { Authorization: `Bearer ${bob}`, 'Content-Type': 'application/json', 'X-OpenWebUI-Chat-Id': r.chatId, 'X-OpenWebUI-Message-Id': r.assistant.id }, body: JSON.stringify({ import_all: true }) });
    const refused = (await leak.json()) as { success: boolean; error: { message: string } };
    expect(refused.success).toBe(false);
    expect(refused.error.message).toMatch(/refused/);
    figures.bob_sees = refused.error.message;
  }, 240_000);

  it('a picture read over OpenAPI reaches the model as an image', async () => {
    // The picture itself (Content-Type image/png) becomes, in utils/middleware.py process_tool_result,
    // a tool text "shed_read: Image file read successfully." plus a user message with an image_url part.
    // The scripted model restarts its script after that new user message, so the script is emptied
    // once the image has been sent (the model then answers its final text).
    await fetch(`${s.url}/shed_patch_bytes`, { method: 'POST', headers: { Authorization: `Bearer ${alice}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ zone: 'storage', path: 'seen.png', content: SMALL_PNG, content_format: 'base64', overwrite: true }) });
    const llmLog = path.join(owui.logs, 'llm.jsonl');
    const before = fs.readFileSync(llmLog, 'utf8').length;
    const sent = () => fs.readFileSync(llmLog, 'utf8').slice(before);
    const r = await turn(alice, [], [{ tool: 'shed_read', args: { zone: 'storage', path: 'seen.png' } }], 'I see a picture.', async () => {
      if (/"image_url"/.test(sent())) await fetch(`${owui.model}/script`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ steps: [] }) });
    });
    const requests = sent().trim().split('\n').map((l) => JSON.parse(l) as { body: { tools?: unknown[]; messages: { role: string; content: unknown }[] } });
    const withImage = requests.find((q) => JSON.stringify(q.body.messages).includes('"image_url"'))!;
    expect(withImage, 'no model request carried the image').toBeDefined();
    const text = JSON.stringify(withImage.body.messages);
    expect(text).toMatch(/"image_url":\{"url":"data:image\/png;base64,/);
    expect(text).toContain('shed_read: Image file read successfully.');
    expect(text).not.toMatch(/data_uri/);
    figures.read_turn_ms = r.ms;
    // The picture the model read is shown in the chat too (session mode: a files event).
    const shown = ((r.assistant.files ?? []) as { type: string; name?: string }[]).filter((f) => f.type === 'image');
    expect(shown.map((f) => f.name)).toContain('seen.png');
    figures.read_stored_files = r.assistant.files;
  }, 240_000);

  it('over MCP: the chat\'s attachment is imported and the chart a script makes is stored in the message', async () => {
    const item = await attach(alice, 'mcp data.csv', Buffer.from('x,y\n1,2\n'), 'text/csv');
    const code = 'import struct, zlib\nw,h=8,6\nraw=b"".join(b"\\x00"+b"\\x00\\x80\\xff"*w for _ in range(h))\nc=lambda t,d: struct.pack(">I",len(d))+t+d+struct.pack(">I",zlib.crc32(t+d))\nopen("mcp-chart.png","wb").write(b"\\x89PNG\\r\\n\\x1a\\n"+c(b"IHDR",struct.pack(">IIBBBBB",w,h,8,2,0,0,0))+c(b"IDAT",zlib.compress(raw))+c(b"IEND",b""))\n';
    const r = await turn(alice, [item], [{ tool: 'shed_import', args: { import_all: true, dest_subdir: 'mcp' } }, { tool: 'shed_run_python', args: { zone: 'storage', code } }], 'Done over MCP.', undefined, ['server:mcp:fsmcp']);
    figures.mcp_turn_ms = r.ms;
    figures.mcp_stored_files = r.assistant.files;
    const mcpCalls = fs.readFileSync(path.join(owui.logs, 'tool.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { path: string; body: string; answer: string }).filter((c) => c.path === '/mcp' && c.body.includes('tools/call'));
    figures.mcp_tool_calls = mcpCalls.length;
    const importAnswer = mcpCalls.find((c) => c.body.includes('shed_import'))?.answer ?? '';
    expect(importAnswer).toContain('mcp data.csv');
    expect(importAnswer).toContain('\\"success\\":true');
    // Native function calling stores an MCP image result with the tool call's output item
    // (middleware.py: function_call_output.files, uploaded by get_file_url_from_base64), where the
    // chat shows it; nothing is pushed by Fileshed over MCP.
    const outputFiles = ((r.assistant.output ?? []) as { type: string; files?: { type: string; url: string }[] }[]).flatMap((o) => (o.type === 'function_call_output' ? (o.files ?? []) : []));
    figures.mcp_stored_output_files = outputFiles;
    const images = outputFiles.filter((f) => f.type === 'image' && /^\/api\/v1\/files\/[^/]+\/content/.test(f.url));
    expect(images.length, JSON.stringify(r.assistant.output)).toBeGreaterThanOrEqual(1);
  }, 240_000);
});

const SMALL_PNG = (makePng(24, 16) as Buffer).toString('base64');
