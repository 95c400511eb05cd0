/**
 * Undo in a group space: a turn's changes there come back as one "Undo turn" commit; a file another
 * member changed since is a conflict (left alone unless forced); a file whose owner mode forbids the
 * caller is refused as any write would be, even when forced.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { groupShed, read } from '../groups/setup.js';
import { inTurn } from './helpers.js';

let s: Awaited<ReturnType<typeof groupShed>>;
beforeEach(async () => {
  s = await groupShed();
});
afterEach(() => s.cleanup());

const g = { zone: 'group', group: 'team' };

describe('undo in a group space', () => {
  it('another member changed a path since: conflict, untouched; force restores it; the rest is undone in one commit', async () => {
    await inTurn(s, 'a0', 'shed_create_file', { ...g, path: 'shared.md', content: 'v0\n', mode: 'group' });
    await inTurn(s, 'a0', 'shed_create_file', { ...g, path: 'mine.md', content: 'm0\n', mode: 'group' });
    await inTurn(s, 'a1', 'shed_create_file', { ...g, path: 'shared.md', content: 'alice v1\n' });
    await inTurn(s, 'a1', 'shed_create_file', { ...g, path: 'mine.md', content: 'm1\n' });
    // bob, in his own conversation, edits shared.md after alice's turn.
    expect((await inTurn(s, 'b1', 'shed_patch_text', { ...g, path: 'shared.md', content: 'bob was here', position: 'end' }, { user: 'bob', chat: 'cb' })).error).toBeUndefined();

    const preview = await inTurn(s, 'a2', 'shed_undo', { turn: 'a1' });
    expect(preview.data!.preview.conflicts).toEqual([expect.objectContaining({ path: 'Group:Team/shared.md' })]);
    const r = await inTurn(s, 'a2', 'shed_undo', { turn: 'a1', apply: true });
    expect(r.error).toBeUndefined();
    expect(r.data!.commits).toHaveLength(1);
    expect(read(s.groupPath('mine.md'))).toBe('m0\n');
    expect(read(s.groupPath('shared.md'))).toBe('alice v1\nbob was here\n');
    const forced = await inTurn(s, 'a3', 'shed_undo', { turn: 'a1', apply: true, force: ['Group:Team/shared.md'] });
    expect(forced.error).toBeUndefined();
    expect(read(s.groupPath('shared.md'))).toBe('v0\n');
    const log = await inTurn(s, undefined, 'shed_exec', { ...g, cmd: 'git', args: ['log', '--oneline', '-n', '2'] });
    expect(String(log.data!.stdout)).toContain('Undo turn a1');
  });

  it('a file bob owns (mode owner) is refused to alice\'s undo, even forced', async () => {
    await inTurn(s, 'b0', 'shed_create_file', { ...g, path: 'bob.md', content: 'b0\n', mode: 'group' }, { user: 'bob', chat: 'cb' });
    await inTurn(s, 'a1', 'shed_create_file', { ...g, path: 'bob.md', content: 'alice edit\n' });
    // bob makes his file owner-only afterwards: alice may no longer change it.
    expect((await inTurn(s, 'b1', 'shed_group_set_mode', { group: 'team', path: 'bob.md', mode: 'owner' }, { user: 'bob', chat: 'cb' })).error).toBeUndefined();
    const r = await inTurn(s, 'a2', 'shed_undo', { turn: 'a1', apply: true, force: ['Group:Team/bob.md'] });
    expect(r.error).toBeUndefined();
    expect(r.data!.refused).toEqual([expect.objectContaining({ path: 'Group:Team/bob.md' })]);
    expect(read(s.groupPath('bob.md'))).toBe('alice edit\n');
  });
});
