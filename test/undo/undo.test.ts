/**
 * Undo by chat turn (SPEC 9.1): named writes in Storage and Documents grouped by assistant message
 * id, listed, previewed and undone byte for byte; a versioned zone gets one "Undo turn" commit and
 * undoing the undo redoes; conflicts are left alone unless forced per path.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, mod, type Shed } from '../helpers/shed.js';
import { hashTree, inTurn } from './helpers.js';

let s: Shed;
beforeEach(() => {
  s = makeShed();
});
afterEach(() => s.cleanup());

const storage = () => hashTree(s.zonePath('storage'));
const documents = () => hashTree(s.zonePath('documents'));

async function gitLog(): Promise<string> {
  const r = await inTurn(s, undefined, 'shed_exec', { zone: 'documents', cmd: 'git', args: ['log', '--oneline'] });
  return String(r.data?.stdout ?? '');
}

describe('undo by turn: named writes', () => {
  it('groups calls by message id, names the turn in each answer, lists it and undoes it byte for byte', async () => {
    await inTurn(s, 'm1', 'shed_create_file', { zone: 'storage', path: 'keep.txt', content: 'v1\n' });
    await inTurn(s, 'm1', 'shed_create_file', { zone: 'storage', path: 'gone.txt', content: 'bye\n' });
    const before = storage();
    const a = await inTurn(s, 'm2', 'shed_patch_text', { zone: 'storage', path: 'keep.txt', content: 'v2', position: 'end' });
    expect(a.success).toBe(true);
    expect(a.turn).toBe('m2');
    const b = await inTurn(s, 'm2', 'shed_delete', { zone: 'storage', path: 'gone.txt' });
    expect(b.turn).toBe('m2');
    const c = await inTurn(s, 'm2', 'shed_create_file', { zone: 'storage', path: 'new/deep/n.txt', content: 'new' });
    expect(c.turn).toBe('m2');
    // A read is not part of any turn's changes and names none.
    expect((await inTurn(s, 'm2', 'shed_read', { zone: 'storage', path: 'keep.txt' })).turn).toBeUndefined();

    const preview = await inTurn(s, 'm3', 'shed_undo', {});
    expect(preview.success).toBe(true);
    expect(preview.turn).toBeUndefined(); // a preview changes nothing
    const turns = preview.data!.turns as { turn: string; created: number; changed: number; deleted: number; paths: string[] }[];
    expect(turns.map((t) => t.turn)).toEqual(['m2', 'm1']);
    expect(turns[0]).toMatchObject({ created: 1, changed: 1, deleted: 1 });
    expect(turns[0]!.paths).toEqual(expect.arrayContaining(['changed Storage/keep.txt', 'deleted Storage/gone.txt', 'created Storage/new/deep/n.txt']));

    expect(preview.data!.preview).toMatchObject({ undoes: 'm2', applied: false, conflicts: [] });
    expect(preview.data!.preview.changes).toHaveLength(3);
    expect(fs.existsSync(s.zonePath('storage', 'new/deep/n.txt'))).toBe(true); // preview changed nothing

    const done = await inTurn(s, 'm3', 'shed_undo', { apply: true });
    expect(done.success).toBe(true);
    expect(done.data).toMatchObject({ undoes: 'm2', applied: true });
    expect(done.turn).toBe('m3');
    expect(storage()).toEqual(before);
    expect(fs.existsSync(s.zonePath('storage', 'new'))).toBe(false);

    // Undoing the undo redoes.
    const redo = await inTurn(s, 'm4', 'shed_undo', { turn: 'm3', apply: true });
    expect(redo.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'keep.txt'), 'utf8')).toBe('v1\nv2\n');
    expect(fs.existsSync(s.zonePath('storage', 'gone.txt'))).toBe(false);
    expect(fs.readFileSync(s.zonePath('storage', 'new/deep/n.txt'), 'utf8')).toBe('new');
    // The shadow repositories keep no index: no git reads them as a work tree, and rewriting one
    // per call was a third of the capture's cost.
    const shadows = path.join(s.base, 'users', 'alice', 'Storage', 'undo', 'shadow');
    expect(fs.readdirSync(shadows).filter((n) => n.endsWith('.git')).sort()).toEqual(['storage.git', 'uploads.git']);
    for (const repo of ['storage.git', 'uploads.git']) expect(fs.existsSync(path.join(shadows, repo, 'index'))).toBe(false);
  });

  it('Documents: the undo is one new commit, history kept, and undoing it redoes', async () => {
    await inTurn(s, 'd1', 'shed_create_file', { zone: 'documents', path: 'a.md', content: '# A\n' });
    const before = documents();
    await inTurn(s, 'd2', 'shed_patch_text', { zone: 'documents', path: 'a.md', content: 'more', position: 'end' });
    await inTurn(s, 'd2', 'shed_create_file', { zone: 'documents', path: 'b.md', content: 'B' });
    const commitsBefore = (await gitLog()).trim().split('\n').length;
    const r = await inTurn(s, 'd3', 'shed_undo', { apply: true });
    expect(r.success).toBe(true);
    expect(r.data!.commits).toHaveLength(1);
    expect(documents()).toEqual(before);
    const log = (await gitLog()).trim().split('\n');
    expect(log).toHaveLength(commitsBefore + 1);
    expect(log[0]).toContain('Undo turn d2');
    const redo = await inTurn(s, 'd4', 'shed_undo', { turn: 'd3', apply: true });
    expect(redo.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('documents', 'b.md'), 'utf8')).toBe('B');
    expect((await gitLog()).trim().split('\n')[0]).toContain('Undo turn d3');
  });

  it('a path changed by a later turn is a conflict: left alone unless forced per path', async () => {
    await inTurn(s, 't1', 'shed_create_file', { zone: 'storage', path: 'x.txt', content: 'x0' });
    await inTurn(s, 't1', 'shed_create_file', { zone: 'storage', path: 'y.txt', content: 'y0' });
    await inTurn(s, 't2', 'shed_create_file', { zone: 'storage', path: 'x.txt', content: 'x1' });
    await inTurn(s, 't2', 'shed_create_file', { zone: 'storage', path: 'y.txt', content: 'y1' });
    await inTurn(s, 't3', 'shed_create_file', { zone: 'storage', path: 'x.txt', content: 'x2' });
    const preview = await inTurn(s, 'u', 'shed_undo', { turn: 't2' });
    expect(preview.error).toBeUndefined();
    expect(preview.data!.preview.conflicts).toEqual([expect.objectContaining({ path: 'Storage/x.txt' })]);
    const r = await inTurn(s, 'u', 'shed_undo', { turn: 't2', apply: true });
    expect(r.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'x.txt'), 'utf8')).toBe('x2');
    expect(fs.readFileSync(s.zonePath('storage', 'y.txt'), 'utf8')).toBe('y0');
    const bad = await inTurn(s, 'u2', 'shed_undo', { turn: 't2', apply: true, force: ['Storage/nope.txt'] });
    expect(bad.error?.code).toBe('INVALID_PARAMETER');
    const forced = await inTurn(s, 'u2', 'shed_undo', { turn: 't2', apply: true, force: ['Storage/x.txt'] });
    expect(forced.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'x.txt'), 'utf8')).toBe('x0');
  });

  it('a call without a message id is its own turn; an unknown turn is a clear error', async () => {
    const r = await inTurn(s, undefined, 'shed_create_file', { zone: 'storage', path: 'solo.txt', content: 's' });
    expect(r.turn).toMatch(/^call-[0-9a-f]{12}$/);
    const u = await inTurn(s, undefined, 'shed_undo', { turn: r.turn, apply: true });
    expect(u.success).toBe(true);
    expect(fs.existsSync(s.zonePath('storage', 'solo.txt'))).toBe(false);
    const missing = await inTurn(s, undefined, 'shed_undo', { turn: 'nope' });
    expect(missing.error?.code).toBe('FILE_NOT_FOUND');
    expect(missing.error?.hint).toContain('shed_undo()');
  });

  it('the admin sees each user\'s capture store size', async () => {
    expect((await mod.admin.usage.undoStores(s.base)).size).toBe(0);
    await inTurn(s, 'a', 'shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a'.repeat(5000) });
    const sizes = await mod.admin.usage.undoStores(s.base);
    expect(sizes.get('alice')).toBeGreaterThan(100);
  });
});

describe('undo size cap', () => {
  it('a file over undo_max_file_mb is not kept: the call, the list and the undo say so; the rest is undone', async () => {
    s.cleanup();
    s = makeShed({ undo_max_file_mb: 1 });
    const big = 'x'.repeat(1_500_000);
    await inTurn(s, 'b0', 'shed_create_file', { zone: 'storage', path: 'big.txt', content: big });
    await inTurn(s, 'b0', 'shed_create_file', { zone: 'storage', path: 'small.txt', content: 's0' });
    const r = await inTurn(s, 'b1', 'shed_patch_text', { zone: 'storage', path: 'big.txt', content: 'tail', position: 'end' });
    expect(r.turn).toBe('b1');
    expect(r.message).toContain('Not undoable: Storage/big.txt (over the undo size cap');
    await inTurn(s, 'b1', 'shed_create_file', { zone: 'storage', path: 'small.txt', content: 's1' });
    const preview = await inTurn(s, 'u', 'shed_undo', {});
    expect(preview.data!.turns[0].not_undoable).toEqual([expect.objectContaining({ path: 'Storage/big.txt' })]);
    const u = await inTurn(s, 'u', 'shed_undo', { apply: true });
    expect(u.data!.not_undoable).toEqual([expect.objectContaining({ path: 'Storage/big.txt' })]);
    expect(u.message).toContain('not undoable');
    expect(fs.readFileSync(s.zonePath('storage', 'small.txt'), 'utf8')).toBe('s0');
    const left = fs.readFileSync(s.zonePath('storage', 'big.txt'), 'utf8');
    expect(left.startsWith(big) && left.endsWith('tail\n')).toBe(true); // left as the turn made it
    // Shrunk under the cap by a later turn: stored again from then on, its earlier version reported lost.
    const shrink = await inTurn(s, 'b2', 'shed_create_file', { zone: 'storage', path: 'big.txt', content: 'small now' });
    expect(shrink.message).toContain('its version before this turn was over the undo size cap');
    await inTurn(s, 'b3', 'shed_create_file', { zone: 'storage', path: 'big.txt', content: 'small again' });
    expect((await inTurn(s, 'u3', 'shed_undo', { turn: 'b3', apply: true })).error).toBeUndefined();
    expect(fs.readFileSync(s.zonePath('storage', 'big.txt'), 'utf8')).toBe('small now');
  });
});

describe('capture switched off and on', () => {
  it('changes made while undo_enabled=false never become a later turn\'s "before"', async () => {
    await inTurn(s, 'a', 'shed_create_file', { zone: 'storage', path: 'f.txt', content: 'one' });
    s.tools.valves = { ...s.tools.valves, undo_enabled: false };
    const off = await inTurn(s, 'b', 'shed_create_file', { zone: 'storage', path: 'f.txt', content: 'two' });
    expect(off.turn).toBeUndefined();
    s.tools.valves = { ...s.tools.valves, undo_enabled: true };
    await inTurn(s, 'c', 'shed_create_file', { zone: 'storage', path: 'f.txt', content: 'three' });
    expect((await inTurn(s, 'u', 'shed_undo', { turn: 'c', apply: true })).error).toBeUndefined();
    expect(fs.readFileSync(s.zonePath('storage', 'f.txt'), 'utf8')).toBe('two');
  });
});

describe('quota', () => {
  it('an undo that would pass the quota is refused before anything changes', async () => {
    s.cleanup();
    s = makeShed({ quota_per_user_mb: 1 });
    await inTurn(s, 'a', 'shed_create_file', { zone: 'storage', path: 'big.txt', content: 'x'.repeat(700_000) });
    await inTurn(s, 'b', 'shed_delete', { zone: 'storage', path: 'big.txt' });
    await inTurn(s, 'c', 'shed_create_file', { zone: 'storage', path: 'other.txt', content: 'y'.repeat(700_000) });
    const r = await inTurn(s, 'u', 'shed_undo', { turn: 'b', apply: true });
    expect(r.error?.code).toBe('QUOTA_EXCEEDED');
    expect(fs.existsSync(s.zonePath('storage', 'big.txt'))).toBe(false);
    await inTurn(s, 'd', 'shed_delete', { zone: 'storage', path: 'other.txt' });
    expect((await inTurn(s, 'u2', 'shed_undo', { turn: 'b', apply: true })).error).toBeUndefined();
    expect(fs.statSync(s.zonePath('storage', 'big.txt')).size).toBe(700_000);
  });
});

describe('retention', () => {
  it('keeps at most undo_max_turns turns: older ones drop out of the list and cannot be undone', async () => {
    s.cleanup();
    s = makeShed({ undo_max_turns: 3 });
    for (let i = 0; i < 5; i++) await inTurn(s, `t${i}`, 'shed_create_file', { zone: 'storage', path: `f${i}.txt`, content: String(i) });
    const list = await inTurn(s, 'l', 'shed_undo', {});
    expect((list.data!.turns as { turn: string }[]).map((t) => t.turn)).toEqual(['t4', 't3', 't2']);
    expect((await inTurn(s, 'u', 'shed_undo', { turn: 't0', apply: true })).error?.code).toBe('FILE_NOT_FOUND');
  });
});

describe('the first Documents write', () => {
  it('is undoable when Documents was empty and had no history; not when files were there before versioning', async () => {
    await inTurn(s, 'f1', 'shed_create_file', { zone: 'documents', path: 'first.md', content: '1' });
    expect((await inTurn(s, 'u1', 'shed_undo', { apply: true })).error).toBeUndefined();
    expect(fs.existsSync(s.zonePath('documents', 'first.md'))).toBe(false);

    const t = makeShed();
    try {
      fs.mkdirSync(t.zonePath('documents'), { recursive: true });
      fs.writeFileSync(t.zonePath('documents', 'old.md'), 'from before versioning');
      await inTurn(t, 'g1', 'shed_create_file', { zone: 'documents', path: 'new.md', content: 'n' });
      const p = await inTurn(t, 'v', 'shed_undo', { turn: 'g1' });
      expect(p.data!.preview.not_undoable).toEqual([expect.objectContaining({ path: 'Documents/' })]);
      expect(p.data!.preview.changes).toEqual([]);
    } finally {
      t.cleanup();
    }
  });
});
