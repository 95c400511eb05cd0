/**
 * The permission matrix: every ownership mode × every write path × owner / member / non-member.
 * alice creates the file with the mode; the actor then tries to change it. Allowed → the change is
 * on disk; refused → the exact error, and the file's bytes and mtime untouched. Commands are never
 * refused for what they might do: any command runs, the kernel refuses writes in place (the file is
 * read-only to the command), and whatever else it did to the file is undone after it (restored from
 * the last commit, reported in data.group_files_restored); the file ends byte-identical, with its
 * mtime, and its history unchanged.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Result } from '../helpers/shed.js';
import { groupShed, read } from './setup.js';

type Mode = 'owner' | 'group' | 'owner_ro';
type Actor = 'alice' | 'bob' | 'carol';
const MODES: Mode[] = ['owner', 'group', 'owner_ro'];
const ACTORS: Actor[] = ['alice', 'bob', 'carol'];
const ORIGINAL = 'one\r\ntwo\r\n';

function allowed(mode: Mode, actor: Actor): boolean {
  if (actor === 'carol') return false;
  return mode === 'group' || (mode === 'owner' && actor === 'alice');
}

/** Whether the suite runs again with identity_separation on (FILESHED_TEST_VALVES). */
const identityOn = /"identity_separation":"(auto|required)"/.test(process.env.FILESHED_TEST_VALVES ?? '');

/**
 * Under identity separation group folders are sticky (ids/group-owner.ts): a command renames,
 * replaces or deletes only its caller's own files, even of mode group (f.txt is alice's, other.txt
 * bob's: nobody's command moves one over the other). Writes in place stay every member's.
 */
function stickyRefuses(actor: Actor, name: string): boolean {
  if (!identityOn) return false;
  if (name === 'exec mv over') return true;
  return actor !== 'alice' && ['exec rm', 'exec mv', 'exec sed -i'].includes(name);
}

interface Path {
  name: string;
  run(call: (fn: string, args: Record<string, unknown>) => Promise<Result>): Promise<Result>;
  /** What the file holds after an allowed call (undefined: the file is gone from f.txt). */
  after: string | undefined;
}

const g = { zone: 'group', group: 'team' };
const WRITE_PATHS: Path[] = [
  { name: 'create_file', after: 'new', run: (c) => c('shed_create_file', { ...g, path: 'f.txt', content: 'new' }) },
  { name: 'patch_text', after: `${ORIGINAL}more\r\n`, run: (c) => c('shed_patch_text', { ...g, path: 'f.txt', content: 'more' }) },
  { name: 'patch_bytes', after: `${ORIGINAL}A`, run: (c) => c('shed_patch_bytes', { ...g, path: 'f.txt', content: '41' }) },
  { name: 'delete', after: undefined, run: (c) => c('shed_delete', { ...g, path: 'f.txt' }) },
  { name: 'rename', after: undefined, run: (c) => c('shed_rename', { ...g, old_path: 'f.txt', new_path: 'moved.txt' }) },
  { name: 'rename over', after: 'other', run: (c) => c('shed_rename', { ...g, old_path: 'other.txt', new_path: 'f.txt', overwrite: true }) },
  { name: 'convert_eol', after: 'one\ntwo\n', run: (c) => c('shed_convert_eol', { ...g, path: 'f.txt', to: 'unix' }) },
  {
    name: 'lockedit',
    after: 'edited',
    run: async (c) => {
      const open = await c('shed_lockedit_open', { ...g, path: 'f.txt' });
      if (!open.success) return open;
      await c('shed_lockedit_overwrite', { ...g, path: 'f.txt', content: 'edited' });
      return c('shed_lockedit_save', { ...g, path: 'f.txt' });
    },
  },
  { name: 'copy_to_group', after: 'mine', run: (c) => c('shed_copy_to_group', { src_zone: 'storage', src_path: 'mine.txt', group: 'team', dest_path: 'f.txt', overwrite: true }) },
];

const EXEC_PATHS: Path[] = [
  { name: 'exec rm', after: undefined, run: (c) => c('shed_exec', { ...g, cmd: 'rm', args: ['f.txt'] }) },
  { name: 'exec mv', after: undefined, run: (c) => c('shed_exec', { ...g, cmd: 'mv', args: ['f.txt', 'g.txt'] }) },
  { name: 'exec mv over', after: 'other', run: (c) => c('shed_exec', { ...g, cmd: 'mv', args: ['other.txt', 'f.txt'] }) },
  { name: 'exec cp over', after: 'other', run: (c) => c('shed_exec', { ...g, cmd: 'cp', args: ['other.txt', 'f.txt'] }) },
  { name: 'exec sed -i', after: 'ONE\r\ntwo\r\n', run: (c) => c('shed_exec', { ...g, cmd: 'sed', args: ['-i', 's/one/ONE/', 'f.txt'] }) },
  { name: 'exec truncate', after: '', run: (c) => c('shed_exec', { ...g, cmd: 'truncate', args: ['-s', '0', 'f.txt'] }) },
  { name: 'exec touch', after: ORIGINAL, run: (c) => c('shed_exec', { ...g, cmd: 'touch', args: ['f.txt'] }) },
  { name: 'exec stdout_file', after: 'out\n', run: (c) => c('shed_exec', { ...g, cmd: 'echo', args: ['out'], stdout_file: 'f.txt' }) },
];

