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
import { appendToLog, inTurn, loggedTurns, turnLog } from './helpers.js';

let s: Shed | undefined;
afterEach(() => s?.cleanup());

const listed = async (sh: Shed) => ((await inTurn(sh, undefined, 'shed_undo', {})).data!.turns as { turn: string }[]).map((t) => t.turn);
const pause = () => new Promise((r) => setTimeout(r, 20));

describe('undo retention by count and age', () => {
  it('keeps the newest turns by their last call, also when another instance rewrote a record', async () => {
    s = makeShed({ undo_max_turns: 3 });
    for (const t of ['t1', 't2', 't3']) {
      await inTurn(s, t, 'shed_create_file', { zone: 'storage', path: `${t}.txt`, content: t });
      await pause();
    }
    expect(await listed(s)).toEqual(['t3', 't2', 't1']);

    // Another instance's call in turn t1, appended as that instance appends it; and a line damaged on disk, ignored.
    appendToLog(s, { add: { turn: 't1', conv: 'c1', fn: 'shed_read', at: Date.now(), commits: [], lost: [] } });
    appendToLog(s, { add: { turn: 't2', commits: 5 } });
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
    // Time passes for it: its record, rewritten whole, says its last call was two days ago.
    const old = loggedTurns(s).get('old')!;
    appendToLog(s, { set: { v: 1, ...old, started: old.updated - 2 * 86_400_000, updated: old.updated - 2 * 86_400_000, lost: [] } });
    expect(await listed(s)).toEqual(['new']);
    const r = await inTurn(s, 'u', 'shed_undo', { turn: 'old', apply: true });
    expect(r.success).toBe(false);
    expect(fs.existsSync(s.zonePath('storage', 'a.txt'))).toBe(true);
    expect(loggedTurns(s).has('old')).toBe(true);
    await inTurn(s, 'next', 'shed_create_file', { zone: 'storage', path: 'c.txt', content: 'c' });
    expect(loggedTurns(s).has('old')).toBe(false);
    expect(await listed(s)).toEqual(['next', 'new']);
  });

  it('records kept one file per turn (the earlier layout) are listed and undone, and move into the log at the next change', async () => {
    s = makeShed();
    await inTurn(s, 't1', 'shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a1' });
    await pause();
    await inTurn(s, 't2', 'shed_patch_text', { zone: 'storage', path: 'a.txt', content: 'a2', overwrite: true });
    // The store as an earlier version left it: turns/<id>.json, no log.
    const legacy = path.join(path.dirname(turnLog(s)), 'turns');
    fs.mkdirSync(legacy);
    for (const rec of loggedTurns(s).values()) fs.writeFileSync(path.join(legacy, `${rec.turn}.json`), JSON.stringify({ v: 1, ...rec, started: rec.updated, lost: [] }));
    fs.rmSync(turnLog(s));
    expect(await listed(s)).toEqual(['t2', 't1']);
    const preview = await inTurn(s, 'p', 'shed_undo', { turn: 't2' });
    expect((preview.data!.preview as { changes: unknown }).changes).toEqual([{ path: 'Storage/a.txt', turn_did: 'changed', undo_will: 'restore' }]);
    // The next change moves them into the log; the old files go.
    await inTurn(s, 't3', 'shed_create_file', { zone: 'storage', path: 'b.txt', content: 'b' });
    expect(fs.existsSync(legacy)).toBe(false);
    expect([...loggedTurns(s).keys()].sort()).toEqual(['t1', 't2', 't3']);
    const r = await inTurn(s, 'u', 'shed_undo', { turn: 't2', apply: true });
    expect(r.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'a.txt'), 'utf8')).toBe('a1');
  });

  it('a log with many more lines than kept turns is compacted, and every kept turn still undoes', async () => {
    s = makeShed({ undo_max_turns: 5 });
    for (let i = 0; i < 150; i++) await inTurn(s, `t${i}`, 'shed_patch_text', { zone: 'storage', path: `f${i % 7}.txt`, content: `v${i}`, overwrite: true });
    // 150 calls and 145 drops: compacted on the way (at most 256 lines, or 4 per kept turn).
    const lines = fs.readFileSync(turnLog(s), 'utf8').split('\n').filter(Boolean);
    expect(lines.length).toBeLessThan(256);
    expect(await listed(s)).toEqual(['t149', 't148', 't147', 't146', 't145']);
    const r = await inTurn(s, 'u', 'shed_undo', { turn: 't147', apply: true });
    expect(r.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'f0.txt'), 'utf8')).toBe('v140');
  });

  it('a call line leaves out what a personal zone always is (label, versioned); lines that carry them read the same', async () => {
    s = makeShed();
    await inTurn(s, 't1', 'shed_create_file', { zone: 'storage', path: 'a.txt', content: 'one' });
    await inTurn(s, 't2', 'shed_create_file', { zone: 'documents', path: 'd.md', content: 'doc' });
    const lines = fs.readFileSync(turnLog(s), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { add: Record<string, unknown> & { commits: Record<string, unknown>[] } });
    expect(lines.map((l) => Object.keys(l.add).sort())).toEqual([['at', 'commits', 'conv', 'fn', 'lost', 'turn'], ['at', 'commits', 'conv', 'fn', 'lost', 'turn']]);
    for (const l of lines) for (const c of l.add.commits) expect(Object.keys(c).filter((k) => k !== 'fromEmpty').sort()).toEqual(['oid', 'tree']);
    const storage = lines[0]!.add.commits[0]!;
    // The same call as an earlier version wrote it (every field), in another turn: listed and undone alike.
    appendToLog(s, { add: { turn: 't0', conv: 'c1', fn: 'shed_create_file', at: Date.now() - 60_000, commits: [{ ...storage, label: 'Storage', versioned: false }], lost: [] } });
    const preview = await inTurn(s, 'p', 'shed_undo', { turn: 't0' });
    expect(preview.success).toBe(true);
    expect((preview.data!.preview as { changes: unknown }).changes).toEqual([{ path: 'Storage/a.txt', turn_did: 'created', undo_will: 'remove' }]);
    // The Documents commit read back as versioned: its undo is a new commit of the zone's history.
    const undoDoc = await inTurn(s, 'u', 'shed_undo', { turn: 't2', apply: true });
    expect(undoDoc.success).toBe(true);
    expect(undoDoc.data!.commits).toHaveLength(1);
    expect(fs.existsSync(s.zonePath('documents', 'd.md'))).toBe(false);
  });
});
