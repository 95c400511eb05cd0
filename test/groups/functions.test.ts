/** The group functions, group resolution, bookkeeping of ownership records, and the CLI admin API. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mod } from '../helpers/shed.js';
import { groupShed, read } from './setup.js';

let s: Awaited<ReturnType<typeof groupShed>>;
beforeEach(async () => {
  s = await groupShed();
});
afterEach(() => s.cleanup());

const g = { zone: 'group', group: 'team' };

describe('group resolution', () => {
  it('accepts the id or the exact name; a case mismatch says "did you mean"', async () => {
    expect((await s.call('shed_create_file', { ...g, group: 'team', path: 'a.txt', content: 'x' })).success).toBe(true);
    expect((await s.call('shed_read', { ...g, group: 'Team', path: 'a.txt' })).data!.content).toBe('x');
    const r = await s.call('shed_read', { ...g, group: 'TEAM', path: 'a.txt' });
    expect(r.error!.code).toBe('GROUP_NOT_FOUND');
    expect(r.error!.hint).toContain('group="Team"');
    expect(r.error!.details).toMatchObject({ parameter: 'group', similar: ['Team'] });
    expect(read(s.groupPath('a.txt'))).toBe('x');
  });

  it('refuses unknown groups, malformed ids, missing group and non-members', async () => {
    expect((await s.call('shed_tree', { ...g, group: 'nope' })).error!.code).toBe('GROUP_NOT_FOUND');
    expect((await s.call('shed_tree', { ...g, group: '../lab' })).error!.code).toBe('INVALID_GROUP_ID');
    expect((await s.call('shed_tree', { zone: 'group' })).error!.code).toBe('MISSING_PARAMETER');
    const denied = await s.call('shed_tree', { ...g }, { user: 'carol' });
    expect(denied.error!.code).toBe('GROUP_ACCESS_DENIED');
    expect((await s.call('shed_tree', { zone: 'group', group: 'lab' }, { user: 'carol' })).success).toBe(true);
  });

  it('read-only functions work in a group zone for every member, whatever the mode', async () => {
    await s.call('shed_create_file', { ...g, path: 'd/ro.txt', content: 'hello', mode: 'owner_ro' });
    for (const [fn, args] of [
      ['shed_read', { path: 'd/ro.txt' }],
      ['shed_tree', {}],
      ['shed_hexdump', { path: 'd/ro.txt' }],
      ['shed_file_type', { path: 'd/ro.txt' }],
      ['shed_read_bytes', { path: 'd/ro.txt' }],
      ['shed_exec', { cmd: 'cat', args: ['d/ro.txt'] }],
    ] as const) {
      const r = await s.call(fn, { ...g, ...args }, { user: 'bob' });
      expect(r.success, `${fn} ${JSON.stringify(r.error)}`).toBe(true);
    }
  });
});

describe('group functions', () => {
  it('shed_group_list lists only the caller\'s groups with member counts', async () => {
    const r = await s.call('shed_group_list', {}, { user: 'bob' });
    expect(r.data).toEqual({ groups: [{ id: 'team', name: 'Team', description: 'the team', member_count: 2 }], count: 1 });
    expect((await s.call('shed_group_list', {})).data!.count).toBe(2);
  });

  it('shed_group_info shows members and files with owner and mode', async () => {
    await s.call('shed_create_file', { ...g, path: 'a.txt', content: 'abc', mode: 'owner' });
    await s.call('shed_exec', { ...g, cmd: 'touch', args: ['free.txt'] }, { user: 'bob' });
    const r = await s.call('shed_group_info', { group: 'team' }, { user: 'bob' });
    expect(r.data).toMatchObject({ group_id: 'team', name: 'Team', members: ['alice', 'bob'], member_count: 2, total_files: 2, total_size: 3 });
    expect(r.data!.files).toEqual([
      { path: 'a.txt', size: 3, owner: 'alice', mode: 'owner' },
      { path: 'free.txt', size: 0, owner: 'unknown', mode: 'group' },
    ]);
    expect((await s.call('shed_group_info', { group: 'team' }, { user: 'carol' })).error!.code).toBe('GROUP_ACCESS_DENIED');
  });

  it('the default mode of new files is the valve group_default_mode', async () => {
    const t = await groupShed({ group_default_mode: 'owner' });
    try {
      await t.call('shed_create_file', { ...g, path: 'a.txt', content: 'x' });
      const r = await t.call('shed_patch_text', { ...g, path: 'a.txt', content: 'y', overwrite: true }, { user: 'bob' });
      expect(r.error!.details!.reason).toBe('FILE_OWNER_ONLY');
    } finally {
      t.cleanup();
    }
  });

  it('shed_group_set_mode: owner only, valid modes, needs a record', async () => {
    await s.call('shed_create_file', { ...g, path: 'a.txt', content: 'x', mode: 'owner_ro' });
    expect((await s.call('shed_group_set_mode', { group: 'team', path: 'a.txt', mode: 'group' }, { user: 'bob' })).error!.code).toBe('NOT_FILE_OWNER');
    expect((await s.call('shed_group_set_mode', { group: 'team', path: 'a.txt', mode: 'everyone' })).error!.code).toMatch(/INVALID_(MODE|PARAMETER)/);
    expect((await s.call('shed_group_set_mode', { group: 'team', path: 'none.txt', mode: 'group' })).error!.code).toBe('FILE_NOT_FOUND');
    // owner_ro binds the owner too, until the owner changes the mode.
    expect((await s.call('shed_delete', { ...g, path: 'a.txt' })).error!.details!.reason).toBe('FILE_READ_ONLY');
    const r = await s.call('shed_group_set_mode', { group: 'team', path: 'a.txt', mode: 'group' });
    expect(r.data).toMatchObject({ path: 'a.txt', old_mode: 'owner_ro', new_mode: 'group' });
    expect((await s.call('shed_patch_text', { ...g, path: 'a.txt', content: 'b', overwrite: true }, { user: 'bob' })).success).toBe(true);
    expect(read(s.groupPath('a.txt'))).toBe('b');
  });

  it('shed_group_chown: owner only, new owner must be a member; the new owner gets the rights', async () => {
    await s.call('shed_create_file', { ...g, path: 'a.txt', content: 'x', mode: 'owner' });
    expect((await s.call('shed_group_chown', { group: 'team', path: 'a.txt', new_owner: 'alice' }, { user: 'bob' })).error!.code).toBe('NOT_FILE_OWNER');
    expect((await s.call('shed_group_chown', { group: 'team', path: 'a.txt', new_owner: 'carol' })).error!.code).toBe('INVALID_OWNER');
    expect((await s.call('shed_group_chown', { group: 'team', path: 'a.txt', new_owner: 'x/y' })).error!.code).toBe('INVALID_OWNER');
    const r = await s.call('shed_group_chown', { group: 'team', path: 'a.txt', new_owner: 'bob' });
    expect(r.data).toMatchObject({ old_owner: 'alice', new_owner: 'bob' });
    expect((await s.call('shed_patch_text', { ...g, path: 'a.txt', content: 'y', overwrite: true })).error!.code).toBe('PERMISSION_DENIED');
    expect((await s.call('shed_patch_text', { ...g, path: 'a.txt', content: 'y', overwrite: true }, { user: 'bob' })).success).toBe(true);
  });

  it('shed_copy_to_group checks permission before replacing anything, and records the copies', async () => {
    await s.call('shed_create_file', { ...g, path: 'a.txt', content: 'alice', mode: 'owner' });
    await s.call('shed_create_file', { zone: 'storage', path: 'mine.txt', content: 'bob' }, { user: 'bob' });
    const refused = await s.call('shed_copy_to_group', { src_zone: 'storage', src_path: 'mine.txt', group: 'team', dest_path: 'a.txt', overwrite: true }, { user: 'bob' });
    expect(refused.error!.code).toBe('PERMISSION_DENIED');
    expect(read(s.groupPath('a.txt'))).toBe('alice');
    expect((await s.call('shed_copy_to_group', { src_zone: 'storage', src_path: 'mine.txt', group: 'team', dest_path: 'a.txt' }, { user: 'bob' })).error!.code).toBe('FILE_EXISTS');
    const ok = await s.call('shed_copy_to_group', { src_zone: 'storage', src_path: 'mine.txt', group: 'team', dest_path: 'b/mine.txt', mode: 'owner_ro' }, { user: 'bob' });
    expect(ok.data).toMatchObject({ dest_path: 'b/mine.txt', mode: 'owner_ro', group: 'Team' });
    expect(typeof ok.data!.commit).toBe('string');
    expect(read(s.groupPath('b/mine.txt'))).toBe('bob');
    expect((await s.call('shed_delete', { ...g, path: 'b' })).error!.code).toBe('PERMISSION_DENIED');
    expect((await s.call('shed_copy_to_group', { src_zone: 'group', src_path: 'x', group: 'team', dest_path: 'y' })).success).toBe(false);
  });

  it('commits in a group space are authored by the acting member', async () => {
    await s.call('shed_create_file', { ...g, path: 'a.txt', content: 'x', message: 'first' }, { user: 'bob' });
    const r = await s.call('shed_exec', { ...g, cmd: 'git', args: ['log', '-n', '1'] });
    expect(r.data!.stdout).toContain('bob@fileshed');
    expect(r.data!.stdout).toContain('first');
  });
});

/** Whether the suite runs again with identity_separation on (FILESHED_TEST_VALVES). */
const identityOn = /"identity_separation":"(auto|required)"/.test(process.env.FILESHED_TEST_VALVES ?? '');