const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((f) => f()));

async function runCase(mode: Mode, actor: Actor, p: Path, valves: Record<string, unknown> = {}) {
  const s = await groupShed(valves);
  cleanups.push(() => s.cleanup());
  const made = await s.call('shed_create_file', { ...g, path: 'f.txt', content: ORIGINAL, mode });
  expect(made.success, JSON.stringify(made)).toBe(true);
  // other.txt is open to everyone (mode group): only f.txt's mode matters.
  await s.call('shed_create_file', { ...g, path: 'other.txt', content: 'other', mode: 'group' }, { user: 'bob' });
  fs.mkdirSync(s.zonePath('storage', '', actor), { recursive: true });
  fs.writeFileSync(s.zonePath('storage', 'mine.txt', actor), 'mine');
  const f = s.groupPath('f.txt');
  const old = new Date('2020-01-01T00:00:00Z');
  fs.utimesSync(f, old, old);
  const r = await p.run((fn, args) => s.call(fn, args, { user: actor }));
  return { s, r, f, old };
}

describe.each(MODES)('mode %s', (mode) => {
  describe.each(ACTORS)('actor %s', (actor) => {
    const ok = allowed(mode, actor);
    it.each(WRITE_PATHS.map((p) => [p.name, p] as const))(`%s is ${ok ? 'allowed' : 'refused'}`, async (_n, p) => {
      const { r, f } = await runCase(mode, actor, p);
      if (ok) {
        expect(r.success, JSON.stringify(r.error)).toBe(true);
        expect(read(f)).toBe(p.after);
      } else {
        expect(r.success).toBe(false);
        expect(r.error!.code).toBe(actor === 'carol' ? 'GROUP_ACCESS_DENIED' : 'PERMISSION_DENIED');
        if (actor !== 'carol') expect(r.error!.details!.reason).toBe(mode === 'owner_ro' ? 'FILE_READ_ONLY' : 'FILE_OWNER_ONLY');
        expect(read(f)).toBe(ORIGINAL);
      }
    });

    describe.each(['bwrap', 'landlock', 'validated'])('sandbox %s', (sandbox) => {
      it.each(EXEC_PATHS.map((p) => [p.name, p] as const))(`%s is ${ok ? 'allowed' : 'refused'}`, async (_n, p) => {
        const { r, f, old } = await runCase(mode, actor, p, { sandbox });
        if (ok && stickyRefuses(actor, p.name)) {
          expect(r.success, JSON.stringify(r.error)).toBe(true);
          expect(r.data!.returncode, 'refused by the sticky folder').not.toBe(0);
          expect(read(f)).toBe(ORIGINAL);
          return;
        }
        if (ok) {
          expect(r.success, JSON.stringify(r.error)).toBe(true);
          expect(r.data!.returncode, String(r.data!.stderr)).toBe(0);
          expect(read(f)).toBe(p.after);
          return;
        }
        if (actor === 'carol') expect(r.error!.code).toBe('GROUP_ACCESS_DENIED');
        else if (p.name === 'exec stdout_file') expect(r.error!.code).toBe('PERMISSION_DENIED'); // a named output path: refused before anything runs
        else {
          expect(r.success, JSON.stringify(r.error)).toBe(true);
          // Refused by the kernel (nothing to undo), or run and undone.
          const restored = (r.data!.group_files_restored ?? []) as { path: string }[];
          expect(r.data!.returncode !== 0 || restored.some((x) => x.path === 'f.txt'), JSON.stringify(r.data)).toBe(true);
        }
        expect(read(f)).toBe(ORIGINAL);
        expect(fs.statSync(f).mtimeMs).toBe(old.getTime());
        // Under identity separation owner_ro is a mode nobody writes (0440), once a member's command
        // converted the space (carol's never ran).
        if (identityOn && mode === 'owner_ro' && actor !== 'carol') expect(fs.statSync(f).mode & 0o777).toBe(0o440);
        else expect(fs.statSync(f).mode & 0o222, 'writable again for its owner').not.toBe(0);
      });
    });
  });
});
