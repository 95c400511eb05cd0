/**
 * Shed_rename must not move a link (or a folder holding links) to a place
 * where a relative link that was inward points outside the zone, at its own folder or at an
 * ancestor. Judged at the destination; the move is refused and nothing changes. shed_rename does
 * not depend on the sandbox mode, but runs in both arenas like the rest of the corpus.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectOk, expectRefused, makeArena, MODES, type Arena } from './exec-harness.js';

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  beforeEach(() => {
    a = makeArena(mode);
    a.put('x.txt', 'root x\n');
    fs.mkdirSync(path.join(a.zone, 'd1', 'd2', 'd3'), { recursive: true });
    // Inward where it is: d1/d2/d3/../../../x.txt is the zone's x.txt.
    fs.symlinkSync('../../../x.txt', path.join(a.zone, 'd1', 'd2', 'd3', 'L'));
  });
  afterEach(() => a.finish());
  const lnk = (...p: string[]) => fs.lstatSync(path.join(a.zone, ...p), { throwIfNoEntry: false });

  it.each([
    ['to the root', 'L'],
    ['one level down', 'd1/L'],
    ['two levels down', 'd1/d2/L'],
  ])('moving d1/d2/d3/L %s (where it would point outside) is refused and nothing moves', async (_n, dest) => {
    const r = await a.call('shed_rename', { zone: 'storage', old_path: 'd1/d2/d3/L', new_path: dest });
    expectRefused(r, 'PATH_ESCAPE');
    expect(r.error?.message).toContain('old_path');
    expect(lnk('d1', 'd2', 'd3', 'L')?.isSymbolicLink()).toBe(true);
    expect(lnk(...dest.split('/'))).toBeUndefined();
  });

  it('moving a folder whose inner link would then point outside is refused and undone', async () => {
    const r = await a.call('shed_rename', { zone: 'storage', old_path: 'd1/d2', new_path: 'd2' });
    expectRefused(r, 'PATH_ESCAPE');
    expect(r.error?.message).toContain('d3/L');
    expect(lnk('d1', 'd2', 'd3', 'L')?.isSymbolicLink()).toBe(true);
    expect(lnk('d2')).toBeUndefined();
  });

  it('moving a link to where it points at its own folder (or an ancestor) is refused', async () => {
    fs.mkdirSync(path.join(a.zone, 'sub'));
    fs.symlinkSync('../sub', path.join(a.zone, 'd1', 'up'));
    expectRefused(await a.call('shed_rename', { zone: 'storage', old_path: 'd1/up', new_path: 'sub/up' }), 'PATH_ESCAPE');
    expect(lnk('sub', 'up')).toBeUndefined();
  });

  it('moves that keep the link inside still work (deeper, or a whole folder to an equal depth)', async () => {
    expectOk(await a.call('shed_rename', { zone: 'storage', old_path: 'd1/d2/d3/L', new_path: 'd1/d2/d3/deeper/L' }));
    expect(fs.readlinkSync(path.join(a.zone, 'd1', 'd2', 'd3', 'deeper', 'L'))).toBe('../../../x.txt');
    expectOk(await a.call('shed_rename', { zone: 'storage', old_path: 'd1', new_path: 'e1' }));
    expect(lnk('e1', 'd2', 'd3', 'deeper', 'L')?.isSymbolicLink()).toBe(true);
  });

  it('a command cannot do it either: mv of the link to the root leaves no outward link (sweep)', async () => {
    expectOk(await a.exec({ zone: 'storage', cmd: 'mv', args: ['d1/d2/d3/L', 'L'] }));
    expect(lnk('L')).toBeUndefined();
    expect(mode).toBeTruthy();
  });
});
