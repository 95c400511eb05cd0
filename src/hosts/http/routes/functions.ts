/**
 * POST /{function}: the OpenAPI tool server (SPEC 13.1) and the wire contract of the Open WebUI
 * tool file. Order of checks: unknown name 404, method 405, identity 401/400/503, valve headers
 * 403/400, body 413/400; then the call, whose own result is always 200 with the envelope.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AttachedFile } from '../../../index.js';
import { callArguments, callHost } from '../../call.js';
import { checkDecodedField, InvalidUtf8, strictUtf8 } from '../../utf8.js';
import { BodyTimeout, BodyTooLarge, bodyLimit, discardThenClose, readBody } from '../body.js';
import { challenge } from '../identity/index.js';
import { header } from '../identity/types.js';
import { madeImagePaths, readMadeImages, splitDataUri } from '../../chat-images.js';
import { pushImagesToChat, wantsImageBody } from '../chat-display.js';
import { fileById } from '../../openwebui-chat.js';
import { postChatEvent } from '../openwebui.js';
import { sendDetail, sendJson } from '../respond.js';
import type { Route, ServerContext } from '../route.js';

class BadRequest extends Error {}

/** A header carrying base64 of a UTF-8 JSON object (X-Fileshed-Valves, X-Fileshed-User-Valves). */
function base64Object(value: string | undefined, name: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8(Buffer.from(value.trim(), 'base64'), name));
  } catch (err) {
    if (err instanceof InvalidUtf8) throw err;
    throw new BadRequest(`${name} must be base64 of a UTF-8 JSON object.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new BadRequest(`${name} must be base64 of a JSON object, e.g. {"max_output_default": 1000}.`);
  return parsed as Record<string, unknown>;
}

function asObject(text: string, what: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new BadRequest(`${what} is not valid JSON: ${(err as Error).message}. Send a JSON object of the function's parameters, e.g. {"zone": "storage", "path": "notes.txt"}.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadRequest(`${what} must be a JSON object of named parameters; got ${parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : typeof parsed}.`);
  }
  return parsed as Record<string, unknown>;
}

/** JSON body, or multipart/form-data with `arguments` (JSON text) and `files` parts (the uploads). */
async function readCall(req: IncomingMessage, limit: number, idleMs: number): Promise<{ args: Record<string, unknown>; files: AttachedFile[] }> {
  const body = await readBody(req, limit, idleMs);
  const type = header(req.headers, 'content-type') ?? '';
  if (!/^multipart\/form-data/i.test(type)) return { args: asObject(strictUtf8(body, 'The request body'), 'The request body'), files: [] };
  let form: FormData;
  try {
    form = await new Request('http://local/', { method: 'POST', headers: { 'content-type': type }, body: new Blob([new Uint8Array(body.buffer, body.byteOffset, body.length) as Uint8Array<ArrayBuffer>]) }).formData();
  } catch (err) {
    throw new BadRequest(`The multipart body could not be parsed: ${(err as Error).message}.`);
  }
  const argField = form.get('arguments');
  const what = "The multipart field 'arguments'";
  // A text field comes decoded (bad bytes already replaced): check it against the raw body.
  const argText = typeof argField === 'string' ? argField : argField ? strictUtf8(new Uint8Array(await argField.arrayBuffer()), what) : '';
  if (typeof argField === 'string') checkDecodedField(argText, body, what);
  const args = asObject(argText, what);
  const files: AttachedFile[] = [];
  for (const part of form.getAll('files')) {
    if (typeof part === 'string') continue;
    files.push({ name: part.name, bytes: new Uint8Array(await part.arrayBuffer()) });
  }
  return { args, files };
}

