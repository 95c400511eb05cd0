/**
 * GET/HEAD /files/{token}[/{subpath}]: download links (SPEC 13.4). No identity: the signed token
 * is the credential, and the handler re-checks it (and the path, with the valves in force) at every request.
 */
import { handleFilesRequest } from '../files/index.js';
import type { Route, ServerContext } from '../route.js';

export function fileRoutes(ctx: ServerContext): Route[] {
  return [
    {
      // Every method reaches the handler, so even a 405 is its short HTML page.
      methods: ['*'],
      path: /^\/files(\/.*)?$/,
      handler: (req, res) => handleFilesRequest(req, res, { storageBase: ctx.storageBase, valves: ctx.valves }),
    },
  ];
}
