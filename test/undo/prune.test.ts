/**
 * Retention by count (valve undo_max_turns) orders the turns by their last call. A record another
 * instance rewrote since this process last read it (a later call of that turn, landed elsewhere) is
 * ordered by what it says now: the turn it kept alive stays, the truly oldest goes.
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

describe('undo retention by count', () => {
  it('keeps the newest turns by their last call, also when another instance rewrote a record', async () => {
    s = makeShed({ undo_max_turns: 3 });
    for (const t of ['t1', 't2', 't3']) {
      await inTurn(s, t, 'shed_create_file', { zone: 'storage', path: `${t}.txt`, content: t });
      await pause();
    }
    expect(await listed(s)).toEqual(['t3', 't2', 't1']);

    // Another instance's call in turn t1, written as that instance writes a record (temp + rename).
    const file = path.join(s.base, 'users', 'alice', 'Storage', 'undo', 'turns', 't1.json');
    const rec = JSON.parse(fs.readFileSync(file, 'utf8')) as { updated: number; calls: { fn: string; at: number }[] };
    const at = Date.now();
    rec.updated = at;
    rec.calls.push({ fn: 'shed_read', at });
    fs.writeFileSync(`${file}.other.tmp`, JSON.stringify(rec));
    fs.renameSync(`${file}.other.tmp`, file);
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
});
