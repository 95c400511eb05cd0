/**
 * Crashes during a locked edit: a process killed (SIGKILL) while saving leaves the file either
 * old or new (never mixed), and the edit recoverable (save again, or cancel, or another
 * conversation after shed_force_unlock). Every state between the steps of save and open is
 * also built directly and recovered from; a killed safe-mode writer's lock is stale at once.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { buildChildren, type Children } from './children.js';
import { copyPath, exists, listAll, lockPath, plantLock, put, read, readLockJson, workBase } from './helpers.js';

let kids: Children;
beforeAll(async () => {
  kids = await buildChildren();
}, 60_000);
afterAll(() => kids.cleanup());

let s: Shed;
beforeEach(() => {
  s = makeShed({ sandbox: 'validated' });
});
afterEach(() => s.cleanup());

const SIZE = 8 * 1024 * 1024;

/** The file is entirely one of the two versions. */
function version(file: string): 'old' | 'new' {
  const bytes = fs.readFileSync(file);
  if (bytes.equals(Buffer.alloc(SIZE, 'A'))) return 'old';
  if (bytes.equals(Buffer.alloc(SIZE, 'B'))) return 'new';
  throw new Error(`mixed or truncated file: ${bytes.length} bytes`);
}

describe('kill -9 during save', () => {
  it('leaves the file old or new and the edit recoverable, over many random kill moments', async () => {
    const file = s.zonePath('storage', 'big.bin');
    const seen = new Set<string>();
    for (let round = 0; round < 8; round++) {
      put(file, Buffer.alloc(SIZE, 'A'));
      const child = kids.run('edit-save', { base: s.base, chat: 'k', path: 'big.bin', fill: 'B', size: SIZE });
      await child.waitFor('SAVING');
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 12)));
      child.kill();
      await child.done;

      const v = version(file);
      const locked = exists(lockPath(s, 'big.bin'));
      seen.add(`${v}${locked ? '+lock' : ''}`);
      if (locked) {
        expect(readLockJson(s, 'big.bin').conv_id).toBe('k');
        // The other conversation is kept out until the edit is recovered.
        expect((await s.call('shed_lockedit_open', { zone: 'storage', path: 'big.bin' }, { chat: 'other' })).error!.code).toBe('FILE_LOCKED');
        // The conversation that was saving saves again (or learns the save had completed).
        const again = await s.call('shed_lockedit_save', { zone: 'storage', path: 'big.bin' }, { chat: 'k' });
        if (!again.success) expect(again.error!.code).toBe('NOT_IN_EDIT_MODE');
        expect(exists(lockPath(s, 'big.bin'))).toBe(false);
      } else {
        expect(v).toBe('new');
      }
      expect(version(file)).toBe('new');
      expect(exists(copyPath(s, 'big.bin', 'k'))).toBe(false);
      // Nothing half-written is left in the zone, and the file can be edited again.
      expect(listAll(s.zonePath('storage'))).toEqual(['big.bin']);
      const reopen = await s.call('shed_lockedit_open', { zone: 'storage', path: 'big.bin' }, { chat: 'other' });
      expect(reopen.success, JSON.stringify(reopen.error)).toBe(true);
      await s.call('shed_lockedit_cancel', { zone: 'storage', path: 'big.bin' }, { chat: 'other' });
    }
    expect([...seen].every((state) => ['old+lock', 'new+lock', 'new'].includes(state))).toBe(true);
  }, 120_000);
});

describe('every state between the steps, recovered', () => {
  beforeEach(() => put(s.zonePath('storage', 'f.txt'), 'old\n'));
  const call = (fn: string, chat = 'c1') => s.call(fn, { zone: 'storage', path: 'f.txt' }, { chat });

  it('killed before the working copy replaced the file: save again finishes it', async () => {
    await call('shed_lockedit_open');
    await s.call('shed_lockedit_overwrite', { zone: 'storage', path: 'f.txt', content: 'new\n' });
    // (the process dies here; a fresh Tools instance plays the restarted host)
    const fresh = makeShed({ storage_base_path: s.base });
    const r = await fresh.call('shed_lockedit_save', { zone: 'storage', path: 'f.txt' });
    expect(r.success).toBe(true);
    expect(read(s.zonePath('storage', 'f.txt'))).toBe('new\n');
  });

  it('killed after the file was replaced but before the lock was released: save releases it', async () => {
    await call('shed_lockedit_open');
    fs.renameSync(copyPath(s, 'f.txt'), s.zonePath('storage', 'f.txt')); // the save's rename happened
    const r = await call('shed_lockedit_save');
    expect(r.error!.code).toBe('NOT_IN_EDIT_MODE');
    expect(r.error!.details).toMatchObject({ lock_released: true });
    expect(exists(lockPath(s, 'f.txt'))).toBe(false);
    expect((await call('shed_lockedit_open', 'c2')).success).toBe(true);
  });

  it('the same state, recovered with cancel instead', async () => {
    await call('shed_lockedit_open');
    fs.rmSync(copyPath(s, 'f.txt'));
    const r = await call('shed_lockedit_cancel');
    expect(r.data).toMatchObject({ lock_released: true, changes_discarded: false });
    expect(exists(lockPath(s, 'f.txt'))).toBe(false);
  });

  it('killed during open (lock taken, no copy yet): the same conversation reopens; others use force_unlock', async () => {
    await call('shed_lockedit_open');
    fs.rmSync(path.join(workBase(s), 'editzone'), { recursive: true });
    expect((await call('shed_lockedit_open', 'c2')).error!.code).toBe('FILE_LOCKED');
    const same = await call('shed_lockedit_open');
    expect(same.data).toMatchObject({ continued: false, content: 'old\n' });
    await call('shed_lockedit_cancel');
    await call('shed_lockedit_open');
    fs.rmSync(path.join(workBase(s), 'editzone'), { recursive: true });
    expect((await call('shed_force_unlock', 'c2')).data).toMatchObject({ lock_removed: true });
    expect((await call('shed_lockedit_open', 'c2')).success).toBe(true);
  });

  it('a temp file of an interrupted copy in the editzone never counts as the working copy', async () => {
    await call('shed_lockedit_open');
    fs.rmSync(copyPath(s, 'f.txt'));
    put(path.join(path.dirname(copyPath(s, 'f.txt')), '.f.txt.abc123.shedtmp'), 'half');
    expect((await call('shed_lockedit_save')).error!.code).toBe('NOT_IN_EDIT_MODE');
    expect(read(s.zonePath('storage', 'f.txt'))).toBe('old\n');
  });
});