describe('ownership bookkeeping', () => {
  it('validated mode: any command runs beside protected files; what it did to them is undone', async () => {
    const t = await groupShed({ sandbox: 'validated' });
    try {
      await t.call('shed_create_file', { ...g, path: 'own.txt', content: 'x', mode: 'owner' });
      const cat = await t.call('shed_exec', { ...g, cmd: 'cat', args: ['own.txt'] }, { user: 'bob' });
      expect(cat.data).toMatchObject({ stdout: 'x', returncode: 0, sandbox: 'validated' });
      const mk = await t.call('shed_exec', { ...g, cmd: 'mkdir', args: ['new'] }, { user: 'bob' });
      expect(mk.data!.returncode).toBe(0);
      const rm = await t.call('shed_exec', { ...g, cmd: 'rm', args: ['own.txt'] }, { user: 'bob' });
      if (identityOn) {
        // As bob's uid in a sticky folder the kernel refuses it: nothing to undo.
        expect(rm.data!.returncode).not.toBe(0);
        expect(rm.data!.group_files_restored).toBeUndefined();
      } else {
        expect(rm.data!.group_files_restored).toEqual([{ path: 'own.txt', owner: 'alice', mode: 'owner' }]);
        expect(rm.message).toContain("'own.txt' (owner alice)");
      }
      expect(read(t.groupPath('own.txt'))).toBe('x');
      expect((await t.call('shed_exec', { ...g, cmd: 'rm', args: ['own.txt'] })).data!.group_files_restored).toBeUndefined();
      expect(read(t.groupPath('own.txt'))).toBeUndefined();
    } finally {
      t.cleanup();
    }
  });

  it('a folder with a file the caller may not change cannot be deleted or renamed', async () => {
    await s.call('shed_create_file', { ...g, path: 'd/own.txt', content: 'x', mode: 'owner' });
    await s.call('shed_create_file', { ...g, path: 'd/free.txt', content: 'y' }, { user: 'bob' });
    expect((await s.call('shed_delete', { ...g, path: 'd' }, { user: 'bob' })).error!.code).toBe('PERMISSION_DENIED');
    expect((await s.call('shed_rename', { ...g, old_path: 'd', new_path: 'e' }, { user: 'bob' })).error!.code).toBe('PERMISSION_DENIED');
    expect(read(s.groupPath('d/free.txt'))).toBe('y');
  });

  it('renames move records, deletes remove them (a later creator owns the new file)', async () => {
    await s.call('shed_create_file', { ...g, path: 'd/own.txt', content: 'x', mode: 'owner' });
    expect((await s.call('shed_rename', { ...g, old_path: 'd', new_path: 'e' })).success).toBe(true);
    expect((await s.call('shed_patch_text', { ...g, path: 'e/own.txt', content: 'z', overwrite: true }, { user: 'bob' })).error!.code).toBe('PERMISSION_DENIED');
    expect((await s.call('shed_delete', { ...g, path: 'e' })).success).toBe(true);
    expect((await s.call('shed_create_file', { ...g, path: 'e/own.txt', content: 'bob' }, { user: 'bob' })).success).toBe(true);
    const info = await s.call('shed_group_info', { group: 'team' });
    expect(info.data!.files).toEqual([{ path: 'e/own.txt', size: 3, owner: 'bob', mode: 'group' }]);
  });

  it('shed_sqlite writes respect the mode', async () => {
    const made = await s.call('shed_sqlite', { ...g, path: 'a.db', query: 'CREATE TABLE t (x)' });
    expect(made.success, JSON.stringify(made.error)).toBe(true);
    await s.call('shed_group_set_mode', { group: 'team', path: 'a.db', mode: 'owner' });
    const before = fs.readFileSync(s.groupPath('a.db'));
    const r = await s.call('shed_sqlite', { ...g, path: 'a.db', query: 'INSERT INTO t VALUES (1)' }, { user: 'bob' });
    expect(r.error!.code).toBe('PERMISSION_DENIED');
    expect(fs.readFileSync(s.groupPath('a.db')).equals(before)).toBe(true);
    expect((await s.call('shed_sqlite', { ...g, path: 'a.db', query: 'SELECT count(*) AS n FROM t' }, { user: 'bob' })).success).toBe(true);
    expect((await s.call('shed_sqlite', { ...g, path: 'a.db', query: 'INSERT INTO t VALUES (1)' })).success).toBe(true);
  });

  it('under bubblewrap, a hard link to a protected file is protected too', async () => {
    const t = await groupShed({ sandbox: 'bwrap' });
    try {
      await t.call('shed_create_file', { ...g, path: 'own.txt', content: 'x', mode: 'group' });
      await t.call('shed_create_file', { ...g, path: 'other.txt', content: 'other', mode: 'group' }, { user: 'bob' });
      // cp -l and ln are refused by the command policy; a link may still come in another way (e.g. a tar member).
      fs.linkSync(t.groupPath('own.txt'), t.groupPath('alias.txt'));
      await t.call('shed_group_set_mode', { group: 'team', path: 'own.txt', mode: 'owner' });
      const r = await t.call('shed_exec', { ...g, cmd: 'cp', args: ['other.txt', 'alias.txt'] }, { user: 'bob' });
      expect(r.data!.returncode).not.toBe(0);
      const tr = await t.call('shed_exec', { ...g, cmd: 'truncate', args: ['-s', '0', 'alias.txt'] }, { user: 'bob' });
      expect(tr.data!.returncode).not.toBe(0);
      expect(read(t.groupPath('own.txt'))).toBe('x');
    } finally {
      t.cleanup();
    }
  });

  it.each(['bwrap', 'landlock'])('%s: moving or removing the folder that holds a protected file leaves the file in place', async (sandbox) => {
    const t = await groupShed({ sandbox });
    try {
      await t.call('shed_create_file', { ...g, path: 'd/own.txt', content: 'x', mode: 'owner' });
      await t.call('shed_create_file', { ...g, path: 'd/free.txt', content: 'y', mode: 'group' }, { user: 'bob' });
      const r = await t.call('shed_exec', { ...g, cmd: 'mv', args: ['d', 'e'] }, { user: 'bob' });
      // Under identity separation the folder is the server's in a sticky folder: the kernel refuses.
      expect(r.data!.returncode !== 0).toBe(identityOn);
      expect(read(t.groupPath('d/own.txt'))).toBe('x');
      expect(read(t.groupPath(identityOn ? 'd/free.txt' : 'e/free.txt'))).toBe('y'); // the caller's own changes stand
      const rm = await t.call('shed_exec', { ...g, cmd: 'rm', args: ['-rf', 'd', 'e'] }, { user: 'bob' });
      expect(rm.data!.returncode !== 0).toBe(identityOn);
      expect(read(t.groupPath('d/own.txt'))).toBe('x');
      expect(fs.existsSync(t.groupPath('e'))).toBe(false);
      // What bob may remove (his own file) is gone either way.
      if (identityOn) expect(fs.existsSync(t.groupPath('d/free.txt'))).toBe(false);
    } finally {
      t.cleanup();
    }
  });
});