async function handle(req: IncomingMessage, res: ServerResponse, match: RegExpExecArray | null, ctx: ServerContext): Promise<void> {
  const name = match?.[1] ?? '';
  if (!ctx.api.has(name)) {
    const near = ctx.api.closestNames(name, ctx.api.functions.map((f) => f.name));
    sendDetail(res, 404, `No function '${name.slice(0, 80)}'. Closest: ${near.join(', ')}. The full list is at /openapi.json.`);
    return;
  }
  if (req.method !== 'POST') {
    sendDetail(res, 405, `${name} is called with POST and a JSON body of its parameters.`, { Allow: 'POST' });
    return;
  }
  const started = performance.now();
  const who = await ctx.identify(req.headers);
  if (!who.ok) {
    sendDetail(res, who.status, who.detail, who.status === 401 ? { 'WWW-Authenticate': challenge(ctx.settings) } : {});
    ctx.log.access({ user: '-', fn: name, ms: performance.now() - started, status: who.status });
    return;
  }
  const { caller } = who;
  let valves = ctx.valves();
  let userValves: Record<string, unknown> | undefined;
  let args: Record<string, unknown>;
  let files: AttachedFile[];
  try {
    const overrides = base64Object(header(req.headers, 'x-fileshed-valves'), 'X-Fileshed-Valves');
    if (overrides !== undefined && caller.mode !== 'api-key') {
      sendDetail(res, 403, 'Valve overrides (X-Fileshed-Valves) need the API key (auth mode api-key); an admin sets valves on the server otherwise.');
      return;
    }
    userValves = base64Object(header(req.headers, 'x-fileshed-user-valves'), 'X-Fileshed-User-Valves');
    // The storage base is the server's, whatever an override says: it decides which disk is served.
    if (overrides) valves = { ...valves, ...overrides, storage_base_path: ctx.storageBase };
    ({ args, files } = await readCall(req, bodyLimit(valves), ctx.settings.limits.bodyIdleTimeoutMs));
  } catch (err) {
    if (err instanceof BodyTooLarge) {
      res.setHeader('Connection', 'close');
      sendDetail(res, 413, `${err.message} It follows the valve max_file_size_mb; write big content in several calls.`);
      discardThenClose(req);
      return;
    }
    if (err instanceof BodyTimeout) {
      res.setHeader('Connection', 'close');
      sendDetail(res, 408, err.message);
      discardThenClose(req);
      return;
    }
    if (err instanceof BadRequest || err instanceof InvalidUtf8) {
      sendDetail(res, 400, err.message);
      return;
    }
    throw err;
  }
  const openwebuiUrl = ctx.openwebuiUrl();
  const chatId = header(req.headers, 'x-openwebui-chat-id');
  const messageId = header(req.headers, 'x-openwebui-message-id');
  const userMessageId = header(req.headers, 'x-openwebui-user-message-id');
  const token = caller.token;
  const fileIds = header(req.headers, 'x-openwebui-file-ids');
  if (token && fileIds) for (const id of fileIds.split(',').map((s) => s.trim()).filter(Boolean).slice(0, 100)) files.push(await fileById(openwebuiUrl, token, id));

  const streaming = /application\/x-ndjson/i.test(header(req.headers, 'accept') ?? '');
  if (streaming) res.writeHead(200, { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  const relay = token && chatId && messageId ? { token, chatId, messageId } : undefined;
  const onStatus = streaming || relay
    ? async (event: { type: 'status'; data: { description: string; done: boolean } }) => {
        if (streaming) res.write(`${JSON.stringify(event)}\n`);
        if (relay) await postChatEvent(openwebuiUrl, relay.token, relay.chatId, relay.messageId, event);
      }
    : undefined;
  // The tool file (the only client asking for NDJSON) forwards the attachments' bytes itself.
  const request = { caller, chatId, messageId, userMessageId, toolFile: streaming, files, userValves, openwebuiUrl, ...(onStatus ? { onStatus } : {}) };
  const callArgs = callArguments(args, request);
  const host = callHost(request);
  let result = await ctx.api.call(name, callArgs, valves, host);
  const envelope = JSON.parse(result) as { success: boolean; error?: { code?: string }; data?: Record<string, unknown> };
  ctx.log.access({ user: caller.user.id, fn: name, ms: performance.now() - started, status: 200, ...(envelope.success ? { success: true } : { success: false, error: envelope.error?.code ?? 'UNKNOWN' }) });
  if (streaming) {
    res.end(`${JSON.stringify({ type: 'result', data: envelope })}\n`);
    return;
  }
  const read = splitDataUri((envelope.data?.image as Record<string, unknown> | undefined)?.data_uri);
  // Pictures into the chat: with the user's session, what a script made and what the model read.
  if (relay) {
    const made = await readMadeImages(ctx.api, callArgs, madeImagePaths(name, envelope), valves, host);
    const shown = [...made, ...(read ? [{ path: String(envelope.data?.path ?? 'image'), ...read }] : [])];
    const ids = shown.length > 0 ? await pushImagesToChat(openwebuiUrl, relay.token, relay.chatId, relay.messageId, shown) : [];
    if (made.length > 0 && envelope.data) {
      envelope.data.images_shown = made.map((m) => m.path);
      envelope.data.images_in_chat = ids.length;
      result = JSON.stringify(envelope, null, 2);
    }
  }
  if (read && wantsImageBody(req.headers, caller.mode, streaming)) {
    // The picture itself, the one form Open WebUI 0.11 hands its model as an image (chat-display.ts).
    const bytes = Buffer.from(read.data, 'base64');
    res.writeHead(200, { 'Content-Type': read.mimeType, 'Content-Length': bytes.length, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'X-Fileshed-Image': 'shed_read' });
    res.end(bytes);
    return;
  }
  sendJson(res, 200, result);
}

export const functionRoutes: Route[] = [{ methods: ['*'], path: /^\/([^/]+)$/, handler: handle }];
