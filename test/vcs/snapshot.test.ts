import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { changedPaths, commitZone, snapshot } from '../../src/core/services/vcs/index.js';
import { ALICE, fsckClean, git, put, tempZone } from './helpers.js';

let z: ReturnType<typeof tempZone>;
afterEach(() => z?.cleanup());

/** A snapshot taken well after the files were written, so nothing counts as racy. */
async function settled(): Promise<ReturnType<typeof snapshot>> {
  await new Promise((r) => setTimeout(r, 150));
  return await snapshot(z.root);
}

describe('snapshot + changedPaths find what a command changed, by stat only', () => {
  it('reports created, modified, deleted, renamed, chmod-ed and re-linked entries, nothing else', async () => {
    z = tempZone();
    put(z.root, 'same.txt', 'same');
    put(z.root, 'mod.txt', 'aaaa');
    put(z.root, 'del.txt', 'x');
    put(z.root, 'old/name.txt', 'r');
    put(z.root, 'exe.sh', 'echo');
    fs.symlinkSync('same.txt', path.join(z.root, 'ln'));
    put(z.root, 'dir/gone/deep.txt', 'd');
    const before = await settled();
    fs.writeFileSync(path.join(z.root, 'mod.txt'), 'bbbb'); // same size
    fs.rmSync(path.join(z.root, 'del.txt'));
    fs.renameSync(path.join(z.root, 'old'), path.join(z.root, 'new'));
    fs.chmodSync(path.join(z.root, 'exe.sh'), 0o755);
    fs.rmSync(path.join(z.root, 'ln'));
    fs.symlinkSync('mod.txt', path.join(z.root, 'ln'));
    fs.rmSync(path.join(z.root, 'dir/gone'), { recursive: true });
    put(z.root, 'created/x/y.txt', 'y');
    fs.mkdirSync(path.join(z.root, 'empty-folder'));
    const after = await snapshot(z.root);
    expect(changedPaths(before, after)).toEqual(['created/x/y.txt', 'del.txt', 'dir/gone/deep.txt', 'exe.sh', 'ln', 'mod.txt', 'new/name.txt', 'old/name.txt']);
  });

  it('a file whose mtime was put back is still caught by its ctime; a .git folder (never versioned) is not looked at', async () => {
    z = tempZone();
    put(z.root, 'a.txt', 'aaaa');
    fs.mkdirSync(path.join(z.root, '.git'));
    put(z.root, '.git/HEAD', 'x');
    const st = fs.statSync(path.join(z.root, 'a.txt'));
    const before = await settled();
    fs.writeFileSync(path.join(z.root, 'a.txt'), 'bbbb');
    fs.utimesSync(path.join(z.root, 'a.txt'), st.atime, st.mtime);
    put(z.root, '.git/HEAD', 'changed');
    expect(changedPaths(before, await snapshot(z.root))).toEqual(['a.txt']);
    expect([...before.entries.keys()].some((k) => k.startsWith('.git'))).toBe(false);
  });

  it('files written just before the snapshot are reported (racy), and the commit drops them if unchanged', async () => {
    z = tempZone();
    put(z.root, 'stable.txt', 's');
    put(z.root, 'fresh.txt', 'f');
    await commitZone(z, [''], ALICE, 'init');
    await new Promise((r) => setTimeout(r, 150));
    put(z.root, 'fresh.txt', 'f'); // rewritten just now, same content
    const before = await snapshot(z.root);
    const after = await snapshot(z.root);
    expect(changedPaths(before, after)).toEqual(['fresh.txt']);
    expect(await commitZone(z, changedPaths(before, after), ALICE, 'nothing')).toBeUndefined();
    expect(git(z.root, 'rev-list', '--count', 'HEAD').trim()).toBe('1');
  });

  it('the paths feed recordChange: one commit listing exactly what changed (what shed_exec does)', async () => {
    z = tempZone();
    for (let i = 0; i < 50; i++) put(z.root, `d${i % 5}/f${i}.txt`, `${i}\n`);
    await commitZone(z, [''], ALICE, 'init');
    const before = await settled();
    put(z.root, 'd1/f1.txt', 'changed\n');
    fs.rmSync(path.join(z.root, 'd2'), { recursive: true });
    put(z.root, 'd9/new.txt', 'new\n');
    const paths = changedPaths(before, await snapshot(z.root));
    const { recordChange } = await import('../../src/core/services/vcs/index.js');
    const r = await recordChange(z, { paths, summary: 'Run touch' }, ALICE, undefined);
    expect(r.commit).toMatch(/^[0-9a-f]{7}$/);
    const listed = git(z.root, 'show', '--name-status', '--format=%s', 'HEAD').trim().split('\n');
    expect(listed[0]).toBe('Run touch');
    expect(listed.slice(1).filter(Boolean).sort()).toEqual(['A\td9/new.txt', 'D\td2/f12.txt', 'D\td2/f17.txt', 'D\td2/f2.txt', 'D\td2/f22.txt', 'D\td2/f27.txt', 'D\td2/f32.txt', 'D\td2/f37.txt', 'D\td2/f42.txt', 'D\td2/f47.txt', 'D\td2/f7.txt', 'M\td1/f1.txt']);
    expect(git(z.root, 'status', '--porcelain')).toBe('');
    expect(fsckClean(z.root).ok).toBe(true);
  });

  it('a command that changed nothing makes no commit', async () => {
    z = tempZone();
    put(z.root, 'a.txt', 'a');
    await commitZone(z, [''], ALICE, 'init');
    const before = await settled();
    const { recordChange } = await import('../../src/core/services/vcs/index.js');
    expect(await recordChange(z, { paths: changedPaths(before, await snapshot(z.root)), summary: 'Run ls' }, ALICE, undefined)).toEqual({});
  });
});
