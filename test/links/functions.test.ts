/** shed_link_create / shed_link_list / shed_link_delete (standalone backend): records, ranges, aliases, owners, groups. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { mod } from '../helpers/shed.js';
import { groupShed } from '../groups/setup.js';

let s: Awaited<ReturnType<typeof groupShed>>;
beforeEach(async () => {
  s = await groupShed({ public_url: 'https://files.example.org/' });
});
afterEach(() => s.cleanup());

function put(rel: string, content = 'hello'): void {
  const p = s.zonePath('storage', rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

describe('shed_link_create', () => {
  it('links a file: id, signed URL under public_url, Markdown link, kind, ISO expiry 24 h by default', async () => {
    put('report.pdf');
    const before = Date.now();
    const r = await s.call('shed_link_create', { zone: 'storage', path: 'report.pdf' });
    expect(r.success).toBe(true);
    const d = r.data!;
    expect(d.kind).toBe('file');
    expect(d.link_id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(d.url).toMatch(new RegExp(`^https://files\\.example\\.org/files/${d.link_id}\\.[A-Za-z0-9_-]{43}$`));
    expect(d.clickable_link).toBe(`[📥 Download report.pdf](${d.url})`);
    const hours = (Date.parse(d.expires_at) - before) / 3600e3;
    expect(hours).toBeGreaterThan(23.99);
    expect(hours).toBeLessThan(24.01);
    expect(new Date(d.expires_at).toISOString()).toBe(d.expires_at);
    expect(r.message).toContain('fileshed serve');
    // The database holds the id, never the token's signature.
    const db = fs.readFileSync(path.join(s.base, 'access_auth.sqlite'));
    expect(db.includes(Buffer.from(d.url.split('.').at(-1)!))).toBe(false);
    expect(db.includes(Buffer.from(d.link_id))).toBe(true);
  });

  it('links a folder (URL ends with /) and the zone root with path "."', async () => {
    put('dir/a.txt');
    const f = await s.call('shed_link_create', { zone: 'storage', path: 'dir' });
    expect(f.data!.kind).toBe('folder');
    expect(f.data!.url.endsWith('/')).toBe(true);
    expect(f.data!.clickable_link).toContain('📂 Open dir');
    const root = await s.call('shed_link_create', { zone: 'storage', path: '.' });
    expect(root.data!.kind).toBe('folder');
  });

  it('accepts fractional hours up to link_max_hours and refuses (never clamps) the rest with the range', async () => {
    put('a.txt');
    const ok = await s.call('shed_link_create', { zone: 'storage', path: 'a.txt', expires_hours: 0.5 });
    expect(ok.success).toBe(true);
    expect(Math.round((Date.parse(ok.data!.expires_at) - Date.now()) / 60e3)).toBe(30);
    expect((await s.call('shed_link_create', { zone: 'storage', path: 'a.txt', expires_hours: 168 })).success).toBe(true);
    for (const bad of [0, -1, 168.5, 1000]) {
      const r = await s.call('shed_link_create', { zone: 'storage', path: 'a.txt', expires_hours: bad });
      expect(r.error!.code, String(bad)).toBe('INVALID_PARAMETER');
      expect(r.error!.message).toContain('at most 168');
      expect(r.error!.details).toMatchObject({ parameter: 'expires_hours', received: bad });
      expect(r.error!.hint).toContain('shed_link_create(');
    }
    expect((await s.call('shed_link_list')).data!.count).toBe(2);
    s.tools.valves = { ...s.tools.valves, link_max_hours: 2, link_default_hours: 1 };
    expect((await s.call('shed_link_create', { zone: 'storage', path: 'a.txt', expires_hours: 3 })).error!.message).toContain('at most 2');
  });

  it('missing file → FILE_NOT_FOUND; escape and zone prefix refused; the history is out of reach', async () => {
    expect((await s.call('shed_link_create', { zone: 'storage', path: 'nope.txt' })).error!.code).toBe('FILE_NOT_FOUND');
    expect((await s.call('shed_link_create', { zone: 'storage', path: '../../x' })).error!.code).toBe('PATH_ESCAPE');
    expect((await s.call('shed_link_create', { zone: 'storage', path: 'storage/x' })).error!.code).toBe('PATH_STARTS_WITH_ZONE');
    await s.call('shed_create_file', { zone: 'documents', path: 'd.md', content: '# d' });
    expect((await s.call('shed_link_create', { zone: 'documents', path: '.git/config' })).error!.code).toBe('FILE_NOT_FOUND');
    expect((await s.call('shed_link_create', { zone: 'documents', path: '../git/config' })).error!.code).toBe('PATH_ESCAPE');
    fs.symlinkSync('/etc/passwd', s.zonePath('storage', 'out'));
    expect((await s.call('shed_link_create', { zone: 'storage', path: 'out' })).error!.code).toBe('PATH_ESCAPE');
    expect((await s.call('shed_link_list')).data!.count).toBe(0);
  });

  it('works in every zone, groups with membership checked', async () => {
    fs.mkdirSync(s.zonePath('uploads'), { recursive: true });
    fs.writeFileSync(s.zonePath('uploads', 'up.txt'), 'u');
    expect((await s.call('shed_link_create', { zone: 'uploads', path: 'up.txt' })).success).toBe(true);
    await s.call('shed_create_file', { zone: 'documents', path: 'doc.md', content: 'x' });
    expect((await s.call('shed_link_create', { zone: 'documents', path: 'doc.md' })).success).toBe(true);
    await s.call('shed_create_file', { zone: 'group', group: 'team', path: 'plan.md', content: 'p' });
    const g = await s.call('shed_link_create', { zone: 'group', group: 'team', path: 'plan.md' });
    expect(g.success).toBe(true);
    expect(g.data!.zone).toBe('Group:Team');
    const carol = await s.call('shed_link_create', { zone: 'group', group: 'team', path: 'plan.md' }, { user: 'carol' });
    expect(carol.error!.code).toBe('GROUP_ACCESS_DENIED');
    const list = (await s.call('shed_link_list')).data!.links;
    expect(list.map((l: { zone: string }) => l.zone).sort()).toEqual(['documents', 'group', 'uploads']);
    expect(list.find((l: { zone: string }) => l.zone === 'group')).toMatchObject({ group: 'team', path: 'plan.md', kind: 'file' });
  });
});

describe('group links on a host that manages groups itself', () => {
  it('are refused: serving could not re-check membership without the caller\'s session', async () => {
    const dir = (await import('../../src/core/services/groups/directory.js')).standaloneDirectory(s.base);
    const t = new mod.Tools({ host: { name: 'platform', groups: () => dir } });
    t.valves = { ...t.valves, storage_base_path: s.base };
    const call = async (fn: string, a: Record<string, unknown>) => JSON.parse(await (t as unknown as Record<string, (x: unknown) => Promise<string>>)[fn]!.call(t, { ...a, __user__: { id: 'alice' } }));
    await call('shed_create_file', { zone: 'group', group: 'team', path: 'g.md', content: 'g' });
    const r = await call('shed_link_create', { zone: 'group', group: 'team', path: 'g.md' });
    expect(r.error.code).toBe('ZONE_FORBIDDEN');
    expect(r.error.hint).toContain('link_backend');
    expect((await call('shed_link_list', {})).data.count).toBe(0);
  });
});

describe('shed_link_list and shed_link_delete', () => {
  it('lists only the caller\'s links with every field; delete revokes; file_id is an alias', async () => {
    put('a.txt');
    const a = (await s.call('shed_link_create', { zone: 'storage', path: 'a.txt' })).data!;
    const b = (await s.call('shed_link_create', { zone: 'storage', path: 'a.txt', expires_hours: 2 })).data!;
    fs.mkdirSync(s.zonePath('storage', '', 'bob'), { recursive: true });
    fs.writeFileSync(s.zonePath('storage', 'b.txt', 'bob'), 'b');
    const bobs = (await s.call('shed_link_create', { zone: 'storage', path: 'b.txt' }, { user: 'bob' })).data!;
    const list = await s.call('shed_link_list');
    expect(list.data!.count).toBe(2);
    const first = list.data!.links.find((l: { link_id: string }) => l.link_id === a.link_id);
    expect(first).toMatchObject({ link_id: a.link_id, zone: 'storage', path: 'a.txt', kind: 'file', url: a.url, expires_at: a.expires_at });
    expect(typeof first.created_at).toBe('string');

    // Another user's link: refused, and it still exists.
    const denied = await s.call('shed_link_delete', { link_id: bobs.link_id });
    expect(denied.error!.code).toBe('ACCESS_DENIED');
    expect((await s.call('shed_link_list', {}, { user: 'bob' })).data!.count).toBe(1);

    expect((await s.call('shed_link_delete', { link_id: a.link_id })).data).toMatchObject({ link_id: a.link_id, deleted: true });
    expect((await s.call('shed_link_delete', { file_id: b.link_id })).success).toBe(true);
    expect((await s.call('shed_link_list')).data!.count).toBe(0);
    expect((await s.call('shed_link_delete', { link_id: a.link_id })).error!.code).toBe('LINK_NOT_FOUND');
    expect((await s.call('shed_link_delete', {})).error!.code).toBe('MISSING_PARAMETER');
    expect((await s.call('shed_link_delete', { link_id: 'x', file_id: 'y' })).error!.code).toBe('INVALID_PARAMETER');
  });

  it('link_backend=openwebui without an Open WebUI session says what is missing', async () => {
    put('a.txt');
    s.tools.valves = { ...s.tools.valves, link_backend: 'openwebui' };
    const r = await s.call('shed_link_create', { zone: 'storage', path: 'a.txt' });
    expect(r.error!.code).toBe('OPENWEBUI_API_UNAVAILABLE');
    expect(r.error!.hint).toContain('link_backend');
  });

  it('the plugin module exposes the three functions with compact specs', () => {
    const specs = (mod.toolSpecs as { name?: string; function?: { name: string } }[]).filter((t) => /shed_link_/.test(JSON.stringify(t.name ?? t.function?.name)));
    expect(specs).toHaveLength(3);
    expect(JSON.stringify(specs).length).toBeLessThanOrEqual(2400);
  });
});