describe('a killed safe-mode writer', () => {
  it('leaves a write lock that the next writer takes over at once (its process is gone)', async () => {
    put(s.zonePath('storage', 'w.txt'), 'a\n');
    const child = kids.run('hold-write', { workBase: workBase(s), path: 'w.txt', user: 'alice', chat: 'c1' });
    await child.waitFor('HELD');
    // While the writer lives, its lock holds.
    const busy = await s.call('shed_patch_text', { zone: 'storage', path: 'w.txt', content: 'b' }, { chat: 'c2' });
    expect(busy.error!.code).toBe('FILE_LOCKED');
    expect(busy.error!.message).toContain('being written');
    child.kill();
    await child.done;
    expect(exists(lockPath(s, 'w.txt'))).toBe(true);
    const r = await s.call('shed_patch_text', { zone: 'storage', path: 'w.txt', content: 'b' }, { chat: 'c2' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(read(s.zonePath('storage', 'w.txt'))).toBe('a\nb\n');
    expect(exists(lockPath(s, 'w.txt'))).toBe(false);
  }, 60_000);

  it('leaves a write lock that a later server with the very same pid takes over at once (a restarted container)', async () => {
    put(s.zonePath('storage', 'w.txt'), 'a\n');
    // What the earlier server wrote: this host, this pid (the test's own process), another process.
    plantLock(s, 'w.txt', { kind: 'write', host: os.hostname(), pid: process.pid, token: 'earlier' });
    const t0 = Date.now();
    const r = await s.call('shed_patch_text', { zone: 'storage', path: 'w.txt', content: 'b' }, { chat: 'c2' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(2000); // not the 5 s wait for a live writer
    expect(read(s.zonePath('storage', 'w.txt'))).toBe('a\nb\n');
    expect(exists(lockPath(s, 'w.txt'))).toBe(false);
  }, 30_000);

  it('a takeover guard left by a taker killed inside its takeover: cleared at once when that taker ran here; a live or unnamed one is respected until it ages out', async () => {
    const deadPid = spawnSync('true').pid!;
    const guard = `${lockPath(s, 'w.txt')}.takeover`;
    const written: string[] = [];
    const write = async (content: string) => {
      const r = await s.call('shed_patch_text', { zone: 'storage', path: 'w.txt', content }, { chat: 'c2' });
      if (r.success) written.push(content);
      return r;
    };
    const leftBehind = (holder: string) => {
      plantLock(s, 'w.txt', { kind: 'write', host: os.hostname(), pid: deadPid, token: 'dead' }); // a stale lock to take over
      put(guard, holder);
    };
    put(s.zonePath('storage', 'w.txt'), '');
    const here = os.hostname();
    // Its taker ran on this host and is gone, or had this pid in an earlier process.
    for (const holder of [{ host: here, pid: deadPid, proc: 'x' }, { host: here, pid: process.pid, proc: 'earlier' }]) {
      leftBehind(JSON.stringify(holder));
      const r = await write(`after ${holder.pid}`);
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(exists(guard)).toBe(false);
      expect(exists(lockPath(s, 'w.txt'))).toBe(false);
    }
    // A fresh guard of a taker on another host, or one that never got its name: respected...
    for (const holder of [JSON.stringify({ host: 'elsewhere', pid: 1, proc: 'y' }), '']) {
      leftBehind(holder);
      const before = read(s.zonePath('storage', 'w.txt'));
      const r = await write('refused');
      expect(r.error?.code, JSON.stringify(r)).toBe('LOCK_ERROR');
      expect(read(s.zonePath('storage', 'w.txt'))).toBe(before);
      expect(exists(guard)).toBe(true);
      // ...until it is older than a takeover can last.
      const old = new Date(Date.now() - 11_000);
      fs.utimesSync(guard, old, old);
      const again = await write(`aged ${holder.length}`);
      expect(again.success, JSON.stringify(again.error)).toBe(true);
      expect(exists(guard)).toBe(false);
    }
    expect(written).toHaveLength(4);
    expect(read(s.zonePath('storage', 'w.txt'))).toBe(written.map((l) => `${l}\n`).join(''));
  }, 60_000);
});
