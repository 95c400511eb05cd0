/**
 * A turn whose calls land on different instances (separate processes sharing the storage base, as
 * behind a load balancer) is one turn: listed once, undone as one by yet another instance, every
 * zone back byte for byte. The records name trees, not disk paths, so any instance resolves them.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { hashTree, inTurn } from './helpers.js';

let s: Shed;
beforeEach(() => {
  s = makeShed({ sandbox: 'landlock' });
});
afterEach(() => s.cleanup());

/** One call on another instance: a new process running the built plugin (dist/, as the serving tests use it). */
function elsewhere(fn: string, args: Record<string, unknown>, turn: string): { success: boolean; turn?: string; data?: Record<string, unknown> } {
  const plugin = path.resolve('dist/fileshed.mjs');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { Tools } from ${JSON.stringify(plugin)};
    const t = new Tools(); t.valves = { ...t.valves, storage_base_path: ${JSON.stringify(s.base)}, sandbox: 'landlock' };
    process.stdout.write(await t[${JSON.stringify(fn)}]({ ...${JSON.stringify(args)}, __user__: { id: 'alice', name: 'ALICE' }, __metadata__: { chat_id: 'c1', message_id: ${JSON.stringify(turn)} } }));
  `], { encoding: 'utf8' });
  return JSON.parse(out) as { success: boolean; turn?: string; data?: Record<string, unknown> };
}

describe('one turn across instances', () => {
  it('calls of one turn on three instances are undone as one by a fourth', async () => {
    await inTurn(s, 'p', 'shed_create_file', { zone: 'storage', path: 'conf.ini', content: 'mode=old\n' });
    await inTurn(s, 'p', 'shed_create_file', { zone: 'documents', path: 'plan.md', content: '# Plan\n' });
    const all = () => ({ storage: hashTree(s.zonePath('storage')), documents: hashTree(s.zonePath('documents')) });
    const before = all();

    expect(elsewhere('shed_create_file', { zone: 'storage', path: 'from-b.txt', content: 'b' }, 'm')).toMatchObject({ success: true, turn: 'm' });
    expect((await inTurn(s, 'm', 'shed_exec', { zone: 'storage', cmd: 'sed', args: ['-i', 's/old/new/', 'conf.ini'] })).turn).toBe('m');
    expect(elsewhere('shed_patch_text', { zone: 'documents', path: 'plan.md', content: 'step', position: 'end' }, 'm')).toMatchObject({ success: true, turn: 'm' });

    const list = await inTurn(s, 'l', 'shed_undo', {});
    const turns = list.data!.turns as { turn: string; paths: string[] }[];
    expect(turns.filter((t) => t.turn === 'm')).toHaveLength(1);
    expect(turns[0]!.paths.sort()).toEqual(['changed Documents/plan.md', 'changed Storage/conf.ini', 'created Storage/from-b.txt']);

    const u = elsewhere('shed_undo', { apply: true }, 'u');
    expect(u).toMatchObject({ success: true, data: { undoes: 'm', applied: true } });
    expect(all()).toEqual(before);
  });
});
