import { describe, expect, it } from 'vitest';
import { decodeEwah, encodeEwah } from '../../src/core/formats/git/ewah.js';

describe('EWAH bitmaps (split index)', () => {
  it.each([[[]], [[0]], [[63]], [[64]], [[0, 1, 2, 63, 64, 65]], [[5, 700, 701, 5000]], [[1_000_000]], [Array.from({ length: 300 }, (_, i) => i * 3)]])('round-trips %j', (positions) => {
    const buf = encodeEwah(positions);
    const back = decodeEwah(Buffer.concat([Buffer.from('junk'), buf, Buffer.from('tail')]), 4);
    expect(back?.positions).toEqual(positions);
    expect(back?.size).toBe(buf.length);
    expect(buf.readUInt32BE(0)).toBe(positions.length ? positions[positions.length - 1]! + 1 : 0);
  });

  it('reads the empty bitmap git writes, and refuses truncated data', () => {
    const git = Buffer.from('00000000000000010000000000000000' + '00000000', 'hex');
    expect(decodeEwah(git, 0)).toEqual({ positions: [], size: 20 });
    expect(encodeEwah([])).toEqual(git);
    expect(decodeEwah(encodeEwah([1, 2, 3]).subarray(0, 10), 0)).toBeUndefined();
  });

  it('reads a bitmap with a run of ones', () => {
    // marker: running bit 1, run of 1 word, 1 literal word; then a literal with bit 0 set
    const b = Buffer.alloc(8 + 16 + 4);
    b.writeUInt32BE(65, 0);
    b.writeUInt32BE(2, 4);
    b.writeBigUInt64BE(1n | (1n << 1n) | (1n << 33n), 8);
    b.writeBigUInt64BE(1n, 16);
    expect(decodeEwah(b, 0)?.positions).toEqual([...Array.from({ length: 64 }, (_, i) => i), 64]);
  });
});
