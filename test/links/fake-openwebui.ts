/**
 * A fake Open WebUI Files API on loopback (v0.11 shapes): who-am-I, multipart upload with a
 * `metadata` field stored as meta.data, list (the caller's files), get, delete, content.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeFile {
  id: string;
  user_id: string;
  filename: string;
  meta: { name: string; content_type: string; size: number; data: Record<string, unknown> };
  created_at: number;
  bytes: Buffer;
}

export interface FakeFilesApi {
  url: string;
  tokens: Map<string, { id: string; name: string; role?: string }>;
  files: Map<string, FakeFile>;
  /** Query strings of the uploads received. */
  uploads: string[];
  close(): Promise<void>;
}

export async function fakeFilesApi(): Promise<FakeFilesApi> {
  const tokens = new Map<string, { id: string; name: string; role?: string }>();
  const files = new Map<string, FakeFile>();
  const uploads: string[] = [];
  let next = 1;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const [p, q = ''] = (req.url ?? '').split('?') as [string, string?];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const user = tokens.get(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
    if (!user) return json(401, { detail: 'Not authenticated' });
    const view = (f: FakeFile) => ({ id: f.id, user_id: f.user_id, filename: f.filename, meta: f.meta, created_at: f.created_at });
    if (p === '/api/v1/auths/') return json(200, { id: user.id, name: user.name, email: '', role: user.role ?? 'user' });
    if (p === '/api/v1/files/' && req.method === 'POST') {
      uploads.push(q);
      const form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body: Buffer.concat(chunks) }).formData();
      const file = form.get('file');
      if (file === null || typeof file === 'string') return json(400, { detail: 'file missing' });
      const metaText = form.get('metadata');
      const data = typeof metaText === 'string' ? (JSON.parse(metaText) as Record<string, unknown>) : {};
      const id = `f-${next++}`;
      const bytes = Buffer.from(await file.arrayBuffer());
      const f: FakeFile = { id, user_id: user.id, filename: file.name, meta: { name: file.name, content_type: file.type, size: bytes.length, data }, created_at: 1_700_000_000, bytes };
      files.set(id, f);
      return json(200, view(f));
    }
    if (p === '/api/v1/files/' && req.method === 'GET') return json(200, [...files.values()].filter((f) => f.user_id === user.id || user.role === 'admin').map(view));
    const m = /^\/api\/v1\/files\/([^/]+)(\/content)?$/.exec(p);
    if (m) {
      const f = files.get(decodeURIComponent(m[1]!));
      if (!f || (f.user_id !== user.id && user.role !== 'admin')) return json(404, { detail: 'Not found' });
      if (m[2]) {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        return res.end(f.bytes);
      }
      if (req.method === 'GET') return json(200, view(f));
      if (req.method === 'DELETE') {
        files.delete(f.id);
        return json(200, true);
      }
    }
    json(404, { detail: 'Not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens,
    files,
    uploads,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
