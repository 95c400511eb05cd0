/**
 * The identity matrix (SPEC 13.2) against a real server and a fake Open WebUI: api-key,
 * openwebui-session (verified, cached, refused, unreachable), openwebui-jwt (valid, forged,
 * expired, wrong secret, no exp), several modes at once; two users isolated; the conversation
 * header selects Uploads; the tool-file wire contract (valve headers, multipart attachments);
 * Open WebUI REST providers (groups, file content, chat events).
 */
import fs from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenValue, post as postForm, signIn } from '../admin/admin-helpers.js';
import { b64, fakeOpenWebUI, json, serve, type FakeOpenWebUI, type Served } from './helpers.js';

const KEY = 'test-key-0123456789';
const JWT_SECRET = 'jwt-secret-for-tests';
let owui: FakeOpenWebUI;
let s: Served;

beforeAll(async () => {
  owui = await fakeOpenWebUI();
  owui.tokens.set('tok-alice', { id: 'alice', name: 'Alice', email: 'alice@example.com' });
  owui.tokens.set('tok-bob', { id: 'bob', name: 'Bob' });
  owui.groups.push({ id: 'team', name: 'Team', user_ids: ['alice'] }, { id: 'other', name: 'Other', user_ids: ['bob'] });
  owui.files.set('file-1', { owner: 'alice', bytes: Buffer.from('from open webui\n') });
  s = await serve(['--auth', 'api-key,openwebui-session,openwebui-jwt', '--api-key', KEY, '--jwt-secret', JWT_SECRET, '--openwebui-url', owui.url, '--access-log', 'access.log']);
});
afterAll(async () => {
  await s.stop();
  await owui.close();
});

