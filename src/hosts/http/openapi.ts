/**
 * The OpenAPI 3.1 document, generated from the registry (hostApi.functions) once at start and
 * served from memory: every function is POST /{name} with operationId = name, the request body
 * schema = exactly the function's LLM-facing parameters, the response = the envelope.
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
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object', additionalProperties: true }, hint: { type: 'string' } },
      required: ['code', 'message'],
    },
  },
  required: ['success'],
};

const DETAIL = { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] };

export function openApiDocument(functions: readonly HostFunction[], opts: { version: string; serverUrl: string | undefined; auth: readonly AuthMode[] }): Record<string, unknown> {
  const schemes: Record<string, unknown> = {};
  if (opts.auth.includes('api-key')) schemes.apiKey = { type: 'http', scheme: 'bearer', description: 'API key of a trusted backend; the user comes in X-OpenWebUI-User-Id.' };
  if (opts.auth.includes('openwebui-session')) schemes.openwebuiSession = { type: 'http', scheme: 'bearer', description: "The user's Open WebUI token (tool server auth \"Session\")." };
  if (opts.auth.includes('openwebui-jwt')) schemes.openwebuiJwt = { type: 'apiKey', in: 'header', name: 'X-OpenWebUI-User-Jwt', description: "Open WebUI's signed user header (FORWARD_USER_INFO_HEADER_JWT_SECRET)." };
  // Each scheme alone is enough; local mode adds the empty requirement (no credential).
  const security = [...Object.keys(schemes).map((k) => ({ [k]: [] })), ...(opts.auth.includes('local') ? [{}] : [])];
  const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Detail' } } } });
  const paths: Record<string, unknown> = {};
  for (const fn of functions) {
    paths[`/${fn.name}`] = {
      post: {
        operationId: fn.name,
        summary: fn.description.split(/(?<=\.)\s/)[0],
        description: fn.description,
        requestBody: { required: true, content: { 'application/json': { schema: fn.parameters } } },
        responses: {
          '200': { description: 'The function ran; read success, data, message or error.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } },
          '400': error('The body is not a JSON object.'),
          '401': error('Missing or invalid credentials.'),
          '413': error('The body is over the size limit.'),
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Fileshed', version: opts.version, description: 'Persistent per-user file workspace for LLMs: personal zones (Uploads, Storage, Documents with history), group spaces, commands, SQLite, archives.' },
    // Only an address the admin vouched for (--public-url): a bind address like 0.0.0.0 is no URL to
    // call, and without `servers` clients use the URL they fetched the document from.
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    paths,
    components: { schemas: { Envelope: ENVELOPE, Detail: DETAIL }, ...(Object.keys(schemes).length > 0 ? { securitySchemes: schemes } : {}) },
    security,
  };
}
