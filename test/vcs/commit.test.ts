import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { fsckClean, git } from './helpers.js';

let s: Shed;
afterEach(() => s?.cleanup());

const docs = () => s.zonePath('documents');
const log = () => git(docs(), 'log', '--format=%an%x09%ae%x09%cn%x09%s').trim().split('\n');
const changedIn = (rev = 'HEAD') => git(docs(), 'show', rev, '--format=', '--name-only', '--no-renames').trim().split('\n').filter(Boolean);

function expectHealthy(): void {
  const f = fsckClean(docs());
  expect(f.output).toBe('');
  expect(f.ok).toBe(true);
  expect(git(docs(), 'status', '--porcelain')).toBe('');
}

describe('every modifying call in Documents commits once', () => {
  it('create, patch, convert, patch_bytes, rename, delete: one commit each with author and message', async () => {
    s = makeShed();
    const r1 = await s.call('shed_create_file', { zone: 'documents', path: 'notes/a.txt', content: 'one\ntwo\n', message: 'Start notes' });
    expect(r1.success).toBe(true);
    expect(r1.data?.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(git(docs(), 'rev-parse', '--short=7', 'HEAD').trim()).toBe(r1.data?.commit);
    expect(git(docs(), 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expectHealthy();

    const r2 = await s.call('shed_patch_text', { zone: 'documents', path: 'notes/a.txt', content: 'three', position: 'end' });
    expect(r2.data?.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(changedIn()).toEqual(['notes/a.txt']);
    expectHealthy();

    const r3 = await s.call('shed_convert_eol', { zone: 'documents', path: 'notes/a.txt', to: 'dos' });
    expect(r3.success).toBe(true);
    expect(r3.data?.commit).toMatch(/^[0-9a-f]{7}$/);
    expectHealthy();

    const r4 = await s.call('shed_patch_bytes', { zone: 'documents', path: 'bin/x.dat', content: '00ff10', content_format: 'hex', message: 'Binary' });
    expect(r4.success).toBe(true);
    expect(r4.data?.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(changedIn()).toEqual(['bin/x.dat']);
    expectHealthy();

    const r5 = await s.call('shed_rename', { zone: 'documents', old_path: 'notes', new_path: 'archive/notes' });
    expect(r5.success).toBe(true);
    expect(changedIn().sort()).toEqual(['archive/notes/a.txt', 'notes/a.txt']);
    expectHealthy();

    const r6 = await s.call('shed_delete', { zone: 'documents', path: 'bin' });
    expect(r6.success).toBe(true);
    expect(changedIn()).toEqual(['bin/x.dat']);
    expectHealthy();

    const lines = log();
    expect(lines).toHaveLength(6);
    for (const line of lines) {
      const [an, ae, cn] = line.split('\t');
      expect(an).toBe('ALICE');
      expect(ae).toBe('alice@fileshed');
      expect(cn).toBe('Fileshed');
    }
    const subjects = lines.map((l) => l.split('\t')[3]).reverse();
    expect(subjects[0]).toBe('Start notes');
    expect(subjects[1]).toMatch(/^Patch notes\/a\.txt/);
    expect(subjects[2]).toMatch(/^Convert EOL to dos: notes\/a\.txt/);
    expect(subjects[3]).toBe('Binary');
    expect(subjects[4]).toBe('Rename notes -> archive/notes');
    expect(subjects[5]).toBe('Delete bin');
    expect(git(docs(), 'show', 'HEAD~1:archive/notes/a.txt')).toBe('one\r\ntwo\r\nthree\r\n');
  });
});

describe('what goes into a commit', () => {
  it('the first commit takes files that were in Documents before versioning started', async () => {
    s = makeShed();
    fs.mkdirSync(docs(), { recursive: true });
    fs.writeFileSync(path.join(docs(), 'old.txt'), 'from before\n');
    const r = await s.call('shed_create_file', { zone: 'documents', path: 'new.txt', content: 'x\n' });
    expect(r.data?.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(changedIn().sort()).toEqual(['new.txt', 'old.txt']);
    expectHealthy();
  });

  it('commits only the paths the call changed, never walking the rest (O(change))', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'a\n' });
    await s.call('shed_create_file', { zone: 'documents', path: 'deep/er/b.txt', content: 'b\n' });
    // Changed behind our back: a commit that walked the tree would pick this up.
    fs.writeFileSync(path.join(docs(), 'deep/er/b.txt'), 'changed outside\n');
    await s.call('shed_patch_text', { zone: 'documents', path: 'a.txt', content: 'more', position: 'end' });
    expect(changedIn()).toEqual(['a.txt']);
    expect(git(docs(), 'status', '--porcelain')).toBe(' M deep/er/b.txt\n');
  });

  it('stores links as links (mode 120000, target text) and the executable bit as 100755', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'documents', path: 'run.sh', content: '#!/bin/sh\necho hi\n' });
    fs.chmodSync(path.join(docs(), 'run.sh'), 0o755);
    fs.symlinkSync('run.sh', path.join(docs(), 'link'));
    fs.symlinkSync('/etc/passwd', path.join(docs(), 'outside'));
    await s.call('shed_create_file', { zone: 'documents', path: 'dir/x.txt', content: 'x' });
    // A deletion commits the parent's state: make one that covers the links and the mode change.
    const { commitZone } = await import('../../src/core/services/vcs/index.js');
    const zone = { root: fs.realpathSync(docs()), label: 'Documents' };
    const id = await commitZone(zone, ['run.sh', 'link', 'outside'], { id: 'alice', name: 'ALICE', email: '', role: 'user' }, 'links');
    expect(id).toMatch(/^[0-9a-f]{40}$/);
    const tree = git(docs(), 'ls-tree', 'HEAD');
    expect(tree).toMatch(/^120000 blob [0-9a-f]{40}\tlink$/m);
    expect(tree).toMatch(/^120000 blob [0-9a-f]{40}\toutside$/m);
    expect(tree).toMatch(/^100755 blob [0-9a-f]{40}\trun\.sh$/m);
    expect(git(docs(), 'cat-file', '-p', 'HEAD:outside')).toBe('/etc/passwd');
    expectHealthy();
  });

  it('a write through a folder link is committed under the real path', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'documents', path: 'real/a.txt', content: 'a\n' });
    fs.symlinkSync('real', path.join(docs(), 'alias'));
    const { commitZone } = await import('../../src/core/services/vcs/index.js');
    await commitZone({ root: fs.realpathSync(docs()), label: 'Documents' }, ['alias'], { id: 'alice', name: 'ALICE', email: '', role: 'user' }, 'link');
    const r = await s.call('shed_patch_text', { zone: 'documents', path: 'alias/a.txt', content: 'b', position: 'end' });
    expect(r.success).toBe(true);
    expect(changedIn()).toEqual(['real/a.txt']);
    expectHealthy();
  });

  it('a folder renamed onto a former file path, and a file replacing a folder', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'documents', path: 'x', content: 'file x\n' });
    await s.call('shed_create_file', { zone: 'documents', path: 'd/one.txt', content: '1\n' });
    await s.call('shed_create_file', { zone: 'documents', path: 'd/sub/two.txt', content: '2\n' });
    await s.call('shed_delete', { zone: 'documents', path: 'x' });
    const r = await s.call('shed_rename', { zone: 'documents', old_path: 'd', new_path: 'x' });
    expect(r.success).toBe(true);
    expect(git(docs(), 'ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n')).toEqual(['x/one.txt', 'x/sub/two.txt']);
    expectHealthy();
    await s.call('shed_delete', { zone: 'documents', path: 'x' });
    expect(git(docs(), 'ls-tree', '-r', 'HEAD')).toBe('');
    expectHealthy();
    expect(git(docs(), 'rev-list', '--count', 'HEAD').trim()).toBe('6');
  });

  it('never tracks .git in any spelling, temp leftovers, or special files', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'documents', path: 'keep.txt', content: 'k' });
    fs.mkdirSync(path.join(docs(), 'sub/.git'), { recursive: true });
    fs.writeFileSync(path.join(docs(), 'sub/.git/config'), '[core]\n');
    fs.mkdirSync(path.join(docs(), 'sub/.GIT'), { recursive: true });
    fs.writeFileSync(path.join(docs(), 'sub/.GIT/x'), 'x');
    fs.writeFileSync(path.join(docs(), 'sub/git~1'), 'x');
    fs.writeFileSync(path.join(docs(), 'sub/.a.txt.0123456789ab.shedtmp'), 'partial');
    fs.writeFileSync(path.join(docs(), 'sub/ok.txt'), 'ok');
    const { commitZone } = await import('../../src/core/services/vcs/index.js');
    await commitZone({ root: fs.realpathSync(docs()), label: 'Documents' }, ['sub'], { id: 'alice', name: 'ALICE', email: '', role: 'user' }, 'sub');
    expect(git(docs(), 'ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n')).toEqual(['keep.txt', 'sub/ok.txt']);
    expect(fsckClean(docs()).ok).toBe(true);
  });

  it('makes no commit when the content did not change', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'same\n' });
    const r = await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'same\n' });
    expect(r.success).toBe(true);
    expect(r.data?.commit).toBeUndefined();
    expect(git(docs(), 'rev-list', '--count', 'HEAD').trim()).toBe('1');
    const c = await s.call('shed_convert_eol', { zone: 'documents', path: 'a.txt', to: 'unix' });
    expect(c.data?.commit).toBeUndefined();
    expectHealthy();
  });

  it('uses the user name and id, cleaned of characters git refuses; the message parameter wins', async () => {
    s = makeShed();
    const tools = s.tools as unknown as Record<string, (a: unknown) => Promise<string>>;
    const json = await tools.shed_create_file!({ zone: 'documents', path: 'a.txt', content: 'a', message: 'My message\n\nwith body', __user__: { id: 'u-42', name: 'Eve <evil>\nX' } });
    expect(JSON.parse(json).success).toBe(true);
    const dir = path.join(s.base, 'users', 'u-42', 'Documents', 'data');
    expect(git(dir, 'log', '--format=%an|%ae|%s|%b').trim()).toBe('Eve evilX|u-42@fileshed|My message|with body');
    expect(fsckClean(dir).ok).toBe(true);
  });
});

