/**
 * EWAH compressed bitmaps as git stores them in the index's `link` extension (split index):
 * u32 bit count, u32 word count, that many big-endian 64-bit words, u32 position of the last
 * run-length word. A run-length word holds: bit 0 the running bit, bits 1-32 how many words of it
 * follow, bits 33-63 how many literal words come after them. Bit i of the map is bit i%64 of word i/64.
 */

const RUN_MAX = 0xffffffff;
const LITERAL_MAX = 0x7fffffff;

/** Encodes sorted, distinct bit positions. */
export function encodeEwah(positions: number[]): Buffer {
  const words: bigint[] = [];
  let lastRlw = 0;
  const rlw = (run: number, literals: number) => BigInt(run) * 2n + (BigInt(literals) << 33n);
  // Literal words by index, in order.
  const literals = new Map<number, bigint>();
  for (const p of positions) {
    const w = Math.floor(p / 64);
    literals.set(w, (literals.get(w) ?? 0n) | (1n << BigInt(p % 64)));
  }
  const indices = [...literals.keys()];
  let next = 0; // first word index not yet described
  let i = 0;
  if (indices.length === 0) words.push(0n);
  while (i < indices.length) {
    let run = indices[i]! - next;
    // Runs longer than one marker can say are split over several markers.
    while (run > RUN_MAX) {
      lastRlw = words.length;
      words.push(rlw(RUN_MAX, 0));
      run -= RUN_MAX;
    }
    let j = i;
    while (j + 1 < indices.length && indices[j + 1] === indices[j]! + 1 && j + 1 - i < LITERAL_MAX) j++;
    lastRlw = words.length;
    words.push(rlw(run, j - i + 1));
    for (let k = i; k <= j; k++) words.push(literals.get(indices[k]!)!);
    next = indices[j]! + 1;
    i = j + 1;
  }
  const bitSize = positions.length === 0 ? 0 : positions[positions.length - 1]! + 1;
  const out = Buffer.alloc(8 + words.length * 8 + 4);
  out.writeUInt32BE(bitSize, 0);
  out.writeUInt32BE(words.length, 4);
  words.forEach((w, k) => out.writeBigUInt64BE(w, 8 + k * 8));
  out.writeUInt32BE(lastRlw, 8 + words.length * 8);
  return out;
}

/** Decodes a bitmap at `offset`; returns the set positions and the bytes it took, or undefined if malformed. */
export function decodeEwah(buf: Buffer, offset: number): { positions: number[]; size: number } | undefined {
  if (offset + 8 > buf.length) return undefined;
  const count = buf.readUInt32BE(offset + 4);
  const size = 8 + count * 8 + 4;
  if (offset + size > buf.length) return undefined;
  const positions: number[] = [];
  let word = 0; // index of the uncompressed word
  let k = 0;
  while (k < count) {
    const marker = buf.readBigUInt64BE(offset + 8 + k * 8);
    k++;
    const runBit = marker & 1n;
    const run = Number((marker >> 1n) & 0xffffffffn);
    const lits = Number(marker >> 33n);
    if (runBit === 1n) {
      if (run > 1 << 20) return undefined; // an index never has that many entries
      for (let b = 0; b < run * 64; b++) positions.push(word * 64 + b);
    }
    word += run;
    for (let l = 0; l < lits; l++, k++, word++) {
      if (k >= count) return undefined;
      let w = buf.readBigUInt64BE(offset + 8 + k * 8);
      for (let b = 0; w !== 0n; b++, w >>= 1n) if ((w & 1n) === 1n) positions.push(word * 64 + b);
    }
  }
  return { positions, size };
}
