/** Small answer helpers: every transport error is JSON `{"detail": "..."}` (FastAPI's shape, as Open WebUI expects). */
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store', ...headers });
  res.end(text);
}

export function sendDetail(res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { detail }, headers);
}
