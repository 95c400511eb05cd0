/**
 * The write rule under identity separation: what the server writes into a converted zone, by any
 * function, ends the user's (the folder's owner), so the user's own commands can change it. Each
 * function writes once after the zone was converted; the owner on disk is checked, then a command
 * of the user changes the result in place.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { ok, ran } from '../code/helpers.js';

const IDS = { sandbox: 'landlock', allow_shell: true, identity_separation: 'auto', identity_id_first: 2_600_000, identity_id_count: 100 };
let s: Shed;
let uid = 0;

beforeAll(async () => {
  s = makeShed(IDS);
  ran(await s.call('shed_run_shell', { zone: 'storage', script: 'echo start > start.txt' }));
  uid = fs.lstatSync(s.zonePath('storage', 'start.txt')).uid;
  expect(uid).toBeGreaterThanOrEqual(2_600_000);
});
afterAll(() => s.cleanup());

/** Every entry under `rel` (and itself) is the user's. */
function theirs(rel: string): string[] {
  const bad: string[] = [];
  const check = (p: string) => {
    const st = fs.lstatSync(p);
    if (st.uid !== uid || st.gid !== uid) bad.push(`${path.relative(s.zonePath('storage'), p)} ${st.uid}:${st.gid}`);
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) check(path.join(p, n));
  };
  check(s.zonePath('storage', rel));
  return bad;
}

describe('what the server writes into a user\'s zone is theirs', () => {
  it('shed_create_file, shed_patch_text, shed_rename into a new folder', async () => {
    ok(await s.call('shed_create_file', { zone: 'storage', path: 'a/b/c.txt', content: 'c\n' }));
    ok(await s.call('shed_patch_text', { zone: 'storage', path: 'a/b/c.txt', content: 'd', position: 'end' }));
    ok(await s.call('shed_rename', { zone: 'storage', old_path: 'a/b/c.txt', new_path: 'moved/c.txt' }));
    expect(theirs('a')).toEqual([]);
    expect(theirs('moved')).toEqual([]);
    ran(await s.call('shed_run_shell', { zone: 'storage', script: 'echo e >> moved/c.txt' }));
  });

  it('shed_zip and shed_unzip', async () => {
    ok(await s.call('shed_create_file', { zone: 'storage', path: 'z/one.txt', content: '1\n' }));
    ok(await s.call('shed_zip', { zone: 'storage', src: 'z', dest: 'z.zip' }));
    ok(await s.call('shed_unzip', { zone: 'storage', src: 'z.zip', dest: 'unzipped' }));
    expect(theirs('z.zip')).toEqual([]);
    expect(theirs('unzipped')).toEqual([]);
    ran(await s.call('shed_run_shell', { zone: 'storage', script: 'echo 2 >> unzipped/z/one.txt || echo 2 >> unzipped/one.txt' }));
  });

  it('a bridge from Uploads', async () => {
    fs.mkdirSync(s.zonePath('uploads'), { recursive: true });
    fs.writeFileSync(s.zonePath('uploads', 'up.csv'), 'a,b\n');
    ok(await s.call('shed_move_uploads_to_storage', { src: 'up.csv', dest: 'from-uploads/up.csv' }));
    expect(theirs('from-uploads')).toEqual([]);
  });

  it('shed_sqlite creating a database', async () => {
    ok(await s.call('shed_sqlite', { zone: 'storage', path: 'db.sqlite', query: 'CREATE TABLE t (x)' }));
    expect(theirs('db.sqlite')).toEqual([]);
  });
});
