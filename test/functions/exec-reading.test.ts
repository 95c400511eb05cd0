/**
 * A command that only reads (cat, grep, sort without -o...) runs without the call lock, in the kernel
 * modes: it answers while a long call of the same user holds the lock, its zone is read-only to it,
 * and it changes nothing of what a modifying call records (no turn, no commit, no conversion). A
 * program of that kind given an output (sort -o, uniq IN OUT), a zone with blocked entries to hide,
 * a zone not yet converted to the user's identity, or a space a crash left to recover runs as a
 * modifying call, as before.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

const sheds: Shed[] = [];
afterEach(() => {
  for (const s of sheds.splice(0)) s.cleanup();
});

function shed(valves: Record<string, unknown>): Shed {
  const s = makeShed(valves);
  sheds.push(s);
  return s;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 20_000; !cond(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const lockOf = (s: Shed, user = 'alice') => path.join(s.base, 'users', user, 'Storage', 'locks', '.shed-call.lck');
const commits = (s: Shed) => Number(execFileSync('git', ['--git-dir', path.join(s.base, 'users', 'alice', 'Documents', 'git'), 'rev-list', '--count', 'HEAD']).toString().trim());

describe.each(['landlock', 'bwrap'] as const)('%s mode', (mode) => {
  it('a reading command answers while a long call of the same user holds the call lock; a writing one waits its turn', async () => {
    const s = shed({ sandbox: mode });
    expect((await s.call('shed_create_file', { zone: 'storage', path: 'in.txt', content: 'b\na\n' })).success).toBe(true);
    const order: string[] = [];
    const long = s.call('shed_exec', { zone: 'storage', cmd: 'sleep', args: ['4'] }).then((r) => (order.push('sleep'), r));
    await until(() => fs.existsSync(lockOf(s)), 'the long call to hold the lock');
    const cat = await s.call('shed_exec', { zone: 'storage', cmd: 'cat', args: ['in.txt'] });
    order.push('cat');
    expect(cat.data?.stdout).toBe('b\na\n');
    expect(cat.turn).toBeUndefined();
    const grep = await s.call('shed_exec', { zone: 'storage', cmd: 'grep', args: ['-c', 'a', 'in.txt'] });
    order.push('grep');
    expect(grep.data?.stdout.trim()).toBe('1');
    // sort -o writes: it waits for the lock, so it ends after the long call.
    const sorted = await s.call('shed_exec', { zone: 'storage', cmd: 'sort', args: ['-o', 'sorted.txt', 'in.txt'] }).then((r) => (order.push('sort -o'), r));
    expect((await long).success).toBe(true);
    expect(order).toEqual(['cat', 'grep', 'sleep', 'sort -o']);
    expect(sorted.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'sorted.txt'), 'utf8')).toBe('a\nb\n');
  }, 60_000);

  it('a pure reader given an output runs as a modifying call: written, captured for undo, committed in Documents', async () => {
    const s = shed({ sandbox: mode });
    await s.call('shed_create_file', { zone: 'storage', path: 'in.txt', content: 'b\nb\na\n' });
    const uniq = await s.call('shed_exec', { zone: 'storage', cmd: 'uniq', args: ['in.txt', 'out.txt'] });
    expect(uniq.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'out.txt'), 'utf8')).toBe('b\na\n');
    expect(uniq.turn).toBeDefined();
    const undone = await s.call('shed_undo', { apply: true });
    expect(undone.success).toBe(true);
    expect(fs.existsSync(s.zonePath('storage', 'out.txt'))).toBe(false);

    await s.call('shed_create_file', { zone: 'documents', path: 'd.txt', content: 'z\ny\n' });
    const before = commits(s);
    const cat = await s.call('shed_exec', { zone: 'documents', cmd: 'cat', args: ['d.txt'] });
    expect(cat.data?.stdout).toBe('z\ny\n');
    expect(cat.data?.commit).toBeUndefined();
    expect(commits(s)).toBe(before);
    const sort = await s.call('shed_exec', { zone: 'documents', cmd: 'sort', args: ['-o', 'd.txt', 'd.txt'] });
    expect(sort.data?.commit).toBeDefined();
    expect(commits(s)).toBe(before + 1);
    expect(fs.readFileSync(s.zonePath('documents', 'd.txt'), 'utf8')).toBe('y\nz\n');
  }, 60_000);

  it('with blocked patterns, a reading command takes the locked path: the blocked entry is absent while it runs', async () => {
    const s = shed({ sandbox: mode, blocked_patterns: '*.env' });
    await s.call('shed_create_file', { zone: 'storage', path: 'notes.txt', content: 'nothing here\n' });
    fs.writeFileSync(s.zonePath('storage', 'keys.env'), 'TOKEN=hunter2\n');
    // Hiding moves files: that waits for the lock the long call holds (the grep ends after it).
    const order: string[] = [];
    const long = s.call('shed_exec', { zone: 'storage', cmd: 'sleep', args: ['3'] }).then((r) => (order.push('sleep'), r));
    await until(() => fs.existsSync(lockOf(s)), 'the long call to hold the lock');
    const grep = await s.call('shed_exec', { zone: 'storage', cmd: 'grep', args: ['-r', 'hunter2', '.'] }).then((r) => (order.push('grep'), r));
    expect((await long).success).toBe(true);
    expect(order).toEqual(['sleep', 'grep']);
    expect(grep.success).toBe(true);
    expect(JSON.stringify(grep)).not.toContain('hunter2\\n');
    expect(grep.data?.returncode).toBe(1);
    const ls = await s.call('shed_exec', { zone: 'storage', cmd: 'ls', args: ['-a'] });
    expect(ls.data?.stdout).not.toContain('keys.env');
    expect(fs.readFileSync(s.zonePath('storage', 'keys.env'), 'utf8')).toBe('TOKEN=hunter2\n');
  }, 60_000);

  it('after a crash, a reading command is the first call that recovers: it takes the lock of the dead holder over and commits what was left', async () => {
    const s = shed({ sandbox: mode });
    await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'one\n' });
    const before = commits(s);
    // A call killed between its write and its commit: the file changed, its lock file left behind by a dead process.
    fs.writeFileSync(s.zonePath('documents', 'a.txt'), 'two\n');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    fs.writeFileSync(lockOf(s), JSON.stringify({ pid: dead, host: os.hostname(), nonce: 'dead0000', at: new Date().toISOString() }));
    const cat = await s.call('shed_exec', { zone: 'documents', cmd: 'cat', args: ['a.txt'] });
    expect(cat.data?.stdout).toBe('two\n');
    expect(commits(s)).toBe(before + 1);
    expect(execFileSync('git', ['--git-dir', path.join(s.base, 'users', 'alice', 'Documents', 'git'), 'log', '-1', '--format=%s']).toString()).toMatch(/Recovered changes after an interrupted call/);
    expect(fs.existsSync(lockOf(s))).toBe(false);
    // Left by an earlier process with this one's pid (a restarted container's server is pid 1 again): as dead.
    fs.writeFileSync(s.zonePath('documents', 'a.txt'), 'three\n');
    fs.writeFileSync(lockOf(s), JSON.stringify({ pid: process.pid, host: os.hostname(), nonce: 'mine0000', at: new Date().toISOString() }));
    expect((await s.call('shed_exec', { zone: 'documents', cmd: 'cat', args: ['a.txt'] })).data?.stdout).toBe('three\n');
    expect(commits(s)).toBe(before + 2);
    expect(fs.existsSync(lockOf(s))).toBe(false);
  }, 60_000);

  it.skipIf(process.getuid?.() !== 0)('a reading command never converts a zone: the first command of a user is a modifying call that does', async () => {
    const s = shed({ sandbox: mode, identity_separation: 'auto', identity_id_first: 2_600_000 });
    const storage = s.zonePath('storage');
    fs.mkdirSync(storage, { recursive: true });
    fs.writeFileSync(path.join(storage, 'old.txt'), 'from before\n');
    // The file predates identities: the server's own, as an earlier version left it.
    expect(fs.statSync(path.join(storage, 'old.txt')).uid).toBe(0);
    const cat = await s.call('shed_exec', { zone: 'storage', cmd: 'cat', args: ['old.txt'] });
    expect(cat.data?.stdout).toBe('from before\n');
    const uid = fs.statSync(path.join(storage, 'old.txt')).uid;
    expect(uid).toBeGreaterThanOrEqual(2_600_000);
    // Now converted: the next reads run without the lock, as the user's uid (bubblewrap's user namespace shows other uids as its own).
    const id = await s.call('shed_exec', { zone: 'storage', cmd: 'stat', args: ['-c', '%u', 'old.txt'] });
    if (mode === 'landlock') expect(Number(id.data?.stdout.trim())).toBe(uid);
    expect(id.data?.returncode).toBe(0);
  }, 60_000);
});
