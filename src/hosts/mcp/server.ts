/**
 * The MCP server (SPEC 13.3), one per connection or session: the tool list comes from the registry
 * (name, description, inputSchema = the tool-spec parameters, annotations from the registry's
 * hints); a call runs through the one dispatcher and answers content = the envelope text,
 * structuredContent = the envelope, isError = !success. Status events become progress
 * notifications when the client sent a progress token.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { HostBridge, hostApi as HostApi } from '../../index.js';
import { madeImagePaths, readMadeImages } from '../chat-images.js';
import { callArguments, callHost, type CallRequest } from '../call.js';
import type { Caller } from '../http/identity/index.js';
import type { Logger } from '../http/log.js';

export interface McpOptions {
  api: typeof HostApi;
  version: string;
  valves(): Record<string, unknown>;
  /** The caller of a request (stdio: the one local user; HTTP: from the request's auth info). */
  callerOf(extra: { authInfo?: { extra?: Record<string, unknown> } | undefined }): Caller | undefined;
  /** Conversation and message ids of a request (HTTP: the X-OpenWebUI-* headers). */
  chatOf?(extra: { requestInfo?: { headers?: Record<string, string | string[] | undefined> } | undefined }): { chatId?: string | undefined; messageId?: string | undefined; userMessageId?: string | undefined };
  /** Where Open WebUI is reached for this call (HTTP host: the valve openwebui_api_url). */
  openwebuiUrl?: () => string;
  log?: Logger;
  /** The host bridge of a call (default: the network hosts' callHost). */
  hostFor?(req: CallRequest): HostBridge;
  /** Runs before a call of this function (stdio: starts the link listener before a links function). */
  beforeCall?(name: string): Promise<void>;
}

export function createMcpServer(opts: McpOptions): Server {
  const server = new Server(
    { name: 'fileshed', title: 'Fileshed', version: opts.version },
    {
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions: 'Fileshed: a persistent per-user file workspace. Start with shed_help() to see the zones and functions.',
    },
  );
  const tools = opts.api.functions.map((f) => ({
    name: f.name,
    description: f.description,
    inputSchema: f.parameters as { type: 'object'; properties?: Record<string, object> },
    annotations: { readOnlyHint: f.hints.readOnly, destructiveHint: f.hints.destructive, idempotentHint: f.hints.idempotent, openWorldHint: f.hints.openWorld },
  }));
  // Only the functions the `functions` valves enable for this caller's role.
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const enabled = new Set(opts.api.enabled(opts.valves(), opts.callerOf(extra)?.user.role));
    return { tools: tools.filter((t) => enabled.has(t.name)) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    if (!opts.api.has(name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool '${name}'. Closest: ${opts.api.closestNames(name, tools.map((t) => t.name)).join(', ')}.`);
    }
    const caller = opts.callerOf(extra);
    if (caller === undefined) throw new McpError(ErrorCode.InvalidRequest, 'No authenticated caller for this request.');
    const started = performance.now();
    const token = extra._meta?.progressToken;
    let progress = 0;
    const { chatId, messageId, userMessageId } = opts.chatOf?.(extra) ?? {};
    const req: CallRequest = {
      caller,
      chatId,
      messageId,
      userMessageId,
      ...(opts.openwebuiUrl ? { openwebuiUrl: opts.openwebuiUrl() } : {}),
      ...(token !== undefined
        ? {
            onStatus: async (event) => {
              progress += 1;
              await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message: event.data.description } });
            },
          }
        : {}),
    };
    await opts.beforeCall?.(name);
    const args = callArguments(request.params.arguments ?? {}, req);
    const valves = opts.valves();
    const host = (opts.hostFor ?? callHost)(req);
    const text = await opts.api.call(name, args, valves, host);
    const envelope = JSON.parse(text) as { success: boolean; error?: { code?: string } } & Record<string, unknown>;
    opts.log?.access({ user: caller.user.id, fn: name, ms: performance.now() - started, status: 200, transport: 'mcp', ...(envelope.success ? { success: true } : { success: false, error: envelope.error?.code ?? 'UNKNOWN' }) });
    // Compact text: the same envelope in fewer bytes (the plugin pretty-prints for humans reading JSON).
    const { envelope: shown, image } = imageOf(envelope);
    // Pictures a script made (a chart in files_changed) travel as image content too: Open WebUI
    // 0.11 stores an MCP image result as a chat file and shows it (middleware.py process_tool_result).
    const made = await readMadeImages(opts.api, args, madeImagePaths(name, envelope), valves, host);
    if (made.length > 0) (shown.data as Record<string, unknown>).images_shown = made.map((m) => m.path);
    return {
      content: [
        { type: 'text' as const, text: JSON.stringify(shown) },
        ...(image ? [{ type: 'image' as const, data: image.data, mimeType: image.mimeType }] : []),
        ...made.map((m) => ({ type: 'image' as const, data: m.data, mimeType: m.mimeType })),
      ],
      structuredContent: shown,
      isError: !envelope.success,
    };
  });
  return server;
}

/**
 * An image a call shows the model (shed_read of a picture: data.image.data_uri) travels as MCP
 * `image` content beside the text, the form every MCP client hands to a multimodal model; the
 * envelope keeps the image's sizes, without the bytes.
 */
export function imageOf(envelope: Record<string, unknown>): { envelope: Record<string, unknown>; image?: { data: string; mimeType: string } } {
  const data = envelope.data as Record<string, unknown> | undefined;
  const image = data?.image as Record<string, unknown> | undefined;
  const uri = typeof image?.data_uri === 'string' ? image.data_uri : undefined;
  const m = uri === undefined ? null : /^data:([\w.+-]+\/[\w.+-]+);base64,/.exec(uri);
  if (m === null || uri === undefined || image === undefined || data === undefined) return { envelope };
  const { data_uri: _bytes, ...sizes } = image;
  return { envelope: { ...envelope, data: { ...data, image: { ...sizes, sent_as: 'MCP image content' } } }, image: { data: uri.slice(m[0].length), mimeType: m[1]! } };
}