const asKey = (user: string, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': user, ...extra });
const jwt = (claims: Record<string, unknown>, secret = JWT_SECRET, exp: number | null = Math.floor(Date.now() / 1000) + 300) => {
  const t = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (exp !== null) t.setExpirationTime(exp);
  return t.sign(new TextEncoder().encode(secret));
};
const storage = (user: string, rel: string) => path.join(s.base, 'users', user, 'Storage', 'data', rel);

describe('api-key mode', () => {
  it('accepts the key and takes the user from X-OpenWebUI-User-Id (name percent-decoded)', async () => {
    const r = await json(await s.post('shed_create_file', { zone: 'storage', path: 'k.txt', content: 'k' }, asKey('carol', { 'X-OpenWebUI-User-Name': 'Ca%C3%AFrol%20D' })));
    expect(r.success).toBe(true);
    expect(fs.existsSync(storage('carol', 'k.txt'))).toBe(true);
  });

  it('401 with WWW-Authenticate for a wrong key, no credential, or an empty bearer', async () => {
    const cases: Record<string, string>[] = [{ Authorization: `Bearer ${KEY}x`, 'X-OpenWebUI-User-Id': 'carol' }, {}, { Authorization: 'Bearer ', 'X-OpenWebUI-User-Id': 'carol' }];
    for (const headers of cases) {
      const r = await s.post('shed_stats', {}, headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/realm="fileshed"/);
      expect((await json(r)).detail).toBeTruthy();
    }
  });

  it('400 when the user header is missing', async () => {
    const r = await s.post('shed_stats', {}, { Authorization: `Bearer ${KEY}` });
    expect(r.status).toBe(400);
    expect((await json(r)).detail).toMatch(/X-OpenWebUI-User-Id/);
  });

  it('isolates two users', async () => {
    await s.post('shed_create_file', { zone: 'storage', path: 'mine.txt', content: 'dave only' }, asKey('dave'));
    const other = await json(await s.post('shed_read', { zone: 'storage', path: 'mine.txt' }, asKey('erin')));
    expect(other.success).toBe(false);
    expect(other.error.code).toBe('FILE_NOT_FOUND');
    const own = await json(await s.post('shed_read', { zone: 'storage', path: 'mine.txt' }, asKey('dave')));
    expect(JSON.stringify(own.data)).toContain('dave only');
  });

  it('X-OpenWebUI-Chat-Id selects the Uploads folder of that conversation', async () => {
    const form = new FormData();
    form.set('arguments', JSON.stringify({ import_all: true }));
    form.append('files', new Blob([Buffer.from('a,b\n1,2\n')]), 'data.csv');
    const r = await json(await fetch(`${s.url}/shed_import`, { method: 'POST', headers: asKey('frank', { 'X-OpenWebUI-Chat-Id': 'chat-7' }), body: form }));
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(fs.readFileSync(path.join(s.base, 'users', 'frank', 'Uploads', 'chat-7', 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
    const inChat = await json(await s.post('shed_tree', { zone: 'uploads' }, asKey('frank', { 'X-OpenWebUI-Chat-Id': 'chat-7' })));
    expect(inChat.data.tree).toContain('data.csv');
    const elsewhere = await json(await s.post('shed_tree', { zone: 'uploads' }, asKey('frank', { 'X-OpenWebUI-Chat-Id': 'chat-8' })));
    expect(elsewhere.data.tree).not.toContain('data.csv');
  });

  it('multipart attachments obey max_file_size_mb per file; the others are imported', async () => {
    const form = new FormData();
    form.set('arguments', JSON.stringify({ import_all: true }));
    form.append('files', new Blob([Buffer.alloc(1024 * 1024 + 1, 97)]), 'big.bin');
    form.append('files', new Blob([Buffer.from('small')]), '../../escape.txt');
    const r = await json(await fetch(`${s.url}/shed_import`, { method: 'POST', headers: asKey('gina', { 'X-OpenWebUI-Chat-Id': 'c1', 'X-Fileshed-Valves': b64({ max_file_size_mb: 1 }) }), body: form }));
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(r.data.errors.map((e: { code: string }) => e.code)).toEqual(['FILE_TOO_LARGE']);
    expect(r.data.imported.map((f: { name: string }) => f.name)).toEqual(['escape.txt']);
    expect(fs.existsSync(path.join(s.base, 'users', 'gina', 'escape.txt'))).toBe(false);
  });

  it('X-Fileshed-Valves overrides valves; an invalid one is the INVALID_VALVES envelope; storage_base_path stays', async () => {
    const ok = await json(await s.post('shed_parameters', {}, asKey('carol', { 'X-Fileshed-Valves': b64({ max_output_default: 1234, storage_base_path: '/etc' }) })));
    expect(JSON.stringify(ok)).toContain('1234');
    expect(JSON.stringify(ok)).not.toContain('"/etc"');
    const bad = await s.post('shed_stats', {}, asKey('carol', { 'X-Fileshed-Valves': b64({ quota_per_user_mb: 'lots' }) }));
    expect(bad.status).toBe(200);
    const body = await json(bad);
    expect(body.error.code).toBe('INVALID_VALVES');
    expect(body.error.message).toContain('quota_per_user_mb');
    expect((await s.post('shed_stats', {}, asKey('carol', { 'X-Fileshed-Valves': 'not base64 json' }))).status).toBe(400);
  });
});

describe('openwebui-session mode', () => {
  it('verifies the token with Open WebUI and caches the answer', async () => {
    const before = owui.hits['/api/v1/auths/'] ?? 0;
    for (let i = 0; i < 3; i++) {
      const r = await json(await s.post('shed_create_file', { zone: 'storage', path: `s${i}.txt`, content: 's' }, { Authorization: 'Bearer tok-alice' }));
      expect(r.success, JSON.stringify(r)).toBe(true);
    }
    expect(fs.existsSync(storage('alice', 's2.txt'))).toBe(true);
    expect((owui.hits['/api/v1/auths/'] ?? 0) - before).toBe(1);
  });

  it('401 for a token Open WebUI refuses', async () => {
    const r = await s.post('shed_stats', {}, { Authorization: 'Bearer tok-unknown' });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBeTruthy();
  });

  it('refuses valve overrides outside api-key mode (403); user valves are accepted', async () => {
    const r = await s.post('shed_stats', {}, { Authorization: 'Bearer tok-alice', 'X-Fileshed-Valves': b64({ max_output_default: 5 }) });
    expect(r.status).toBe(403);
    expect((await json(r)).detail).toMatch(/API key/);
    const u = await s.post('shed_stats', {}, { Authorization: 'Bearer tok-alice', 'X-Fileshed-User-Valves': b64({ encryption_key: '' }) });
    expect(u.status).toBe(200);
  });

  it("uses the user's token for group membership (GET /api/v1/groups/)", async () => {
    const list = await json(await s.post('shed_group_list', {}, { Authorization: 'Bearer tok-alice' }));
    expect(list.success, JSON.stringify(list)).toBe(true);
    expect(JSON.stringify(list.data)).toContain('team');
    expect(JSON.stringify(list.data)).not.toContain('"other"');
    const write = await json(await s.post('shed_create_file', { zone: 'group', group: 'team', path: 'g.txt', content: 'g' }, { Authorization: 'Bearer tok-alice' }));
    expect(write.success, JSON.stringify(write)).toBe(true);
    const refused = await json(await s.post('shed_create_file', { zone: 'group', group: 'team', path: 'h.txt', content: 'h' }, { Authorization: 'Bearer tok-bob' }));
    expect(refused.success).toBe(false);
  });

  it('imports an Open WebUI file by id with the user\'s token; another user cannot', async () => {
    const r = await json(await s.post('shed_import', { import_all: true }, { Authorization: 'Bearer tok-alice', 'X-OpenWebUI-Chat-Id': 'c9', 'X-OpenWebUI-File-Ids': 'file-1' }));
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(fs.readFileSync(path.join(s.base, 'users', 'alice', 'Uploads', 'c9', 'file-1'), 'utf8')).toBe('from open webui\n');
    const bob = await json(await s.post('shed_import', { import_all: true }, { Authorization: 'Bearer tok-bob', 'X-OpenWebUI-Chat-Id': 'c9', 'X-OpenWebUI-File-Ids': 'file-1' }));
    expect(bob.success).toBe(false);
  });

  it('relays status events to the chat message with the user\'s token', async () => {
    await s.post('shed_zip', { zone: 'storage', src: 's0.txt', dest: 's.zip' }, { Authorization: 'Bearer tok-alice' });
    const before = owui.events.length;
    await s.post('shed_unzip', { zone: 'storage', src: 's.zip', dest: 'unz' }, { Authorization: 'Bearer tok-alice', 'X-OpenWebUI-Chat-Id': 'chat-1', 'X-OpenWebUI-Message-Id': 'msg-1' });
    const events = owui.events.slice(before);
    expect(events.length).toBeGreaterThan(0);
    expect(events[0]).toMatchObject({ chat: 'chat-1', message: 'msg-1', token: 'tok-alice', body: { type: 'status' } });
  });

  it('503 saying so when Open WebUI is unreachable', async () => {
    const t = await serve(['--auth', 'openwebui-session', '--openwebui-url', 'http://127.0.0.1:9', '--access-log', 'off']);
    const r = await t.post('shed_stats', {}, { Authorization: 'Bearer tok-alice' });
    expect(r.status).toBe(503);
    expect((await json(r)).detail).toMatch(/unreachable/);
    await t.stop();
  });
});

describe('openwebui-jwt mode', () => {
  it('accepts a valid HS256 token: claims give the user', async () => {
    const token = await jwt({ sub: 'jwtuser', name: 'J', role: 'user', email: 'j@example.com' });
    const r = await json(await s.post('shed_create_file', { zone: 'storage', path: 'j.txt', content: 'j' }, { 'X-OpenWebUI-User-Jwt': token }));
    expect(r.success).toBe(true);
    expect(fs.existsSync(storage('jwtuser', 'j.txt'))).toBe(true);
  });

  it('401 for forged, expired, wrong-secret, unsigned and exp-less tokens', async () => {
    const valid = await jwt({ sub: 'jwtuser' });
    const [h, p] = valid.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ sub: 'admin', exp: Math.floor(Date.now() / 1000) + 300 })).toString('base64url');
    const cases: Record<string, string> = {
      forged: `${h}.${forgedPayload}.${valid.split('.')[2]}`,
      expired: await jwt({ sub: 'jwtuser' }, JWT_SECRET, Math.floor(Date.now() / 1000) - 10),
      wrongSecret: await jwt({ sub: 'jwtuser' }, 'another-secret'),
      noExp: await jwt({ sub: 'jwtuser' }, JWT_SECRET, null),
      algNone: `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`,
      garbage: 'not-a-jwt',
    };
    for (const [name, token] of Object.entries(cases)) {
      const r = await s.post('shed_stats', {}, { 'X-OpenWebUI-User-Jwt': token });
      expect(r.status, name).toBe(401);
      expect(r.headers.get('www-authenticate'), name).toBeTruthy();
    }
    expect(fs.existsSync(path.join(s.base, 'users', 'admin'))).toBe(false);
  });
});

describe('local mode', () => {
  it('ignores user headers: the --user identity, role admin', async () => {
    const t = await serve(['--user', 'owner', '--access-log', 'off']);
    const r = await json(await t.post('shed_create_file', { zone: 'storage', path: 'l.txt', content: 'l' }, { 'X-OpenWebUI-User-Id': 'intruder' }));
    expect(r.success).toBe(true);
    expect(fs.existsSync(path.join(t.base, 'users', 'owner', 'Storage', 'data', 'l.txt'))).toBe(true);
    expect(fs.existsSync(path.join(t.base, 'users', 'intruder'))).toBe(false);
    await t.stop();
  });
});

describe('secrets stay out of the log', () => {
  it('never writes a token or key to the access log or stderr', () => {
    const logged = fs.readFileSync(path.join(s.base, 'access.log'), 'utf8') + s.stderr();
    for (const secret of [KEY, 'tok-alice', 'tok-bob', JWT_SECRET]) expect(logged).not.toContain(secret);
  });
});

describe('the Open WebUI URL is one setting: --openwebui-url is the default of the valve openwebui_api_url', () => {
  it('session verification follows the valve saved through the admin page, without a restart', async () => {
    // Nothing listens at the flag's URL: sessions cannot be verified until the admin points the valve at Open WebUI.
    const srv = await serve(['--auth', 'api-key,openwebui-session', '--api-key', KEY, '--openwebui-url', 'http://127.0.0.1:9', '--access-log', 'off']);
    try {
      const before = await srv.post('shed_stats', {}, { Authorization: 'Bearer tok-alice' });
      expect(before.status).toBe(503);
      expect((await json(before)).detail).toContain('openwebui_api_url');
      const params = await json(await srv.post('shed_parameters', {}, asKey('root', { 'X-OpenWebUI-User-Role': 'admin' })));
      expect(JSON.stringify(params)).toContain('http://127.0.0.1:9');

      const admin = await signIn(srv.url, KEY);
      const saved = await postForm(srv.url, '/admin/valves', admin, { _csrf: admin.csrf, _version: hiddenValue(admin.page, '_version'), openwebui_api_url: owui.url });
      expect(saved.status).toBe(303);

      const hits = owui.hits['/api/v1/auths/'] ?? 0;
      const after = await json(await srv.post('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a' }, { Authorization: 'Bearer tok-alice' }));
      expect(after.success, JSON.stringify(after)).toBe(true);
      expect(owui.hits['/api/v1/auths/']).toBe(hits + 1);
      expect(fs.readFileSync(path.join(srv.base, 'users', 'alice', 'Storage', 'data', 'a.txt'), 'utf8')).toBe('a');
    } finally {
      await srv.stop();
    }
  });
});
