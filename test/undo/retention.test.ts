/**
 * Retention of the capture store by bytes and the collection of what no kept turn needs (SPEC 9.1,
 * valves undo_max_store_mb and undo_max_turns): old versions of dropped turns leave the disk, the
 * turns kept still undo byte for byte, and a turn over the budget alone is listed as not undoable,
 * never silently.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { inTurn } from './helpers.js';

let s: Shed | undefined;
afterEach(() => s?.cleanup());

const KIB = 1024;
/** Text that does not compress much (base64 of random bytes: about 3/4 of its length once deflated). */
const noise = (bytes: number) => crypto.randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64').slice(0, bytes);
const blobId = (text: string) => {
  const body = Buffer.from(text);
  return crypto.createHash('sha1').update(`blob ${body.length}\0`).update(body).digest('hex');
};
const shadowGit = (sh: Shed) => path.join(sh.base, 'users', 'alice', 'Storage', 'undo', 'shadow', 'storage.git');
/** Whether the store still holds a version, whole or as a reverse delta. */
const stored = (sh: Shed, text: string) => {
  const oid = blobId(text);
  const git = shadowGit(sh);
  return fs.existsSync(path.join(git, 'objects', oid.slice(0, 2), oid.slice(2))) || fs.existsSync(path.join(`${git}.deltas`, oid.slice(0, 2), oid.slice(2)));
};
const listed = async (sh: Shed) => ((await inTurn(sh, undefined, 'shed_undo', {})).data!.turns as { turn: string }[]).map((t) => t.turn);
const write = (sh: Shed, turn: string, content: string, file = 'big.txt') => inTurn(sh, turn, 'shed_patch_text', { zone: 'storage', path: file, content, overwrite: true });

