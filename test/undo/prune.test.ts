/**
 * Retention by count (valve undo_max_turns) orders the turns by their last call. A record another
 * instance rewrote since this process last read it (a later call of that turn, landed elsewhere) is
 * ordered by what it says now: the turn it kept alive stays, the truly oldest goes. Retention by age
 * (undo_max_age_days): a turn whose last call is older is neither listed nor undone, and the next
 * modifying call removes its record.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { inTurn } from './helpers.js';

let s: Shed | undefined;
afterEach(() => s?.cleanup());

const listed = async (sh: Shed) => ((await inTurn(sh, undefined, 'shed_undo', {})).data!.turns as { turn: string }[]).map((t) => t.turn);
const pause = () => new Promise((r) => setTimeout(r, 20));
const recordOf = (sh: Shed, turn: string) => path.join(sh.base, 'users', 'alice', 'Storage', 'undo', 'turns', `${turn}.json`);
/** Rewrites a turn's record as another instance (or time) would: temp + rename. */
function rewrite(file: string, change: (rec: { updated: number; calls: { fn: string; at: number }[] }) => void): void {
  const rec = JSON.parse(fs.readFileSync(file, 'utf8')) as { updated: number; calls: { fn: string; at: number }[] };
  change(rec);
  fs.writeFileSync(`${file}.other.tmp`, JSON.stringify(rec));
  fs.renameSync(`${file}.other.tmp`, file);
}

describe('undo retention by count and age', () => {
  it('keeps the newest turns by their last call, also when another instance rewrote a record', async () => {
    s = makeShed({ undo_max_turns: 3 });
    for (const t of ['t1', 't2', 't3']) {
      await inTurn(s, t, 'shed_create_file', { zone: 'storage', path: `${t}.txt`, content: t });
      await pause();
    }
    expect(await listed(s)).toEqual(['t3', 't2', 't1']);

    // Another instance's call in turn t1, written as that instance writes a record.
    rewrite(recordOf(s, 't1'), (rec) => {
      rec.updated = Date.now();
      rec.calls.push({ fn: 'shed_read', at: rec.updated });
    });
    await pause();

    // A fourth turn: one must go, and it is t2 (t1's last call is newer than t2's and t3's).
    await inTurn(s, 't4', 'shed_create_file', { zone: 'storage', path: 't4.txt', content: 't4' });
    expect(await listed(s)).toEqual(['t4', 't1', 't3']);
    await pause();
    await inTurn(s, 't5', 'shed_create_file', { zone: 'storage', path: 't5.txt', content: 't5' });
    expect(await listed(s)).toEqual(['t5', 't4', 't1']);
    // A dropped turn cannot be undone.
    const r = await inTurn(s, 'u', 'shed_undo', { turn: 't2', apply: true });
    expect(r.success).toBe(false);
  });

  it('a turn older than undo_max_age_days is not listed nor undone, and its record goes at the next change', async () => {
    s = makeShed({ undo_max_age_days: 1 });
    await inTurn(s, 'old', 'shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a' });
    await inTurn(s, 'new', 'shed_create_file', { zone: 'storage', path: 'b.txt', content: 'b' });
    rewrite(recordOf(s, 'old'), (rec) => {
      rec.updated -= 2 * 86_400_000;
    });
    expect(await listed(s)).toEqual(['new']);
    const r = await inTurn(s, 'u', 'shed_undo', { turn: 'old', apply: true });
    expect(r.success).toBe(false);
    expect(fs.existsSync(s.zonePath('storage', 'a.txt'))).toBe(true);
    expect(fs.existsSync(recordOf(s, 'old'))).toBe(true);
    await inTurn(s, 'next', 'shed_create_file', { zone: 'storage', path: 'c.txt', content: 'c' });
    expect(fs.existsSync(recordOf(s, 'old'))).toBe(false);
    expect(await listed(s)).toEqual(['next', 'new']);
  });
});
