/**
 * What Open WebUI's native OpenAPI connection shows: pictures to the model and into the chat.
 *
 * Pictures to the model (SPEC 7): Open WebUI 0.11 hands a tool server's answer to its model as an
 * image only when it is a bare `data:image/...` string; a response of `Content-Type: image/*` is
 * turned into exactly that (utils/tools.py execute_tool_server: `response.json()` fails, the bytes
 * become `data:{content_type};base64,...`), then utils/middleware.py process_tool_result moves it to
 * the result's files ({type: "image", url}) which the tool loop gives the model as an image part.
 * A JSON object holding base64 reaches the model as text. So a shed_read of a picture answers the
 * image itself to a client that asks for it (`Accept` naming image/) or that is Open WebUI's native
 * connection (an Open WebUI identity or X-OpenWebUI-Chat-Id / -Message-Id header), unless it
 * asks for JSON only (`Accept: application/json`) or is the tool file (NDJSON). Everyone else keeps
 * the JSON envelope.
 *
 * Pictures into the chat: with the user's own token the server uploads a picture a script made to
 * Open WebUI (POST /api/v1/files/?process=false, routers/files.py upload_file) and pushes a `files`
 * event to the assistant message (POST /api/v1/chats/{chat}/messages/{message}/event, routers/chats.py
 * send_chat_message_event_by_id → socket/main.py get_event_emitter, which appends `data.files` to
 * the stored message's files and shows them live), the shape its own MCP image results take
 * ({type: "image", url: "/api/v1/files/{id}/content"}).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatImage } from '../chat-images.js';
import { header } from './identity/types.js';
import { postChatEvent } from './openwebui.js';

export function wantsImageBody(headers: IncomingHttpHeaders, mode: string, toolFile: boolean): boolean {
  if (toolFile) return false;
  const accept = (header(headers, 'accept') ?? '').toLowerCase();
  if (/\bimage\/(\*|[\w.+-]+)/.test(accept)) return true;
  if (/application\/json/.test(accept) && !accept.includes('*/*')) return false;
  const openWebUI = mode === 'openwebui-session' || mode === 'openwebui-jwt' || header(headers, 'x-openwebui-chat-id') !== undefined || header(headers, 'x-openwebui-message-id') !== undefined;
  return openWebUI;
}

/** Uploads each picture with the user's token and shows them on the assistant message; returns the Open WebUI file ids. */
export async function pushImagesToChat(baseUrl: string, token: string, chatId: string, messageId: string, images: ChatImage[]): Promise<string[]> {
  const files: { type: 'image'; url: string; name: string }[] = [];
  for (const image of images) {
    try {
      const form = new FormData();
      const name = image.path.split('/').pop() ?? 'image.png';
      form.append('file', new Blob([Buffer.from(image.data, 'base64')], { type: image.mimeType }), name);
      const res = await fetch(`${baseUrl}/api/v1/files/?process=false`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: form, signal: AbortSignal.timeout(30_000) });
      if (!res.ok) continue;
      const body = (await res.json()) as { id?: unknown };
      if (typeof body.id === 'string') files.push({ type: 'image', url: `/api/v1/files/${encodeURIComponent(body.id)}/content`, name });
    } catch {
      // The chat display is a courtesy: the call's answer already names the file.
    }
  }
  if (files.length > 0) await postChatEvent(baseUrl, token, chatId, messageId, { type: 'files', data: { files } });
  return files.map((f) => decodeURIComponent(f.url.split('/')[4]!));
}
