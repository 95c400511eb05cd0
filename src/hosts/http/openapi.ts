/**
 * The OpenAPI 3.1 document, generated from the registry (hostApi.functions) once at start and
 * served from memory: every function is POST /{name} with operationId = name, the request body
 * schema = exactly the function's LLM-facing parameters, the response = the envelope.
 *
 * Two forms. GET /openapi.json is a tool host's (Open WebUI's): its hosts turn every declared
 * parameter of an operation, headers included, into a parameter the model must fill, so it
 * declares none. GET /openapi-client.json is the same document with the request headers a program
 * sends (the user in api-key mode, the conversation) declared as parameters, for generated clients.
 */
import type { HostFunction } from '../../index.js';
import type { AuthMode } from './settings.js';

const ENVELOPE = {
  type: 'object',
  description: 'Every result, success or error, is this envelope with HTTP 200 (the model reads errors).',
  properties: {
    success: { type: 'boolean' },
    data: { type: 'object', additionalProperties: true },
    message: { type: 'string' },
    turn: { type: 'string', description: 'The chat turn (assistant message) of a call that changed files: shed_undo takes it back.' },
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object', additionalProperties: true }, hint: { type: 'string' } },
      required: ['code', 'message'],
    },
  },
  required: ['success'],
};

const DETAIL = { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] };

const header = (name: string, description: string, required = false) => ({ name, in: 'header', required, description, schema: { type: 'string' } });

/** The headers a program calling the functions sends besides its credential. */
function requestHeaders(auth: readonly AuthMode[]): Record<string, unknown>[] {
  const user = auth.includes('api-key')
    ? [
        header('X-OpenWebUI-User-Id', `The user the call is for (1-128 of A-Z a-z 0-9 _ -)${auth.length > 1 ? ', with the API key' : ''}; without it the call is refused (400).`, auth.length === 1),
        header('X-OpenWebUI-User-Name', "The user's display name, percent-encoded (with the API key)."),
        header('X-OpenWebUI-User-Email', "The user's e-mail (with the API key)."),
        header('X-OpenWebUI-User-Role', 'user or admin (with the API key); admin enables the functions_admin profile.'),
      ]
    : [];
  return [
    ...user,
    header('X-OpenWebUI-Chat-Id', 'The conversation: each has its own Uploads folder.'),
    header('X-OpenWebUI-Message-Id', 'The chat message: status events go to it, and the calls sharing it are one turn for shed_undo.'),
  ];
}

export function openApiDocument(functions: readonly HostFunction[], opts: { version: string; serverUrl: string | undefined; auth: readonly AuthMode[]; headers?: boolean }): Record<string, unknown> {
  const schemes: Record<string, unknown> = {};
  if (opts.auth.includes('api-key')) schemes.apiKey = { type: 'http', scheme: 'bearer', description: 'API key of a trusted backend; the user comes in X-OpenWebUI-User-Id.' };
  if (opts.auth.includes('openwebui-session')) schemes.openwebuiSession = { type: 'http', scheme: 'bearer', description: "The user's Open WebUI token (tool server auth \"Session\")." };
  if (opts.auth.includes('openwebui-jwt')) schemes.openwebuiJwt = { type: 'apiKey', in: 'header', name: 'X-OpenWebUI-User-Jwt', description: "Open WebUI's signed user header (FORWARD_USER_INFO_HEADER_JWT_SECRET)." };
  // Each scheme alone is enough; local mode adds the empty requirement (no credential).
  const security = [...Object.keys(schemes).map((k) => ({ [k]: [] })), ...(opts.auth.includes('local') ? [{}] : [])];
  const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Detail' } } } });
  const paths: Record<string, unknown> = {};
  // A picture read answers the picture itself to Open WebUI or to `Accept: image/*` (chat-display.ts).
  const picture = (type: string) => ({ schema: { type: 'string', contentMediaType: type } });
  const readAnswer = {
    description: 'The function ran; read success, data, message or error. A picture comes as itself (image/png or image/jpeg) to Open WebUI or when asked for with Accept: image/*.',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } }, 'image/png': picture('image/png'), 'image/jpeg': picture('image/jpeg') },
  };
  const parameters = opts.headers ? requestHeaders(opts.auth) : undefined;
  for (const fn of functions) {
    paths[`/${fn.name}`] = {
      post: {
        operationId: fn.name,
        summary: fn.description.split(/(?<=\.)\s/)[0],
        description: fn.description,
        ...(parameters ? { parameters } : {}),
        requestBody: { required: true, content: { 'application/json': { schema: fn.parameters } } },
        responses: {
          '200': fn.name === 'shed_read' ? readAnswer : { description: 'The function ran; read success, data, message or error.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } },
          '400': error('The body is not a JSON object.'),
          '401': error('Missing or invalid credentials.'),
          '413': error('The body is over the size limit.'),
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Fileshed', version: opts.version, license: { name: 'MIT', identifier: 'MIT' }, description: 'Persistent per-user file workspace for LLMs: personal zones (Uploads, Storage, Documents with history), group spaces, commands, SQLite, archives.' },
    // Only an address the admin vouched for (--public-url); else '/', the server the document came
    // from (a bind address like 0.0.0.0 is no URL to call).
    servers: [opts.serverUrl ? { url: opts.serverUrl, description: 'The public URL of this server (--public-url).' } : { url: '/', description: 'The server this document was read from.' }],
    paths,
    components: { schemas: { Envelope: ENVELOPE, Detail: DETAIL }, ...(Object.keys(schemes).length > 0 ? { securitySchemes: schemes } : {}) },
    security,
  };
}
