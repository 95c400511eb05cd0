/**
 * GET/HEAD /files/{token}[/{subpath}]: download links (SPEC 13.4). No identity: the signed token
 * is the credential, and the handler re-checks it (and the path) at every request.
 */
import { handleFilesRequest } from '../files/index.js';
import type { Route, ServerContext } from '../route.js';

export function fileRoutes(ctx: ServerContext): Route[] {
  return [
    {
      methods: ['GET', 'HEAD'],
      path: /^\/files(\/.*)?$/,
      handler: (req, res) => handleFilesRequest(req, res, { storageBase: ctx.storageBase }),
    },
  ];
}