describe('large files', () => {
  it('a file above the streaming threshold (16 MB) is hashed and deflated in chunks, byte-exact', async () => {
    s = makeShed();
    fs.mkdirSync(docs(), { recursive: true });
    const big = Buffer.alloc(17 * 1024 * 1024 + 123);
    for (let i = 0; i < big.length; i += 4096) big.writeUInt32BE(i, i); // not all zeros
    fs.writeFileSync(path.join(docs(), 'big.bin'), big);
    const { commitZone } = await import('../../src/core/services/vcs/index.js');
    const id = await commitZone({ root: fs.realpathSync(docs()), label: 'Documents' }, ['big.bin'], { id: 'alice', name: 'ALICE', email: '', role: 'user' }, 'big');
    expect(id).toMatch(/^[0-9a-f]{40}$/);
    expect(git(docs(), 'rev-parse', 'HEAD:big.bin').trim()).toBe(git(docs(), 'hash-object', 'big.bin').trim());
    expect(git(docs(), 'cat-file', '-s', 'HEAD:big.bin').trim()).toBe(String(big.length));
    expectHealthy();
  });
});

describe('the index stays equal to HEAD', () => {
  it('rebuilds the index when it is missing or out of step, keeping status clean', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'a' });
    await s.call('shed_create_file', { zone: 'documents', path: 'b/c.txt', content: 'c' });
    fs.rmSync(path.join(docs(), '../git/index'));
    await s.call('shed_create_file', { zone: 'documents', path: 'd.txt', content: 'd' });
    expectHealthy();
    // An index from a real git (with its own extensions) is spliced, not rebuilt.
    git(docs(), 'status');
    git(docs(), 'update-index', '--refresh');
    git(docs(), 'read-tree', 'HEAD');
    await s.call('shed_patch_text', { zone: 'documents', path: 'b/c.txt', content: 'more', position: 'end' });
    expectHealthy();
    expect(git(docs(), 'ls-files').trim().split('\n')).toEqual(['a.txt', 'b/c.txt', 'd.txt']);
  });
  it('writes the split-index form: a small git/index over one shared index, rebased after many changes', async () => {
    s = makeShed();
    for (let i = 0; i < 5; i++) await s.call('shed_create_file', { zone: 'documents', path: `f${i}.txt`, content: `${i}` });
    const gitdir = path.join(docs(), '../git');
    const shared = () => fs.readdirSync(gitdir).filter((n) => n.startsWith('sharedindex.'));
    expect(shared()).toHaveLength(1);
    expect(git(docs(), 'ls-files', '--debug').length).toBeGreaterThan(0);
    expect(git(docs(), 'ls-files').trim().split('\n')).toEqual(['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'f4.txt']);
    // 1,200 new files in one change exceed what the small index may hold: a new shared index replaces the old one.
    const before = shared()[0];
    for (let i = 0; i < 1200; i++) {
      fs.mkdirSync(path.join(docs(), 'many'), { recursive: true });
      fs.writeFileSync(path.join(docs(), 'many', `m${i}.txt`), `${i}`);
    }
    const { commitZone } = await import('../../src/core/services/vcs/index.js');
    await commitZone({ root: fs.realpathSync(docs()), label: 'Documents' }, ['many'], { id: 'alice', name: 'ALICE', email: '', role: 'user' }, 'many');
    expect(shared()).toHaveLength(1);
    expect(shared()[0]).not.toBe(before);
    expect(fs.statSync(path.join(gitdir, 'index')).size).toBeLessThan(200);
    await s.call('shed_delete', { zone: 'documents', path: 'f2.txt' });
    expect(fs.statSync(path.join(gitdir, 'index')).size).toBeLessThan(200);
    expect(git(docs(), 'ls-files').trim().split('\n')).toHaveLength(1204);
    expectHealthy();
  });

  it('takes over whatever index a real git wrote (plain, split with replacements)', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'a' });
    await s.call('shed_create_file', { zone: 'documents', path: 'b.txt', content: 'b' });
    git(docs(), 'update-index', '--no-split-index');
    await s.call('shed_create_file', { zone: 'documents', path: 'c.txt', content: 'c' });
    expectHealthy();
    // With core.splitIndex, git records a staged change as a replacement of the shared entry.
    git(docs(), 'config', 'core.splitIndex', 'true');
    git(docs(), 'update-index', '--split-index');
    fs.writeFileSync(path.join(docs(), 'b.txt'), 'b changed');
    git(docs(), 'add', 'b.txt');
    const { decodeEwah } = await import('../../src/core/formats/git/ewah.js');
    const index = fs.readFileSync(path.join(docs(), '../git/index'));
    const at = index.indexOf('link');
    const link = index.subarray(at + 8, at + 8 + index.readUInt32BE(at + 4));
    const deletes = decodeEwah(link, 20)!;
    expect(decodeEwah(link, 20 + deletes.size)!.positions.length).toBeGreaterThan(0);
    const { commitZone } = await import('../../src/core/services/vcs/index.js');
    await commitZone({ root: fs.realpathSync(docs()), label: 'Documents' }, ['b.txt'], { id: 'alice', name: 'ALICE', email: '', role: 'user' }, 'b');
    expectHealthy();
    await s.call('shed_patch_text', { zone: 'documents', path: 'a.txt', content: 'more', position: 'end' });
    expectHealthy();
    expect(git(docs(), 'ls-files').trim().split('\n')).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });
});

