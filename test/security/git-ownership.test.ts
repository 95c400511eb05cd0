/**
 * The in-process git history commands (restore, checkout REV -- path) are write
 * paths like any other. Matrix: every git write path × every ownership mode × the owner (alice) and
 * another member (bob). alice owns d/f.txt; a refused call must leave its bytes, its mtime and the
 * history (HEAD and the number of commits) exactly as they were. In-process git spawns nothing and
 * never reaches the sandbox, so one run covers both sandbox modes.
 *
 * History built before each case (oldest first):
 *   C1 bob: `d` is a file          C2 bob: `d` deleted
 *   C3 bob: d/f.txt/inner.txt      C4 bob: d/f.txt (folder) deleted
 *   C5 alice: d/f.txt = v1 (mode)  C6 alice: d/f.txt = v2
 * so HEAD~1 = v1, HEAD~2 = no d/f.txt, HEAD~3 = d/f.txt is a folder, HEAD~5 = d is a file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Result } from '../helpers/shed.js';
import { git } from '../vcs/helpers.js';
import { groupShed, read } from '../groups/setup.js';

type Mode = 'owner' | 'group' | 'owner_ro';
const MODES: Mode[] = ['owner', 'group', 'owner_ro'];
const ACTORS = ['alice', 'bob'] as const;
const g = { zone: 'group', group: 'team' };

/** After an allowed call: what d/f.txt is (text, 'gone', or 'folder'). */
interface GitPath {
  args: string[];
  after: string;
}
const GIT_WRITES: GitPath[] = [
  { args: ['checkout', 'HEAD~1', '--', 'd/f.txt'], after: 'v1' },
  { args: ['checkout', 'HEAD~1', 'd/f.txt'], after: 'v1' },
  { args: ['restore', '--source=HEAD~1', '--', 'd/f.txt'], after: 'v1' },
  { args: ['restore', '--source', 'HEAD~1', 'd/f.txt'], after: 'v1' },
  { args: ['restore', '-sHEAD~1', '--', './d//f.txt'], after: 'v1' },
  { args: ['restore', '--source=HEAD~1', '--', 'd'], after: 'v1' },
  { args: ['checkout', 'HEAD~1', '--', 'd'], after: 'v1' },
  { args: ['restore', '--source=HEAD~1', '--', 'x/../d'], after: 'v1' },
  { args: ['restore', '--source=HEAD~2', '--', 'd/f.txt'], after: 'gone' },
  { args: ['restore', '--source=HEAD~2', '--', 'd'], after: 'gone' },
  { args: ['restore', '--source=HEAD~3', '--', 'd/f.txt'], after: 'folder' },
  { args: ['restore', '--source=HEAD~3', '--', 'd/f.txt/inner.txt'], after: 'folder' },
  { args: ['checkout', 'HEAD~3', '--', 'd/f.txt/inner.txt'], after: 'folder' },
  { args: ['restore', '--source=HEAD~5', '--', 'd'], after: 'gone' },
  { args: ['checkout', 'HEAD~5', '--', 'd'], after: 'gone' },
];

const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((f) => f()));

async function arrange(mode: Mode) {
  const s = await groupShed();
  cleanups.push(() => s.cleanup());
  const ok = (r: Result) => expect(r.success, JSON.stringify(r.error)).toBe(true);
  const bob = { user: 'bob' };
  ok(await s.call('shed_create_file', { ...g, path: 'd', content: 'was a file', mode: 'group' }, bob));
  ok(await s.call('shed_delete', { ...g, path: 'd' }, bob));
  ok(await s.call('shed_create_file', { ...g, path: 'd/f.txt/inner.txt', content: 'inner', mode: 'group' }, bob));
  ok(await s.call('shed_delete', { ...g, path: 'd/f.txt' }, bob));
  ok(await s.call('shed_create_file', { ...g, path: 'd/f.txt', content: 'v1', mode: mode === 'owner_ro' ? 'owner' : mode }));
  ok(await s.call('shed_create_file', { ...g, path: 'd/f.txt', content: 'v2' }));
  if (mode === 'owner_ro') ok(await s.call('shed_group_set_mode', { group: 'team', path: 'd/f.txt', mode: 'owner_ro' }));
  const f = s.groupPath('d/f.txt');
  const old = new Date('2020-01-01T00:00:00Z');
  fs.utimesSync(f, old, old);
  const root = s.groupPath();
  const history = () => ({ head: git(root, 'rev-parse', 'HEAD').trim(), count: git(root, 'rev-list', '--count', 'HEAD').trim() });
  return { s, f, old, root, history };
}

function state(f: string): string {
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(f);
  } catch {
    return 'gone'; // missing, or its folder is now a file
  }
  return st.isDirectory() ? 'folder' : read(f)!;
}

describe.each(MODES)('mode %s', (mode) => {
    describe.each(ACTORS)('actor %s', (actor) => {
      const allowed = mode === 'group' || (mode === 'owner' && actor === 'alice');
      it.each(GIT_WRITES.map((p) => [p.args.join(' '), p] as const))(`git %s is ${allowed ? 'allowed' : 'refused'}`, async (_n, p) => {
        const { s, f, old, history } = await arrange(mode);
        const before = history();
        const r = await s.call('shed_exec', { ...g, cmd: 'git', args: p.args }, { user: actor });
        if (allowed) {
          expect(r.success, JSON.stringify(r.error)).toBe(true);
          expect(r.data!.returncode, String(r.data!.stderr)).toBe(0);
          expect(state(f)).toBe(p.after);
          expect(history().head).not.toBe(before.head);
          return;
        }
        expect(r.success, JSON.stringify(r.data)).toBe(false);
        expect(r.error!.code).toBe('PERMISSION_DENIED');
        expect(r.error!.details!.reason).toBe(mode === 'owner_ro' ? 'FILE_READ_ONLY' : 'FILE_OWNER_ONLY');
        expect(r.error!.hint).toBeTruthy();
        expect(read(f)).toBe('v2');
        expect(fs.statSync(f).mtimeMs).toBe(old.getTime());
        expect(history()).toEqual(before);
      });
    });
});

