/**
 * Retention of the capture store by bytes and the collection of what no kept turn needs (SPEC 9.1,
 * valves undo_max_store_mb and undo_max_turns): old versions of dropped turns leave the disk, the
 * turns kept still undo byte for byte, and a turn over the budget alone is listed as not undoable,
 * never silently.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, mod, type Shed } from '../helpers/shed.js';
import { appendToLog, gitReadableCopy, inTurn, loggedObjects, loggedTurns } from './helpers.js';

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
/** The ids `git rev-list` prints, as the git CLI reads the shadow repository. */
const gitIds = (gitdir: string, ...args: string[]) => {
  const r = spawnSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\n').filter(Boolean).map((l) => l.slice(0, 40));
};
const looseObjects = (gitdir: string) => {
  const top = path.join(gitdir, 'objects');
  return fs.readdirSync(top).filter((d) => /^[0-9a-f]{2}$/.test(d)).flatMap((d) => fs.readdirSync(path.join(top, d)).map((n) => d + n));
};
/**
 * No loose object of a shadow repository that git does not reach from its HEAD, the listed turns'
 * commits and their parents: what a collection keeps, computed by the git CLI instead of by us.
 */
const onlyWhatIsKept = (sh: Shed, after: string) => {
  const undo = path.join(sh.base, 'users', 'alice', 'Storage', 'undo');
  const records = [...loggedTurns(sh).values()];
  for (const tree of ['storage', 'uploads']) {
    const gitdir = path.join(undo, 'shadow', `${tree}.git`);
    if (!fs.existsSync(path.join(gitdir, 'HEAD'))) continue;
    const view = gitReadableCopy(gitdir);
    try {
      const commits = records.flatMap((r) => r.commits.filter((c) => c.tree === tree && !c.versioned).map((c) => c.oid));
      const parents = commits.flatMap((c) => gitIds(view, 'log', '-1', '--format=%P', c));
      const reached = new Set(gitIds(view, 'rev-list', '--objects', '--no-walk', 'HEAD', ...commits, ...parents));
      const storedIds = [...looseObjects(gitdir), ...loggedObjects(gitdir).map((o) => o.oid)];
      expect(storedIds.filter((o) => !reached.has(o)), `${tree} after ${after}: objects no kept turn needs`).toEqual([]);
    } finally {
      fs.rmSync(view, { recursive: true, force: true });
    }
  }
};
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

  it('each collection, full or following the commits since the last, leaves exactly what the kept turns and the current state reach', async () => {
    // undo_max_turns 10: every dropped turn collects; in one process the first collection and every
    // tenth list the whole store, the others delete only what may have become garbage since the last.
    s = makeShed({ undo_max_turns: 10 });
    const sh = s;
    for (let i = 0; i < 34; i++) {
      const turn = `t${i}`;
      // Files added in new folders, edited, deleted, a folder removed, and commands that copy and remove.
      if (i % 5 === 0) await inTurn(sh, turn, 'shed_create_file', { zone: 'storage', path: `f${i}/a/new.txt`, content: `new ${i}\n` });
      else if (i % 5 === 1) await write(sh, turn, `edit ${i}\n`, 'edited.txt');
      else if (i % 5 === 2) await inTurn(sh, turn, 'shed_delete', { zone: 'storage', path: `f${i - 2}` });
      else if (i % 5 === 3) await inTurn(sh, turn, 'shed_exec', { zone: 'storage', cmd: 'cp', args: ['edited.txt', `copy${i}.txt`] });
      else await inTurn(sh, turn, 'shed_exec', { zone: 'storage', cmd: 'rm', args: ['-f', `copy${i - 1}.txt`] });
      if (i >= 11) onlyWhatIsKept(sh, turn);
    }
    expect(await listed(sh)).toHaveLength(10);
    // The kept turns still undo, newest first, byte for byte.
    expect((await inTurn(sh, 'u1', 'shed_undo', { turn: 't33', apply: true })).error).toBeUndefined();
    expect(fs.existsSync(sh.zonePath('storage', 'copy33.txt'))).toBe(false);
    expect((await inTurn(sh, 'u2', 'shed_undo', { turn: 't31', apply: true })).error).toBeUndefined();
    expect(fs.readFileSync(sh.zonePath('storage', 'edited.txt'), 'utf8')).toBe('edit 26\n');
  });

  it('versions written after the last collection by turns gone before the next are freed too', async () => {
    // undo_max_turns 30: a collection every third dropped turn. t33 and t34 come after the
    // collection of t32, and their records go before the next (another instance's retention dropped
    // them): t33's version of e.txt is in no kept turn, and no earlier collection saw it.
    s = makeShed({ undo_max_turns: 30 });
    const sh = s;
    for (let i = 0; i < 33; i++) await write(sh, `t${i}`, `v${i}\n`, i >= 30 ? 'e.txt' : 'w.txt');
    onlyWhatIsKept(sh, 't32');
    await write(sh, 't33', 'v33\n', 'e.txt');
    await write(sh, 't34', 'v34\n', 'e.txt');
    expect(stored(sh, 'v33\n')).toBe(true);
    for (const t of ['t33', 't34']) appendToLog(sh, { drop: t });
    // 28 records left: t35 and t36 drop none, t37 drops t5, the third dropped since t32's collection.
    for (const t of ['t35', 't36', 't37']) await write(sh, t, `other ${t}\n`, 'o.txt');
    expect([...loggedTurns(sh).keys()].sort()).toEqual([...Array.from({ length: 27 }, (_, i) => `t${i + 6}`), 't35', 't36', 't37'].sort());
    expect(stored(sh, 'v33\n')).toBe(false);
    expect(stored(sh, 'v34\n')).toBe(true);
    onlyWhatIsKept(sh, 't37');
  });

  it('the admin page\'s store size follows every change of the store, what the collection frees included', async () => {
    s = makeShed({ undo_max_turns: 2 });
    const sh = s;
    const undo = path.join(sh.base, 'users', 'alice', 'Storage', 'undo');
    const onDisk = () => fs.readdirSync(undo, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).reduce((n, e) => n + fs.statSync(path.join(e.parentPath, e.name)).size, 0);
    const sizes: number[] = [];
    for (let i = 0; i < 6; i++) {
      await write(sh, `t${i}`, noise(30 * KIB));
      if (i === 3) await inTurn(sh, 'cmd', 'shed_exec', { zone: 'storage', cmd: 'rm', args: ['big.txt'] });
      const shown = (await mod.admin.usage.undoStores(sh.base)).get('alice');
      expect(shown, `after t${i}`).toBe(onDisk());
      expect((await mod.admin.usage.undoStores(sh.base)).get('alice')).toBe(shown); // asked again, unchanged
      sizes.push(shown!);
    }
    // Two turns kept: the store stops growing once the collection frees what dropped turns needed.
    expect(Math.max(...sizes.slice(3))).toBeLessThan(sizes[2]! + 60 * KIB);
  });
});
