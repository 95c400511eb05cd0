/**
 * Races for one lock: two conversations of one user (in one process with Promise.all, and in two
 * processes started on the same instant), two users (the lock module itself, in two processes,
 * as in a shared group space), takeovers of one stale lock, and a mutual-exclusion hammer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { buildChildren, type Children } from './children.js';
import { copyPath, exists, lockPath, plantLock, put, readLockJson } from './helpers.js';

let kids: Children;
beforeAll(async () => {
  kids = await buildChildren();
}, 60_000);
afterAll(() => kids.cleanup());

const startSoon = () => Date.now() + 1500;

describe('two conversations of one user, in one process (Promise.all)', () => {
  it('exactly one of them gets the lock, every round', async () => {
    const s = makeShed({ sandbox: 'validated' });
    try {
      put(s.zonePath('storage', 'race.txt'), 'content');
      for (let round = 0; round < 10; round++) {
        const chats = ['c1', 'c2', 'c3', 'c4'];
        const results = await Promise.all(chats.map((chat) => s.call('shed_lockedit_open', { zone: 'storage', path: 'race.txt' }, { chat })));
        const winners = chats.filter((_c, i) => results[i]!.success);
        expect(winners).toHaveLength(1);
        for (const [i, r] of results.entries()) if (!r.success) expect(r.error!.code, chats[i]).toBe('FILE_LOCKED');
        expect(readLockJson(s, 'race.txt').conv_id).toBe(winners[0]);
        for (const chat of chats) expect(exists(copyPath(s, 'race.txt', chat))).toBe(chat === winners[0]);
        expect((await s.call('shed_lockedit_cancel', { zone: 'storage', path: 'race.txt' }, { chat: winners[0] })).success).toBe(true);
      }
    } finally {
      s.cleanup();
    }
  });
});

describe('two conversations of one user, in two processes', () => {
  it('exactly one process wins each round; the loser gets FILE_LOCKED and no working copy', async () => {
    const s = makeShed();
    try {
      put(s.zonePath('storage', 'race.txt'), 'content');
      for (let round = 0; round < 6; round++) {
        const startAt = startSoon();
        const runs = ['p1', 'p2'].map((chat) => kids.run('open', { base: s.base, chat, path: 'race.txt', startAt }));
        const outs = await Promise.all(runs.map((r) => r.done));
        const results = outs.map((o) => JSON.parse(o.lines[0]!) as { success: boolean; error?: { code: string } });
        const winners = ['p1', 'p2'].filter((_c, i) => results[i]!.success);
        expect(winners, JSON.stringify(results)).toHaveLength(1);
        expect(results.find((r) => !r.success)!.error!.code).toBe('FILE_LOCKED');
        expect(readLockJson(s, 'race.txt').conv_id).toBe(winners[0]);
        expect(exists(copyPath(s, 'race.txt', winners[0] === 'p1' ? 'p2' : 'p1'))).toBe(false);
        expect((await s.call('shed_lockedit_cancel', { zone: 'storage', path: 'race.txt' }, { chat: winners[0] })).success).toBe(true);
        expect(exists(lockPath(s, 'race.txt'))).toBe(false);
      }
    } finally {
      s.cleanup();
    }
  }, 60_000);

  it('three processes taking over one expired lock: exactly one wins and reports the takeover', async () => {
    const s = makeShed();
    try {
      put(s.zonePath('storage', 'race.txt'), 'content');
      for (let round = 0; round < 3; round++) {
        plantLock(s, 'race.txt', { conv_id: 'gone', locked_at: '2001-01-01T00:00:00Z' });
        const startAt = startSoon();
        const outs = await Promise.all(['q1', 'q2', 'q3'].map((chat) => kids.run('open', { base: s.base, chat, path: 'race.txt', startAt }).done));
        const results = outs.map((o) => JSON.parse(o.lines[0]!) as { success: boolean; data?: Record<string, unknown>; error?: { code: string } });
        const won = results.filter((r) => r.success);
        expect(won, JSON.stringify(results)).toHaveLength(1);
        expect(won[0]!.data!.stale_lock_taken_over).toMatchObject({ reason: 'expired' });
        for (const r of results.filter((x) => !x.success)) expect(r.error!.code).toBe('FILE_LOCKED');
        const holder = String(readLockJson(s, 'race.txt').conv_id);
        expect(['q1', 'q2', 'q3'][results.indexOf(won[0]!)]).toBe(holder);
        await s.call('shed_force_unlock', { zone: 'storage', path: 'race.txt' });
      }
    } finally {
      s.cleanup();
    }
  }, 60_000);
});

describe('two users racing for the same lock (the lock module, as in a shared space)', () => {
  let s: Shed;
  beforeAll(() => {
    s = makeShed();
  });
  afterAll(() => s.cleanup());

  it('exactly one user wins, for a free lock and for a stale one', async () => {
    const workBase = path.join(s.base, 'shared');
    for (let round = 0; round < 6; round++) {
      const file = path.join(workBase, 'locks', 'doc.md.lock');
      if (round % 2 === 1) put(file, JSON.stringify({ user_id: 'carol', conv_id: 'x', locked_at: '2001-01-01T00:00:00Z', path: 'doc.md' }));
      const startAt = startSoon();
      const outs = await Promise.all(
        [['alice', 'a1'], ['bob', 'b1']].map(([user, chat]) => kids.run('acquire-once', { workBase, path: 'doc.md', user, chat, startAt }).done),
      );
      const lines = outs.map((o) => o.lines[0]);
      expect(lines.filter((l) => l === 'WON'), JSON.stringify(lines)).toHaveLength(1);
      expect(lines.filter((l) => l === 'LOST FILE_LOCKED')).toHaveLength(1);
      const holder = JSON.parse(fs.readFileSync(file, 'utf8')) as { user_id: string };
      expect(holder.user_id).toBe(lines[0] === 'WON' ? 'alice' : 'bob');
      fs.rmSync(file);
    }
  }, 60_000);

  it('write locks give mutual exclusion: three processes never overlap in 300 entries', async () => {
    const workBase = path.join(s.base, 'mutex');
    const log = path.join(s.base, 'mutex.log');
    fs.writeFileSync(log, '');
    const startAt = startSoon();
    const runs = [['alice', 'a'], ['bob', 'b'], ['carol', 'c']].map(([user, tag]) => kids.run('mutex', { workBase, path: 'shared.db', user, chat: `conv-${tag}`, tag, n: 100, log, startAt }));
    const outs = await Promise.all(runs.map((r) => r.done));
    for (const o of outs) expect(o.lines).toContain('DONE');
    const events = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(events).toHaveLength(600);
    for (let i = 0; i < events.length; i += 2) {
      expect(events[i]!.startsWith('+'), `event ${i}: ${events.slice(Math.max(0, i - 2), i + 3).join(' ')}`).toBe(true);
      expect(events[i + 1]).toBe(`-${events[i]!.slice(1)}`);
    }
    expect(new Set(events.map((e) => e.slice(1)))).toEqual(new Set(['a', 'b', 'c']));
    expect(fs.readdirSync(path.join(workBase, 'locks'), { recursive: true })).toEqual([]);
  }, 120_000);
});