describe('the whole zone cannot be restored at once', () => {
  it.each([['restore', '--source=HEAD~1', '--', '.'], ['checkout', 'HEAD~1', '--', '.'], ['restore', '--source=HEAD~1', '--', 'd/..']])('git %s is refused for everyone', async (...args) => {
    const { s, f, history } = await arrange('owner');
    const before = history();
    for (const user of ACTORS) {
      const r = await s.call('shed_exec', { ...g, cmd: 'git', args }, { user });
      expect(r.success).toBe(false);
      expect(r.error!.code).toBe('INVALID_PARAMETER');
    }
    expect(read(f)).toBe('v2');
    expect(history()).toEqual(before);
  });
});

describe('a restored file nobody owned becomes the restorer\'s, with the default mode', () => {
  it('bob restores a file that was deleted: alice (other member) may not change it under mode owner', async () => {
    const s = await groupShed({ group_default_mode: 'owner' });
    cleanups.push(() => s.cleanup());
    await s.call('shed_create_file', { ...g, path: 'n.txt', content: 'old', mode: 'group' }, { user: 'bob' });
    await s.call('shed_delete', { ...g, path: 'n.txt' }, { user: 'bob' });
    const r = await s.call('shed_exec', { ...g, cmd: 'git', args: ['restore', '--source=HEAD~1', '--', 'n.txt'] }, { user: 'bob' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(read(s.groupPath('n.txt'))).toBe('old');
    const info = await s.call('shed_patch_text', { ...g, path: 'n.txt', content: 'x' }, { user: 'alice' });
    expect(info.error?.code).toBe('PERMISSION_DENIED');
  });
});

describe('restore never writes a link from history that leads outside, to itself or to an ancestor', () => {
  /** Puts a link in Documents' history (committed), then removes it from disk (committed). */
  async function linkInHistory(rel: string, target: string) {
    const { makeShed } = await import('../helpers/shed.js');
    const s = makeShed();
    cleanups.push(() => s.cleanup());
    await s.call('shed_create_file', { zone: 'documents', path: 'd/e/keep.txt', content: 'k' });
    const abs = s.zonePath('documents', rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.symlinkSync(target, abs);
    const { commitZone } = await import('../../src/core/services/vcs/index.js');
    const root = fs.realpathSync(s.zonePath('documents'));
    const zone = { root, label: 'Documents' };
    const who = { id: 'alice', name: 'ALICE', email: '', role: 'user' as const };
    expect(await commitZone(zone, [rel], who, 'add link')).toBeTruthy();
    fs.rmSync(abs);
    expect(await commitZone(zone, [rel], who, 'remove link')).toBeTruthy();
    return { s, abs, root };
  }

  it.each([
    ['up', '..'],
    ['abs', '/etc'],
    ['self', 'self'],
    ['dot', '.'],
    ['d/e/anc', '..'],
    ['d/e/anc2', '../..'],
    ['d/e/anc3', '../../d'],
    ['d/e/out', '../../../x'],
    ['d/e/sneaky', 'keep.txt/../../../..'],
  ])('%s -> %s is refused, nothing written or committed', async (rel, target) => {
    const { s, abs, root } = await linkInHistory(rel, target);
    const head = git(root, 'rev-parse', 'HEAD').trim();
    const r = await s.call('shed_exec', { zone: 'documents', cmd: 'git', args: ['restore', '--source=HEAD~1', '--', rel] });
    expect(r.success, JSON.stringify(r.data)).toBe(false);
    expect(r.error!.code).toBe('PATH_ESCAPE');
    expect(r.error!.hint).toBeTruthy();
    expect(fs.lstatSync(abs, { throwIfNoEntry: false })).toBeUndefined();
    expect(git(root, 'rev-parse', 'HEAD').trim()).toBe(head);
  });

  it('a link through an existing ancestor link is judged as the kernel follows it', async () => {
    const { s, abs, root } = await linkInHistory('d/e/via', 'up/../../x');
    fs.symlinkSync('..', path.join(root, 'd/e/up')); // on disk now: d/e/up -> d, so up/../.. is the zone's parent
    const r = await s.call('shed_exec', { zone: 'documents', cmd: 'git', args: ['restore', '--source=HEAD~1', '--', 'd/e/via'] });
    expect(r.error?.code).toBe('PATH_ESCAPE');
    expect(fs.lstatSync(abs, { throwIfNoEntry: false })).toBeUndefined();
  });

  it('an inward link to a sibling is restored', async () => {
    const { s, abs } = await linkInHistory('d/e/ok', 'keep.txt');
    const r = await s.call('shed_exec', { zone: 'documents', cmd: 'git', args: ['restore', '--source=HEAD~1', '--', 'd/e/ok'] });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(fs.readlinkSync(abs)).toBe('keep.txt');
  });
});
