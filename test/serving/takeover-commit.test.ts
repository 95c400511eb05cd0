/**
 * A process killed inside a Documents commit (a real child process, SIGKILL while it holds the
 * call lock and the repository lock, the commit half written): the next call takes both locks
 * over, commits exactly what the killed call was recording (the paths it left pending, not a walk
 * of the whole zone), then its own change, and the history stays valid. And lock-file holders whose
 * event loop stalled past the heartbeat margin: they go on when nobody took their lock over.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tools } from '../../src/index.js';
import { assertFence, STALE_MS, withLease } from '../../src/core/base/locks/lease.js';
import { repoFor } from '../../src/core/services/vcs/repo.js';
import { pendingChanges, pendingRecords } from '../../src/core/services/vcs/pending.js';

const CHILD = `
import { Tools } from './plugin.mjs';
const [base] = process.argv.slice(2);
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: base, sandbox: 'validated' };
const r = JSON.parse(await tools.shed_copy_storage_to_documents({ src: 'big', dest: 'big', __user__: { id: 'kim', name: 'Kim' } }));
process.stdout.write(JSON.stringify(r));
`;

const { banner: BANNER } = createRequire(import.meta.url)('../../build/bundle-banner.cjs') as { banner: string };
/** The real git on a Documents work tree (`data/`), whose repository is `git/` beside it. */
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['--git-dir', path.join(cwd, '..', 'git'), '--work-tree', cwd, ...args], { cwd, encoding: 'utf8' }).trim();

let dir: string;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-takeover-'));
  await build({ entryPoints: [path.resolve('src/index.ts')], outfile: path.join(dir, 'plugin.mjs'), bundle: true, platform: 'node', format: 'esm', logLevel: 'silent', loader: { '.wasm': 'binary', '.pl': 'text' }, banner: { js: BANNER } });
  fs.writeFileSync(path.join(dir, 'child.mjs'), CHILD);
}, 60_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('killed inside a Documents commit', () => {
  it('the next call commits what the killed call was recording (O(change), not a walk), then its own change', async () => {
    const base = path.join(dir, 'base');
    const tools = new Tools();
    tools.valves = { ...tools.valves, storage_base_path: base, sandbox: 'validated' };
    const kim = { __user__: { id: 'kim', name: 'Kim' } };
    const call = async (fn: string, args: Record<string, unknown>) => JSON.parse(await (tools as unknown as Record<string, (a: unknown) => Promise<string>>)[fn]!({ ...args, ...kim })) as { success: boolean; error?: { code: string } };
    expect((await call('shed_create_file', { zone: 'documents', path: 'first.md', content: 'first\n' })).success).toBe(true);
    // A folder big enough that committing it takes a while: the kill lands inside that commit.
    const big = path.join(base, 'users', 'kim', 'Storage', 'data', 'big');
    for (let d = 0; d < 20; d++) {
      fs.mkdirSync(path.join(big, `d${d}`), { recursive: true });
      for (let f = 0; f < 150; f++) fs.writeFileSync(path.join(big, `d${d}`, `f${f}.txt`), `${d}/${f}\n`.repeat(40));
    }
    const docs = fs.realpathSync(path.join(base, 'users', 'kim', 'Documents', 'data'));
    const repo = repoFor({ root: docs, label: 'Documents' });
    // The repository lock, held by the child once its commit has begun.
    const lock = path.join(repo.gitdir, 'fileshed.lock');
    const child = spawn(process.execPath, [path.join(dir, 'child.mjs'), base], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((r) => child.once('exit', r));
    while (!fs.existsSync(lock) && child.exitCode === null) await new Promise((r) => setTimeout(r, 1));
    child.kill('SIGKILL');
    await exited;
    expect(fs.existsSync(lock), 'the child was killed inside the commit').toBe(true);
    expect(pendingChanges(repo)?.paths).toEqual(['big']);
    expect(git(docs, 'log', '--format=%s')).not.toContain('Import big');
    // Something else uncommitted in the zone: a walk of the zone would sweep it into the recovery commit.
    fs.writeFileSync(path.join(docs, 'untouched.txt'), 'not part of the killed call\n');

    const after = await call('shed_patch_text', { zone: 'documents', path: 'after.md', content: 'after', position: 'end', message: 'after the kill' });
    expect(after.success, JSON.stringify(after.error)).toBe(true);
    expect(pendingRecords(repo)).toEqual([]);
    expect(git(docs, 'log', '--format=%s').split('\n').slice(0, 2)).toEqual(['after the kill', 'Recovered changes after an interrupted call']);
    const recovered = git(docs, 'show', '--name-only', '--format=', 'HEAD~1').split('\n');
    expect(recovered).toHaveLength(3000);
    expect(recovered.every((f) => f.startsWith('big/'))).toBe(true);
    expect(git(docs, 'status', '--porcelain')).toBe('?? untouched.txt');
    git(docs, 'fsck', '--strict');
    // No temp object of the killed writer is left where the takeover looked.
    expect(fs.readdirSync(path.join(repo.gitdir, 'objects')).filter((n) => n.startsWith('tmp_obj_'))).toEqual([]);
  }, 120_000);
});

describe('lock-file holders and stalls', () => {
  const locks = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-stall-'));
  afterAll(() => fs.rmSync(locks, { recursive: true, force: true }));
  const busy = () => Object.assign(new Error('busy'), { code: 'FILE_LOCKED' });
  /** Holds the event loop (no timer, no heartbeat) past the holder's margin. */
  const stall = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, STALE_MS - 1500);

  it('a holder whose event loop stalled goes on when nobody took its lock (and touches it again)', async () => {
    const file = path.join(locks, 'a.lock');
    await withLease(file, { waitMs: 300, busy }, async () => {
      const before = fs.statSync(file).mtimeMs;
      stall();
      expect(() => assertFence()).not.toThrow();
      expect(fs.statSync(file).mtimeMs).toBeGreaterThan(before);
    });
  });

  it('a holder whose event loop stalled while its lock was taken over stops (LOCK_ERROR)', async () => {
    const file = path.join(locks, 'b.lock');
    await expect(
      withLease(file, { waitMs: 300, busy }, async () => {
        stall();
        fs.writeFileSync(file, JSON.stringify({ pid: 1, host: 'another-host', nonce: 'thief', at: '' })); // taken over meanwhile
        assertFence();
      }),
    ).rejects.toMatchObject({ code: 'LOCK_ERROR' });
  });
});