describe('undo store retention by bytes (undo_max_store_mb)', () => {
  it('drops the oldest turns past the budget, frees their versions, and the kept turns still undo byte for byte', async () => {
    s = makeShed({ undo_max_store_mb: 1 });
    const v = [noise(800 * KIB), noise(800 * KIB), noise(800 * KIB), noise(800 * KIB)];
    for (const [i, text] of v.entries()) expect((await write(s, `t${i}`, text)).success).toBe(true);
    // t3 keeps v2 (its before), about 600 KB stored; t2 would need v1 as well: over 1 MB, so t2, t1, t0 go.
    expect(await listed(s)).toEqual(['t3']);
    expect(stored(s, v[0]!)).toBe(false);
    expect(stored(s, v[1]!)).toBe(false);
    expect(stored(s, v[2]!)).toBe(true);
    const gone = await inTurn(s, 'u0', 'shed_undo', { turn: 't1', apply: true });
    expect(gone.error?.code).toBe('FILE_NOT_FOUND');

    const undo = await inTurn(s, 'u1', 'shed_undo', { turn: 't3', apply: true });
    expect(undo.error, JSON.stringify(undo.error)).toBeUndefined();
    expect(fs.readFileSync(s.zonePath('storage', 'big.txt'), 'utf8')).toBe(v[2]);
  });

  it('a turn over the budget alone stays listed with its change not undoable, in its answer too', async () => {
    s = makeShed({ undo_max_store_mb: 1 });
    const a = noise(1600 * KIB);
    const b = noise(1600 * KIB);
    await write(s, 'a', a);
    const r = await write(s, 'b', b);
    expect(r.success).toBe(true);
    expect(r.message).toMatch(/Not undoable: Storage\/big\.txt \(over the undo store budget \(undo_max_store_mb=1\)/);
    expect(await listed(s)).toContain('b');
    const preview = await inTurn(s, 'p', 'shed_undo', { turn: 'b' });
    expect(preview.data!.preview.not_undoable).toEqual([expect.objectContaining({ path: 'Storage/big.txt' })]);
    // Its before (a) is not kept; the current state (b) is.
    expect(stored(s, a)).toBe(false);
    expect(stored(s, b)).toBe(true);
    // Undoing it changes nothing it could not keep.
    await inTurn(s, 'u', 'shed_undo', { turn: 'b', apply: true });
    expect(fs.readFileSync(s.zonePath('storage', 'big.txt'), 'utf8')).toBe(b);
  });

  it('0 means no byte limit: every version of the kept turns stays', async () => {
    s = makeShed({ undo_max_store_mb: 0 });
    const v = [noise(700 * KIB), noise(700 * KIB), noise(700 * KIB)];
    for (const [i, text] of v.entries()) await write(s, `t${i}`, text);
    expect(await listed(s)).toEqual(['t2', 't1', 't0']);
    for (const text of v) expect(stored(s, text)).toBe(true);
  });
});

describe('collection after retention by count (undo_max_turns)', () => {
  it('versions only dropped turns needed leave the disk; the versions of kept turns and the current files stay', async () => {
    s = makeShed({ undo_max_turns: 3 });
    const v = Array.from({ length: 6 }, () => noise(20 * KIB));
    for (const [i, text] of v.entries()) await write(s, `t${i}`, text);
    expect(await listed(s)).toEqual(['t5', 't4', 't3']);
    // t3 needs v2 (before) and v3; t4 v3 and v4; t5 v4 and v5 (current).
    for (const i of [0, 1]) expect(stored(s, v[i]!), `v${i}`).toBe(false);
    for (const i of [2, 3, 4, 5]) expect(stored(s, v[i]!), `v${i}`).toBe(true);
    // The two newest undo, newest first, back to v3 (each undo is a turn too: t3 drops out meanwhile).
    expect((await inTurn(s, 'u1', 'shed_undo', { turn: 't5', apply: true })).error).toBeUndefined();
    expect(fs.readFileSync(s.zonePath('storage', 'big.txt'), 'utf8')).toBe(v[4]);
    expect((await inTurn(s, 'u2', 'shed_undo', { turn: 't4', apply: true })).error).toBeUndefined();
    expect(fs.readFileSync(s.zonePath('storage', 'big.txt'), 'utf8')).toBe(v[3]);
  });

  it('a big file edited a little keeps its kept versions readable through their deltas when others are freed', async () => {
    s = makeShed({ undo_max_turns: 3, undo_max_store_mb: 0 });
    const base = noise(400 * KIB);
    const v = Array.from({ length: 5 }, (_, i) => `${base.slice(0, 1000)}edit ${i}\n${base.slice(1000)}`);
    for (const [i, text] of v.entries()) await write(s, `t${i}`, text);
    expect(await listed(s)).toEqual(['t4', 't3', 't2']);
    expect(stored(s, v[0]!)).toBe(false);
    // The older versions are reverse deltas (a few KB each), not whole copies.
    expect(fs.existsSync(`${shadowGit(s)}.deltas`)).toBe(true);
    expect((await inTurn(s, 'u1', 'shed_undo', { turn: 't4', apply: true })).error).toBeUndefined();
    expect(fs.readFileSync(s.zonePath('storage', 'big.txt'), 'utf8')).toBe(v[3]);
    expect((await inTurn(s, 'u2', 'shed_undo', { turn: 't3', apply: true })).error).toBeUndefined();
    expect(fs.readFileSync(s.zonePath('storage', 'big.txt'), 'utf8')).toBe(v[2]);
  });

  it('a command\'s changes in Storage are collected the same way, and files no turn touched stay', async () => {
    s = makeShed({ undo_max_turns: 1 });
    await inTurn(s, 'k', 'shed_create_file', { zone: 'storage', path: 'keep.txt', content: 'untouched\n' });
    const v = Array.from({ length: 3 }, () => noise(10 * KIB));
    for (const [i, text] of v.entries()) await write(s, `t${i}`, text, 'w.txt');
    await inTurn(s, 'cmd', 'shed_exec', { zone: 'storage', cmd: 'cp', args: ['keep.txt', 'copy.txt'] });
    expect(await listed(s)).toEqual(['cmd']);
    expect(stored(s, 'untouched\n')).toBe(true);
    expect(stored(s, v[2]!)).toBe(true); // the current w.txt
    expect(stored(s, v[0]!)).toBe(false);
    expect(stored(s, v[1]!)).toBe(false);
    expect((await inTurn(s, 'u', 'shed_undo', { turn: 'cmd', apply: true })).error).toBeUndefined();
    expect(fs.existsSync(s.zonePath('storage', 'copy.txt'))).toBe(false);
    expect(fs.readFileSync(s.zonePath('storage', 'keep.txt'), 'utf8')).toBe('untouched\n');
  });
});