describe('admin API', () => {
  it('add, list, members, remove; duplicates and bad ids refused', async () => {
    await expect(mod.admin.groups.add(s.base, 'team')).rejects.toThrow(/already exists/);
    await expect(mod.admin.groups.add(s.base, 'x', 'Team')).rejects.toThrow(/named 'Team'/);
    await expect(mod.admin.groups.add(s.base, '../x')).rejects.toThrow(/invalid group id/);
    expect((await mod.admin.groups.list(s.base)).map((x) => [x.id, x.members])).toEqual([['lab', 2], ['team', 2]]);
    await mod.admin.groups.removeMember(s.base, 'team', 'bob');
    expect((await s.call('shed_tree', g, { user: 'bob' })).error!.code).toBe('GROUP_ACCESS_DENIED');
    await mod.admin.groups.remove(s.base, 'lab');
    expect((await mod.admin.groups.list(s.base)).map((x) => x.id)).toEqual(['team']);
  });

  it('the CLI administers groups through the bundle', () => {
    if (!fs.existsSync('dist/cli.mjs')) return;
    const cli = (...a: string[]) => execFileSync(process.execPath, ['dist/cli.mjs', ...a, '--base', s.base], { encoding: 'utf8' });
    expect(cli('groups', 'add', 'ops', '--name', 'Ops', '--description', 'operations')).toContain('Added group ops');
    cli('groups', 'members', 'ops', 'add', 'dave');
    expect(cli('groups', 'members', 'ops')).toBe('dave\n');
    expect(cli('groups', 'list')).toContain('ops\tOps\t1 member(s)\toperations');
  });
});
