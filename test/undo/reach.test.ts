/**
 * The capture store is server state out of every command's reach: from a command in Storage (both
 * kernel modes) and from a script, the store beside the zone can be neither read nor written, so a
 * command can neither forge a turn nor plant what an undo would write back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { KERNEL_MODES } from '../code/helpers.js';
import { inTurn } from './helpers.js';

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('a command or script cannot read or write the capture store', async () => {
    s = makeShed({ sandbox: mode, allow_shell: true });
    await inTurn(s, 't', 'shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a' });
    const store = path.join(s.base, 'users', 'alice', 'Storage', 'undo');
    expect(fs.existsSync(path.join(store, 'turns.log'))).toBe(true);
    const before = fs.readFileSync(path.join(store, 'turns.log'));
    // Through a relative path (refused or not found inside the sandbox) and through the absolute one.
    for (const target of ['../undo/turns.log', path.join(store, 'turns.log')]) {
      const r = await inTurn(s, 'x', 'shed_exec', { zone: 'storage', cmd: 'cat', args: [target] });
      expect(JSON.stringify(r)).not.toContain('"turn":"t"');
      expect(r.success === false || r.data?.returncode !== 0).toBe(true);
    }
    const script = `cat ${store}/turns.log; echo forged >> ${store}/turns.log; mkdir -p ${store}/evil; ls ${store}`;
    const sh = await inTurn(s, 'y', 'shed_run_shell', { zone: 'storage', script });
    expect(sh.error).toBeUndefined(); // the script ran; the kernel refused it the store
    expect(String(sh.data?.stdout ?? '')).not.toContain('"turn":"t"');
    // Nothing was recorded since (the attempts changed nothing): the log is as it was.
    expect(fs.readFileSync(path.join(store, 'turns.log')).equals(before)).toBe(true);
    expect(fs.existsSync(path.join(store, 'evil'))).toBe(false);
  });
});
