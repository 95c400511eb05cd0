/**
 * A bare node:http server on loopback that mounts the /files handler the way `fileshed serve` does
 * (used until the real server mounts it, and for the handler's own tests), plus a fetch helper
 * that never follows redirects.
 */
import http, { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleFilesRequest, type FilesOptions } from '../../src/hosts/http/files/index.js';

export interface FilesServer {
  url: string;
  close(): Promise<void>;
}

export async function startFilesServer(opts: FilesOptions): Promise<FilesServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path.startsWith('/files/')) {
      void handleFilesRequest(req, res, opts);
      return;
    }
    // Stands in for the server's own pages (the admin page shares the origin).
    res.setHeader('Set-Cookie', 'fileshed_admin=secret-session; Path=/; SameSite=Lax');
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end('<!doctype html><title>admin</title><p id="secret">ADMIN-SECRET-CONTENT</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Replaces the public_url part of a link with the test server's address. */
export function onServer(server: FilesServer, url: string): string {
  return url.replace(/^https?:\/\/[^/]+/, server.url);
}

export function get(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { redirect: 'manual', ...init });
}

/** A request whose path is sent exactly as given (fetch would normalise '.' and '..' away first). */
export function rawGet(base: string, rawPath: string, method = 'GET'): Promise<{ status: number; body: Buffer; headers: import('node:http').IncomingHttpHeaders }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path: rawPath, method, insecureHTTPParser: true }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
