import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commitZone } from '../../src/core/services/vcs/index.js';
import { sweepTemps } from '../../src/core/services/vcs/lock.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { ALICE, fsckClean, git, gitRun, put, tempZone } from './helpers.js';

// Child processes run the same vcs code, bundled from the source for them.
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-vcs-child-'));
const bundle = path.join(work, 'vcs.mjs');
const child = path.join(work, 'child.mjs');

beforeAll(async () => {
  await build({ entryPoints: [path.resolve('src/core/services/vcs/index.ts')], bundle: true, platform: 'node', format: 'esm', outfile: bundle, logLevel: 'silent',
    // Some bundled libraries call require(): give the ESM bundle one (as build.mjs does).
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  fs.writeFileSync(
    child,
    `import fs from 'node:fs';
import path from 'node:path';
import { commitZone } from ${JSON.stringify(bundle)};
const [root, tag, count] = process.argv.slice(2);
const user = { id: tag, name: tag, email: '', role: 'user' };
for (let i = 0; i < Number(count); i++) {
  const rel = tag + '/f' + (i % 40) + '.txt';
  fs.mkdirSync(path.join(root, tag), { recursive: true });
  fs.writeFileSync(path.join(root, rel), tag + ' ' + i + ' ' + Math.random() + '\\n');
  await commitZone({ root, label: 'Documents' }, [rel], user, tag + ' ' + i);
  process.stdout.write(i + '\\n');
}
`,
  );
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

let z: ReturnType<typeof tempZone> | undefined;
let s: Shed | undefined;
afterEach(() => {
  z?.cleanup();
  s?.cleanup();
  z = undefined;
  s = undefined;
});

function runChild(root: string, tag: string, count: number): { done: Promise<number | null>; firstLine: Promise<void>; kill(): void } {
  const p = spawn(process.execPath, [child, root, tag, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = new Promise<void>((resolve) => p.stdout.once('data', () => resolve()));
  const done = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
  return { done, firstLine, kill: () => p.kill('SIGKILL') };
}

describe('crash safety', () => {
  it('a process killed at random moments of its commits leaves a valid repository with HEAD at a commit', async () => {
    z = tempZone();
    for (let i = 0; i < 300; i++) put(z.root, `base/d${i % 10}/f${i}.txt`, `${i}\n`);
    await commitZone(z, [''], ALICE, 'base');
    let previous = 1;
    let killedInsideCommit = 0;
    for (let round = 0; round < 12; round++) {
      const c = runChild(z.root, `p${round}`, 100000);
      await c.firstLine;
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 60)));
      c.kill();
      await c.done;
      // The lock is held only while committing: finding it proves the kill landed inside a commit.
      if (fs.existsSync(path.join(z.root, '..', 'git', 'fileshed.lock'))) killedInsideCommit++;
      const f = fsckClean(z.root);
      expect(f.output).toBe('');
      expect(f.ok).toBe(true);
      const head = gitRun(z.root, 'rev-parse', '--verify', 'HEAD^{commit}');
      expect(head.status).toBe(0);
      const count = Number(git(z.root, 'rev-list', '--count', 'HEAD').trim());
      expect(count).toBeGreaterThan(previous); // the child committed at least once, nothing was lost
      previous = count;
    }
    expect(killedInsideCommit).toBeGreaterThan(0);
    // The next writer breaks the dead process's lock and carries on; the index is brought back in step.
    const id = await commitZone(z, [''], ALICE, 'after the crashes');
    expect(id === undefined || /^[0-9a-f]{40}$/.test(id)).toBe(true);
    expect(git(z.root, 'status', '--porcelain')).toBe('');
    expect(fsckClean(z.root).ok).toBe(true);
    expect(fs.existsSync(path.join(z.root, '..', 'git', 'fileshed.lock'))).toBe(false);
  }, 120_000);
});

describe('concurrency', () => {
  it('20 parallel writes to different files in one process: 20 commits, one line of history', async () => {
    s = makeShed();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s!.call('shed_create_file', { zone: 'documents', path: `f${i}.txt`, content: `${i}\n`, message: `write ${i}` })));
    expect(results.every((r) => r.success && /^[0-9a-f]{7}$/.test(String(r.data?.commit)))).toBe(true);
    const dir = s.zonePath('documents');
    expect(git(dir, 'rev-list', '--count', 'HEAD').trim()).toBe('20');
    expect(git(dir, 'rev-list', '--merges', 'HEAD').trim()).toBe('');
    expect(git(dir, 'log', '--format=%s').trim().split('\n').sort()).toEqual(Array.from({ length: 20 }, (_, i) => `write ${i}`).sort());
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(fsckClean(dir).ok).toBe(true);
  });

  it('parallel commitZone calls without the dispatcher queue are serialised by the repository lock', async () => {
    z = tempZone();
    put(z.root, 'seed.txt', 'seed\n');
    await commitZone(z, [''], ALICE, 'seed');
    for (let i = 0; i < 20; i++) put(z.root, `f${i}.txt`, `${i}\n`);
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => commitZone(z!, [`f${i}.txt`], ALICE, `c${i}`)));
    expect(ids.filter(Boolean)).toHaveLength(20);
    expect(git(z.root, 'rev-list', '--count', 'HEAD').trim()).toBe('21');
    expect(git(z.root, 'status', '--porcelain')).toBe('');
  });

  it('two processes committing to the same repository at once lose no commit', async () => {
    z = tempZone();
    put(z.root, 'seed.txt', 'seed\n');
    await commitZone(z, [''], ALICE, 'seed');
    const a = runChild(z.root, 'a', 30);
    const b = runChild(z.root, 'b', 30);
    expect(await a.done).toBe(0);
    expect(await b.done).toBe(0);
    expect(git(z.root, 'rev-list', '--count', 'HEAD').trim()).toBe('61');
    const subjects = new Set(git(z.root, 'log', '--format=%s').trim().split('\n'));
    for (let i = 0; i < 30; i++) {
      expect(subjects.has(`a ${i}`)).toBe(true);
      expect(subjects.has(`b ${i}`)).toBe(true);
    }
    expect(git(z.root, 'status', '--porcelain')).toBe('');
    expect(fsckClean(z.root).ok).toBe(true);
  }, 60_000);

  it('a lock naming our own pid (left by an earlier process with that pid) is broken at once', async () => {
    z = tempZone();
    put(z.root, 'a.txt', 'a');
    await commitZone(z, ['a.txt'], ALICE, 'a');
    fs.writeFileSync(path.join(z.root, '..', 'git', 'fileshed.lock'), `${process.pid} ${os.hostname()} 0 cafebabe`);
    put(z.root, 'a.txt', 'b');
    const t0 = Date.now();
    expect(await commitZone(z, ['a.txt'], ALICE, 'b')).toMatch(/^[0-9a-f]{40}$/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('a lock left by a dead process is broken; its temp files are swept', async () => {
    z = tempZone();
    put(z.root, 'a.txt', 'a');
    await commitZone(z, ['a.txt'], ALICE, 'a');
    fs.writeFileSync(path.join(z.root, '..', 'git', 'fileshed.lock'), `999999 ${os.hostname()} 0 deadbeef`);
    fs.writeFileSync(path.join(z.root, '..', 'git', 'fileshed-ref-abc.tmp'), 'junk');
    fs.writeFileSync(path.join(z.root, '..', 'git', 'objects', 'tmp_obj_fileshed_x'), 'junk');
    // Where earlier versions put temp objects: swept by the full sweep (start, maintenance), not on a takeover (O(1)).
    fs.mkdirSync(path.join(z.root, '..', 'git', 'objects', 'ab'), { recursive: true });
    fs.writeFileSync(path.join(z.root, '..', 'git', 'objects', 'ab', 'tmp_obj_fileshed_y'), 'junk');
    put(z.root, 'a.txt', 'b');
    expect(await commitZone(z, ['a.txt'], ALICE, 'b')).toMatch(/^[0-9a-f]{40}$/);
    expect(fs.existsSync(path.join(z.root, '..', 'git', 'fileshed-ref-abc.tmp'))).toBe(false);
    expect(fs.existsSync(path.join(z.root, '..', 'git', 'objects', 'tmp_obj_fileshed_x'))).toBe(false);
    expect(fs.existsSync(path.join(z.root, '..', 'git', 'fileshed.lock'))).toBe(false);
    expect(fs.existsSync(path.join(z.root, '..', 'git', 'objects', 'ab', 'tmp_obj_fileshed_y'))).toBe(true);
    sweepTemps(path.join(z.root, '..', 'git'), true);
    expect(fs.existsSync(path.join(z.root, '..', 'git', 'objects', 'ab', 'tmp_obj_fileshed_y'))).toBe(false);
  });
});
