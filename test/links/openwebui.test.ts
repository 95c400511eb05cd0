/** The Open WebUI link backend against a fake Open WebUI Files API: upload, list, delete, markers, owners. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mod } from '../helpers/shed.js';
import { fakeFilesApi, type FakeFilesApi } from './fake-openwebui.js';

let owui: FakeFilesApi;
let base: string;
beforeEach(async () => {
  owui = await fakeFilesApi();
  owui.tokens.set('tok-alice', { id: 'alice', name: 'Alice' });
  owui.tokens.set('tok-bob', { id: 'bob', name: 'Bob' });
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'links-owui-'));
});
afterEach(async () => {
  await owui.close();
  fs.rmSync(base, { recursive: true, force: true });
});

function tools(user: string, token: string | undefined) {
  const t = new mod.Tools({ host: { name: 'test', ...(token ? { openWebUI: { url: owui.url, token } } : {}) } });
  t.valves = { ...t.valves, storage_base_path: base, link_backend: 'openwebui', openwebui_api_url: 'https://chat.example.org/' };
  return async (fn: string, args: Record<string, unknown> = {}) => {
    const method = (t as unknown as Record<string, (a: unknown) => Promise<string>>)[fn]!;
    return JSON.parse(await method.call(t, { ...args, __user__: { id: user, name: user } })) as { success: boolean; data?: any; error?: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads fields
  };
}

describe('link_backend=openwebui', () => {
  it('uploads with the user\'s token and the Fileshed marker, links Open WebUI\'s content URL', async () => {
    const alice = tools('alice', 'tok-alice');
    await alice('shed_create_file', { zone: 'storage', path: 'r/é.txt', content: 'REPORT' });
    const r = await alice('shed_link_create', { zone: 'storage', path: 'r/é.txt' });
    expect(r.success).toBe(true);
    const f = owui.files.get(r.data.link_id)!;
    expect(f.bytes.toString()).toBe('REPORT');
    expect(f.user_id).toBe('alice');
    expect(f.filename).toBe('é.txt');
    expect(f.meta.data).toEqual({ fileshed_link: true, source_zone: 'Storage', source_path: 'r/é.txt' });
    expect(owui.uploads).toEqual(['process=false']);
    expect(r.data.url).toBe(`https://chat.example.org/api/v1/files/${r.data.link_id}/content`);
    expect(r.data.clickable_link).toBe(`[📥 Download é.txt](${r.data.url})`);
    expect(r.data.kind).toBe('file');
    const folder = await alice('shed_link_create', { zone: 'storage', path: 'r' });
    expect(folder.error.code).toBe('NOT_A_FILE');
    expect(folder.error.hint).toContain('shed_zip');
  });

  it('lists and deletes only Fileshed-marked files of the caller; others are refused', async () => {
    const alice = tools('alice', 'tok-alice');
    const bob = tools('bob', 'tok-bob');
    await alice('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'A' });
    const made = (await alice('shed_link_create', { zone: 'storage', path: 'a.txt' })).data;
    // A file uploaded in the chat (no marker) and one of bob's.
    owui.files.set('plain', { id: 'plain', user_id: 'alice', filename: 'chat.pdf', meta: { name: 'chat.pdf', content_type: 'application/pdf', size: 1, data: {} }, created_at: 1, bytes: Buffer.from('x') });
    await bob('shed_create_file', { zone: 'storage', path: 'b.txt', content: 'B' });
    const bobs = (await bob('shed_link_create', { zone: 'storage', path: 'b.txt' })).data;

    const list = await alice('shed_link_list');
    expect(list.data.links).toHaveLength(1);
    expect(list.data.links[0]).toMatchObject({ link_id: made.link_id, zone: 'Storage', path: 'a.txt', kind: 'file', url: made.url });
    expect((await alice('shed_link_delete', { link_id: 'plain' })).error.code).toBe('NOT_A_FILESHED_LINK');
    expect(owui.files.has('plain')).toBe(true);
    // Open WebUI hides bob's file from alice: it is not found for her, and stays.
    expect((await alice('shed_link_delete', { link_id: bobs.link_id })).error.code).toBe('LINK_NOT_FOUND');
    expect(owui.files.has(bobs.link_id)).toBe(true);
    expect((await alice('shed_link_delete', { file_id: made.link_id })).success).toBe(true);
    expect(owui.files.has(made.link_id)).toBe(false);
    expect((await alice('shed_link_list')).data.links).toHaveLength(0);
  });

  it('an admin token that can see other users\' files still cannot delete them', async () => {
    owui.tokens.set('tok-admin', { id: 'root', name: 'Root', role: 'admin' });
    const bob = tools('bob', 'tok-bob');
    await bob('shed_create_file', { zone: 'storage', path: 'b.txt', content: 'B' });
    const bobs = (await bob('shed_link_create', { zone: 'storage', path: 'b.txt' })).data;
    const admin = tools('root', 'tok-admin');
    expect((await admin('shed_link_delete', { link_id: bobs.link_id })).error.code).toBe('ACCESS_DENIED');
    expect((await admin('shed_link_list')).data.links).toHaveLength(0);
    expect(owui.files.has(bobs.link_id)).toBe(true);
  });

  it('a rejected token or an unreachable Open WebUI gives a clear error', async () => {
    const wrong = tools('alice', 'tok-wrong');
    await wrong('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'A' });
    expect((await wrong('shed_link_create', { zone: 'storage', path: 'a.txt' })).error.code).toBe('OPENWEBUI_INSERT_ERROR');
    expect((await wrong('shed_link_list')).error.code).toBe('OPENWEBUI_API_UNAVAILABLE');
    await owui.close();
    const alice = tools('alice', 'tok-alice');
    expect((await alice('shed_link_list')).error.code).toBe('OPENWEBUI_API_UNAVAILABLE');
    owui = await fakeFilesApi();
  });
});
