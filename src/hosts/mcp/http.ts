/**
 * POST/GET/DELETE /mcp: MCP Streamable HTTP with the server's identity rules. Every request is
 * identified from its own headers (as the functions are); a session is bound to the user who
 * opened it, so another user cannot ride on a session id. Idle sessions are closed after an hour.
 *
 * Behind a load balancer a session's next request may reach another instance. Session ids are
 * signed (`{uuid}.{HMAC of owner and uuid}`, key derived from the link-signing secret that every
 * instance shares), so an instance that does not know a session can still tell that this caller
 * opened it on one of the instances: it then serves the request statelessly (a fresh server for
 * that one request; nothing else lives in a session), and the client never sees its session lost.
 * A session id that is not signed for the caller gets 404, as an unknown one always did.
 */
import crypto, { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { BodyTimeout, BodyTooLarge, bodyLimit, discardThenClose, readBody } from '../http/body.js';
import { challenge, type Caller } from '../http/identity/index.js';
import { header } from '../http/identity/types.js';
import { sendJson } from '../http/respond.js';
import type { Route, ServerContext } from '../http/route.js';
import { InvalidUtf8, strictUtf8 } from '../utf8.js';
import { createMcpServer } from './server.js';

const IDLE_MS = 60 * 60 * 1000;
const MAX_SESSIONS = 1000;

interface Session {
  transport: StreamableHTTPServerTransport;
  owner: string;
  seen: number;
}

export function mcpRoutes(ctx: ServerContext): { routes: Route[]; sessions(): number; closeAll(): Promise<void> } {
  const sessions = new Map<string, Session>();
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const s of sessions.values()) if (now - s.seen > IDLE_MS) void s.transport.close();
  }, 60_000);
  sweep.unref();

  const ownerOf = (c: Caller) => `${c.mode}:${c.user.id}`;
  const sessionKey = crypto.createHmac('sha256', ctx.settings.linkSecret).update('fileshed mcp session ids').digest();
  const sign = (owner: string, id: string) => crypto.createHmac('sha256', sessionKey).update(`${owner}\n${id}`).digest('base64url').slice(0, 32);
  const newSessionId = (owner: string) => {
    const id = randomUUID();
    return `${id}.${sign(owner, id)}`;
  };
  const signedFor = (sessionId: string, owner: string) => {
    const dot = sessionId.indexOf('.');
    if (dot < 0) return false;
    const want = Buffer.from(sign(owner, sessionId.slice(0, dot)));
    const got = Buffer.from(sessionId.slice(dot + 1));
    return got.length === want.length && crypto.timingSafeEqual(got, want);
  };
  const serverFor = () =>
    createMcpServer({
      api: ctx.api,
      version: ctx.version,
      valves: ctx.valves,
      openwebuiUrl: ctx.openwebuiUrl,
      log: ctx.log,
      callerOf: (extra) => extra.authInfo?.extra?.caller as Caller | undefined,
      chatOf: (extra) => {
        const h = extra.requestInfo?.headers ?? {};
        return { chatId: header(h, 'x-openwebui-chat-id'), messageId: header(h, 'x-openwebui-message-id'), userMessageId: header(h, 'x-openwebui-user-message-id') };
      },
    });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const who = await ctx.identify(req.headers);
    if (!who.ok) {
      // A JSON-RPC error, which MCP clients show (the SDK client: "Error POSTing to endpoint: ..."),
      // saying what to send; the challenge names no OAuth resource metadata: this server has no OAuth.
      sendJsonRpcError(res, who.status, who.detail, -32000, who.status === 401 ? { 'WWW-Authenticate': challenge(ctx.settings) } : {});
      return;
    }
    const authed = req as IncomingMessage & { auth?: { token: string; clientId: string; scopes: string[]; extra: Record<string, unknown> } };
    authed.auth = { token: '', clientId: who.caller.user.id, scopes: [], extra: { caller: who.caller } };
    const sessionId = header(req.headers, 'mcp-session-id');
    // POST bodies are read here, not by the SDK (whose decoder replaces bytes that are not UTF-8
    // with U+FFFD): the server's body limit and slow-body timeout apply, and bad bytes are refused.
    const body = req.method === 'POST' ? await readJsonRpc(req, res) : { parsed: undefined };
    if (body === undefined) return;
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (session === undefined) {
        if (signedFor(sessionId, ownerOf(who.caller))) {
          // Opened by this caller on another instance (or before a restart): served statelessly.
          const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
          const server = serverFor();
          res.on('close', () => void transport.close().finally(() => void server.close()));
          await server.connect(transport);
          await transport.handleRequest(authed, res, body.parsed);
          return;
        }
        sendJsonRpcError(res, 404, 'Session not found (expired or closed): initialize a new one.');
        return;
      }
      if (session.owner !== ownerOf(who.caller)) {
        sendJsonRpcError(res, 403, 'This MCP session belongs to another user.');
        return;
      }
      session.seen = Date.now();
      await session.transport.handleRequest(authed, res, body.parsed);
      return;
    }
    if (req.method !== 'POST') {
      sendJsonRpcError(res, 400, 'Missing Mcp-Session-Id header: send initialize first (POST).');
      return;
    }
    // A new session: the transport checks that the body is an initialize request.
    if (sessions.size >= MAX_SESSIONS) {
      const oldest = [...sessions.values()].sort((a, b) => a.seen - b.seen)[0];
      await oldest?.transport.close();
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => newSessionId(ownerOf(who.caller)),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, owner: ownerOf(who.caller), seen: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const server = serverFor();
    await server.connect(transport);
    await transport.handleRequest(authed, res, body.parsed);
  }

  /** The parsed JSON-RPC body, or undefined once an error was answered. */
  async function readJsonRpc(req: IncomingMessage, res: ServerResponse): Promise<{ parsed: unknown } | undefined> {
    let text: string;
    try {
      text = strictUtf8(await readBody(req, bodyLimit(ctx.valves()), ctx.settings.limits.bodyIdleTimeoutMs), 'The request body');
    } catch (err) {
      if (err instanceof InvalidUtf8) {
        sendJsonRpcError(res, 400, `Parse error: ${err.message}`, -32700);
        return undefined;
      }
      if (!(err instanceof BodyTooLarge || err instanceof BodyTimeout)) throw err;
      res.setHeader('Connection', 'close');
      sendJsonRpcError(res, err instanceof BodyTooLarge ? 413 : 408, err instanceof BodyTooLarge ? `${err.message} It follows the valve max_file_size_mb.` : err.message);
      discardThenClose(req);
      return undefined;
    }
    try {
      return { parsed: JSON.parse(text) as unknown };
    } catch {
      sendJsonRpcError(res, 400, 'Parse error: Invalid JSON', -32700);
      return undefined;
    }
  }

  /**
   * OAuth discovery and endpoints that MCP clients with OAuth support try after a 401 (the SDK:
   * /.well-known/*, then /register): this server has no OAuth, and the error, in OAuth's shape so
   * such clients show it, says what to send instead.
   */
  async function noOAuth(_req: IncomingMessage, res: ServerResponse): Promise<void> {
    const anonymous = await ctx.identify({});
    const how = anonymous.ok ? 'No credential is needed here (auth mode local).' : anonymous.detail;
    sendJson(res, 404, { error: 'invalid_request', error_description: `This server does not use OAuth. ${how}` });
  }

  return {
    routes: [
      { methods: ['GET', 'POST', 'DELETE'], path: '/mcp', handler: handle },
      { methods: ['*'], path: /^\/(?:\.well-known\/(?:oauth-protected-resource|oauth-authorization-server|openid-configuration)(?:\/.*)?|register|authorize|token)$/, handler: noOAuth },
    ],
    sessions: () => sessions.size,
    async closeAll() {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.transport.close()));
    },
  };
}

function sendJsonRpcError(res: ServerResponse, status: number, message: string, code = -32000, headers: Record<string, string> = {}): void {
  const text = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(text);
}


