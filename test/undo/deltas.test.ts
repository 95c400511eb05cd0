/**
 * Reverse deltas in the capture store: turns of one-line edits to a big Storage file keep one whole
 * copy plus small deltas, and every older version still comes back byte for byte (through the
 * delta chain), newest turn first or an old turn forced.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { inTurn } from './helpers.js';

let s: Shed;
beforeEach(() => {
  s = makeShed();
});
afterEach(() => s.cleanup());

const storeBytes = () => {
  let total = 0;
  const dir = path.join(s.base, 'users', 'alice', 'Storage', 'undo');
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) total += fs.statSync(path.join(e.parentPath, e.name)).size;
  return total;
};

describe('reverse deltas', () => {
  it('20 one-line edits of a 2 MB file cost a few KiB each, and every version comes back', async () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `line ${i} ${crypto.createHash('md5').update(String(i)).digest('hex')}`);
    const file = s.zonePath('storage', 'big.txt');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    await inTurn(s, 'w', 'shed_create_file', { zone: 'storage', path: 'warm.txt', content: 'w' });
    const versions = [fs.readFileSync(file)];
    const start = storeBytes();
    for (let i = 0; i < 20; i++) {
      const r = await inTurn(s, `e${i}`, 'shed_patch_text', { zone: 'storage', path: 'big.txt', content: `edited ${i}`, position: 'replace', line: 1 + i * 1000, end_line: 1 + i * 1000 });
      expect(r.error).toBeUndefined();
      versions.push(fs.readFileSync(file));
    }
    const grew = storeBytes() - start;
    console.log(`store growth after 20 edits of 2 MB: ${grew} bytes`);
    // Per turn: a small delta, a commit, a tree and the turn's record; not one more compressed copy (~1 MB) each.
    expect(grew).toBeLessThan(20 * 4 * 1024);
    // An old turn, forced over the later ones: its before-state is 19 deltas down the chain.
    const old = await inTurn(s, 'u0', 'shed_undo', { turn: 'e0', apply: true, force: ['Storage/big.txt'] });
    expect(old.error).toBeUndefined();
    expect(fs.readFileSync(file).equals(versions[0]!)).toBe(true);
    // Undoing that undo brings the newest back; then newest first, each turn restores its before.
    expect((await inTurn(s, 'r0', 'shed_undo', { turn: 'u0', apply: true })).error).toBeUndefined();
    expect(fs.readFileSync(file).equals(versions[20]!)).toBe(true);
    for (let i = 19; i >= 15; i--) {
      expect((await inTurn(s, `u${i}`, 'shed_undo', { turn: `e${i}`, apply: true })).error).toBeUndefined();
      expect(fs.readFileSync(file).equals(versions[i]!)).toBe(true);
    }
  }, 120_000);
});