describe('repositories made elsewhere', () => {
  it('commits on top of a repository a real git made on master, with packed objects and refs', async () => {
    s = makeShed();
    fs.mkdirSync(docs(), { recursive: true });
    git(docs(), 'init', '-q', '-b', 'master');
    fs.writeFileSync(path.join(docs(), 'old.txt'), 'old\n');
    git(docs(), 'add', '-A');
    git(docs(), '-c', 'user.name=Py', '-c', 'user.email=py@x', 'commit', '-q', '-m', 'python era');
    git(docs(), 'gc', '-q');
    // A repository of an earlier version (data/.git): the first call moves it to git/ (vcs/migrate.ts).
    expect(fs.existsSync(path.join(docs(), '.git/refs/heads/master'))).toBe(false);
    const r = await s.call('shed_create_file', { zone: 'documents', path: 'new.txt', content: 'n\n' });
    expect(r.data?.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(r.message).toContain('version history of Documents moved out of the zone');
    expect(fs.existsSync(path.join(docs(), '.git'))).toBe(false);
    const subjects = git(docs(), 'log', '--format=%s', 'master').trim().split('\n');
    expect(subjects).toHaveLength(2);
    expect(subjects[1]).toBe('python era');
    expect(git(docs(), 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/master');
    expect(changedIn()).toEqual(['new.txt']);
    expectHealthy();
    const { gitCommand } = await import('../../src/core/services/vcs/index.js');
    const zone = { name: 'documents', label: 'Documents', root: fs.realpathSync(docs()), versioned: true } as never;
    const out = await gitCommand(zone, ['show', 'HEAD~1:old.txt'], { id: 'alice', name: 'ALICE', email: '', role: 'user' });
    expect(out.stdout).toBe('old\n');
  });
});
