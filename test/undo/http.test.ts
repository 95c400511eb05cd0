/**
 * Over HTTP, the turn is Open WebUI's assistant message id (header X-OpenWebUI-Message-Id): two
 * calls of one answer are one turn, named in each answer, and undone together.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, serve, type Served } from '../hosts/helpers.js';

describe('turns over HTTP', () => {
  let s: Served;
  const headers = (message: string) => ({ Authorization: 'Bearer k1', 'X-OpenWebUI-User-Id': 'ana', 'X-OpenWebUI-Chat-Id': 'chat1', 'X-OpenWebUI-Message-Id': message });
  const call = async (fn: string, body: unknown, message: string) => json(await s.post(fn, body, headers(message)));

  beforeAll(async () => {
    s = await serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off']);
  });
  afterAll(async () => {
    await s.stop();
    fs.rmSync(s.base, { recursive: true, force: true });
  });

  it('the message id groups calls into one turn, which one shed_undo takes back', async () => {
    const a = await call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a' }, 'msg-1');
    const b = await call('shed_create_file', { zone: 'documents', path: 'b.md', content: 'b' }, 'msg-1');
    expect([a.turn, b.turn]).toEqual(['msg-1', 'msg-1']);
    const u = await call('shed_undo', { apply: true }, 'msg-2');
    expect(u).toMatchObject({ success: true, turn: 'msg-2', data: { undoes: 'msg-1', applied: true } });
    const home = path.join(s.base, 'users', 'ana');
    expect(fs.existsSync(path.join(home, 'Storage', 'data', 'a.txt'))).toBe(false);
    expect(fs.existsSync(path.join(home, 'Documents', 'data', 'b.md'))).toBe(false);
  });
});
