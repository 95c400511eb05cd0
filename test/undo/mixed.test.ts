/**
 * The mixed turn, in both kernel modes: shed_patch_text in Documents, shed_exec sed -i in
 * Storage, a script writing 300 files and deleting 3 in Storage, an import into Uploads and a SQLite
 * insert, all under one assistant message id. The undo puts every zone back byte for byte, adds one
 * commit to Documents, and undoing the undo brings the turn's result back byte for byte.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { KERNEL_MODES } from '../code/helpers.js';
import { hashTree, inTurn } from './helpers.js';

const owui = (name: string, content: string) => ({ type: 'file', name, id: `id-${name}`, file: { id: 'f1', filename: name, meta: { name }, data: { content } } });

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('one turn across every zone and route is undone byte for byte, and the undo is undone', async () => {
    s = makeShed({ sandbox: mode, allow_shell: true });
    const all = () => ({ storage: hashTree(s.zonePath('storage')), documents: hashTree(s.zonePath('documents')), uploads: hashTree(s.zonePath('uploads')) });
    // Turn p: the state to come back to.
    await inTurn(s, 'p', 'shed_create_file', { zone: 'documents', path: 'plan.md', content: '# Plan\nstep 1\n' });
    await inTurn(s, 'p', 'shed_create_file', { zone: 'storage', path: 'conf.ini', content: 'mode=old\nlevel=1\n' });
    for (let i = 0; i < 5; i++) await inTurn(s, 'p', 'shed_create_file', { zone: 'storage', path: `old/f${i}.txt`, content: `old ${i}\n` });
    await inTurn(s, 'p', 'shed_sqlite', { zone: 'storage', path: 'app.db', query: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)' });
    await inTurn(s, 'p', 'shed_sqlite', { zone: 'storage', path: 'app.db', query: "INSERT INTO t (v) VALUES ('a')" });
    const before = all();
    const logBefore = await log(s);

    // Turn m: the mess.
    const steps = [
      await inTurn(s, 'm', 'shed_patch_text', { zone: 'documents', path: 'plan.md', content: 'step 2', position: 'end' }),
      await inTurn(s, 'm', 'shed_exec', { zone: 'storage', cmd: 'sed', args: ['-i', 's/old/new/', 'conf.ini'] }),
      await inTurn(s, 'm', 'shed_run_shell', { zone: 'storage', script: 'mkdir -p gen && for i in $(seq 1 300); do echo "file $i" > gen/$i.txt; done && rm old/f0.txt old/f1.txt old/f2.txt' }),
      await inTurn(s, 'm', 'shed_import', { import_all: true, __files__: [owui('in.csv', 'x,y\n1,2\n')] }),
      await inTurn(s, 'm', 'shed_sqlite', { zone: 'storage', path: 'app.db', query: "INSERT INTO t (v) VALUES ('b')" }),
    ];
    for (const r of steps) {
      expect(r.error).toBeUndefined();
      expect(r.turn).toBe('m');
    }
    const after = all();
    expect(Object.keys(after.storage).filter((p) => p.startsWith('gen/'))).toHaveLength(300);
    expect(after.uploads['in.csv']).toBeDefined();

    const preview = await inTurn(s, 'u', 'shed_undo', {});
    expect(preview.data!.preview).toMatchObject({ undoes: 'm', conflicts: [], not_undoable: [] });
    const r = await inTurn(s, 'u', 'shed_undo', { apply: true });
    expect(r.error).toBeUndefined();
    expect(r.data!.commits).toHaveLength(1);
    expect(all()).toEqual(before);
    const logAfter = await log(s);
    expect(logAfter.length).toBe(logBefore.length + 2); // the turn's commit and the undo commit
    expect(logAfter[0]).toContain('Undo turn m');

    const redo = await inTurn(s, 'r', 'shed_undo', { turn: 'u', apply: true });
    expect(redo.error).toBeUndefined();
    expect(all()).toEqual(after);
  });
});

async function log(s: Shed): Promise<string[]> {
  const r = await inTurn(s, undefined, 'shed_exec', { zone: 'documents', cmd: 'git', args: ['log', '--oneline'] });
  return String(r.data?.stdout ?? '').trim().split('\n');
}
