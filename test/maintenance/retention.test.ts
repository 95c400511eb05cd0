/**
 * Uploads retention (valve uploads_retention_days): maintenance removes conversation upload folders
 * untouched for longer, keeps recent ones (a recent file deep inside counts), touches nothing else;
 * 0 keeps everything. admin.maintainAll covers every user and group of the storage.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, mod, type Shed } from '../helpers/shed.js';

let s: Shed;
beforeEach(() => {
  s = makeShed({ sandbox: 'validated', uploads_retention_days: 7 });
});
afterEach(() => s.cleanup());

const DAY = 86_400_000;
function put(p: string, text: string, ageDays: number): void {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  const t = new Date(Date.now() - ageDays * DAY);
  fs.utimesSync(p, t, t);
}
function ageDir(p: string, days: number): void {
  const t = new Date(Date.now() - days * DAY);
  fs.utimesSync(p, t, t);
}

describe('uploads retention', () => {
  it('removes only conversation folders untouched for longer than the retention', async () => {
    put(s.zonePath('uploads', 'old.csv', 'alice', 'old-chat'), 'a', 30);
    ageDir(path.dirname(s.zonePath('uploads', 'old.csv', 'alice', 'old-chat')), 30);
    put(s.zonePath('uploads', 'deep/keep.csv', 'alice', 'busy-chat'), 'b', 1);
    put(s.zonePath('uploads', 'stale.csv', 'alice', 'busy-chat'), 'c', 30);
    ageDir(path.dirname(s.zonePath('uploads', 'stale.csv', 'alice', 'busy-chat')), 30);
    put(s.zonePath('storage', 'ancient.txt'), 'd', 400);
    put(s.zonePath('documents', 'ancient.md'), 'e', 400);
    const r = await s.call('shed_maintenance');
    expect(r.success).toBe(true);
    expect(r.data!.expired_uploads).toEqual(['Uploads/old-chat']);
    expect(r.message).toContain('1 expired upload folder(s)');
    expect(fs.existsSync(path.dirname(s.zonePath('uploads', 'x', 'alice', 'old-chat')))).toBe(false);
    expect(fs.readFileSync(s.zonePath('uploads', 'deep/keep.csv', 'alice', 'busy-chat'), 'utf8')).toBe('b');
    expect(fs.readFileSync(s.zonePath('uploads', 'stale.csv', 'alice', 'busy-chat'), 'utf8')).toBe('c');
    expect(fs.readFileSync(s.zonePath('storage', 'ancient.txt'), 'utf8')).toBe('d');
    expect(fs.readFileSync(s.zonePath('documents', 'ancient.md'), 'utf8')).toBe('e');
  });

  it('keeps everything when the retention is 0 (the default)', async () => {
    s.tools.valves = { ...s.tools.valves, uploads_retention_days: 0 };
    put(s.zonePath('uploads', 'old.csv', 'alice', 'old-chat'), 'a', 3000);
    ageDir(path.dirname(s.zonePath('uploads', 'old.csv', 'alice', 'old-chat')), 3000);
    const r = await s.call('shed_maintenance');
    expect(r.data!.expired_uploads).toEqual([]);
    expect(fs.existsSync(s.zonePath('uploads', 'old.csv', 'alice', 'old-chat'))).toBe(true);
  });

  it("shed_maintenance touches only the caller's uploads; admin.maintainAll covers every user", async () => {
    for (const user of ['alice', 'bob', 'carol']) {
      put(s.zonePath('uploads', 'x.txt', user, 'c-old'), 'x', 20);
      ageDir(path.dirname(s.zonePath('uploads', 'x.txt', user, 'c-old')), 20);
      put(s.zonePath('uploads', 'y.txt', user, 'c-new'), 'y', 0);
    }
    await s.call('shed_maintenance');
    expect(fs.existsSync(s.zonePath('uploads', 'x.txt', 'bob', 'c-old'))).toBe(true);
    const all = await mod.admin.maintainAll(s.tools.valves);
    expect(all.users).toBe(3);
    expect(Object.keys(all.cleaned).sort()).toEqual(['user:bob', 'user:carol']);
    expect(all.cleaned['user:bob']!.expired_uploads).toEqual(['Uploads/c-old']);
    for (const user of ['alice', 'bob', 'carol']) {
      expect(fs.existsSync(s.zonePath('uploads', 'x.txt', user, 'c-old'))).toBe(false);
      expect(fs.existsSync(s.zonePath('uploads', 'y.txt', user, 'c-new'))).toBe(true);
    }
  });

  it('admin.maintainAll cleans temp files of group spaces and creates no folders', async () => {
    const g = path.join(s.base, 'groups', 'team', 'data');
    put(path.join(g, 'a.txt.shedtmp'), 'partial', 2);
    put(path.join(g, 'a.txt'), 'kept', 2);
    const before = fs.readdirSync(s.base).sort();
    const all = await mod.admin.maintainAll(s.tools.valves);
    expect(all.groups).toBe(1);
    expect(all.cleaned['group:team']!.temp_files).toEqual(['Group:team/a.txt.shedtmp']);
    expect(fs.existsSync(path.join(g, 'a.txt'))).toBe(true);
    expect(fs.readdirSync(s.base).sort()).toEqual(before);
  });
});
