/**
 * The bundle's stand-ins for pako and sha.js (build/shims/, swapped in by build/bundle-options.cjs's
 * nodeShims plugin): held to the originals' answers on the calls isomorphic-git makes, then proven
 * where it counts: an isomorphic-git bundled with them (and without pako, sha.js and their polyfill
 * chain) reads every object of a repository real git packed (deltas included) and re-indexes the pack.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
interface PakoLike {
  inflate(d: Uint8Array): Uint8Array;
  deflate(d: Uint8Array): Uint8Array;
  Inflate: new () => { push(c: Uint8Array, f: boolean): boolean; result?: Uint8Array; err: number; msg: string; strm: { avail_in: number } };
}
type HashLike = new () => { update(d: Uint8Array | string, enc?: BufferEncoding): HashLike['prototype']; digest(enc?: BufferEncoding): Buffer | string };
const shimPako = require('../../build/shims/pako.cjs') as PakoLike;
const realPako = require('pako') as PakoLike;
const ShimSha1 = require('../../build/shims/sha1.cjs') as HashLike;
const RealSha1 = require('sha.js/sha1.js') as HashLike;
const { nodeShims } = require('../../build/bundle-options.cjs') as { nodeShims: Plugin };

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-shims-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Feeds `stream` in chunks of `size` the way isomorphic-git's pack reader does; returns result and leftover. */
function drive(Inflate: PakoLike['Inflate'], stream: Uint8Array, size: number): { result?: Uint8Array; rest: number; err: number } {
  const inf = new Inflate();
  let last = 0;
  for (let off = 0; off < stream.length && !inf.result && !inf.err; off += size) {
    const chunk = stream.subarray(off, off + size);
    inf.push(chunk, false);
    last = chunk.length;
  }
  return { result: inf.result, rest: inf.result ? inf.strm.avail_in : last, err: inf.err };
}

describe('the pako shim answers as pako', () => {
  it('inflate and deflate interoperate both ways, on any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), (data) => {
        expect(Buffer.from(shimPako.inflate(realPako.deflate(data))).equals(Buffer.from(data))).toBe(true);
        expect(Buffer.from(realPako.inflate(shimPako.deflate(data))).equals(Buffer.from(data))).toBe(true);
      }),
      { seed: 34, numRuns: 200 },
    );
  });

  it('streaming Inflate: same result and same bytes left past the stream, whatever the chunking', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 20_000 }), fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 1, max: 4096 }), (data, trailing, size) => {
        const stream = Buffer.concat([Buffer.from(realPako.deflate(data)), Buffer.from(trailing)]);
        const shim = drive(shimPako.Inflate, stream, size);
        const real = drive(realPako.Inflate, stream, size);
        expect(shim.result && Buffer.from(shim.result).equals(Buffer.from(data))).toBe(true);
        expect(real.result && Buffer.from(real.result).equals(Buffer.from(data))).toBe(true);
        expect(shim.rest).toBe(real.rest);
      }),
      { seed: 43, numRuns: 150 },
    );
  });

  it('damaged data: an error either way (a string thrown by inflate, err/msg on Inflate)', () => {
    const bad = Buffer.from('78 9c ff ff ff ff ff ff 00 00'.replace(/ /g, ''), 'hex');
    let thrown: unknown;
    try {
      shimPako.inflate(bad);
    } catch (err) {
      thrown = err;
    }
    expect(typeof thrown).toBe('string');
    expect(() => realPako.inflate(bad)).toThrow();
    const inf = new shimPako.Inflate();
    inf.push(bad, false);
    expect(inf.err).not.toBe(0);
    expect(inf.msg).not.toBe('');
    expect(inf.result).toBeUndefined();
  });
});

describe('the SHA-1 shim answers as sha.js', () => {
  it('for any chunks, strings and encodings', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.string({ maxLength: 100 })), { maxLength: 6 }), (parts) => {
        const a = new ShimSha1();
        const b = new RealSha1();
        for (const p of parts) {
          a.update(typeof p === 'string' ? p : Buffer.from(p), typeof p === 'string' ? 'utf8' : undefined);
          b.update(typeof p === 'string' ? p : Buffer.from(p), typeof p === 'string' ? 'utf8' : undefined);
        }
        expect(a.digest('hex')).toBe(b.digest('hex'));
      }),
      { seed: 7, numRuns: 200 },
    );
    expect(Buffer.isBuffer(new ShimSha1().update('x').digest())).toBe(true);
  });
});

describe('isomorphic-git bundled with the shims', () => {
  it('carries no pako, sha.js or polyfill, and reads a repository real git packed (deltas, re-indexed pack)', async () => {
    const entry = path.join(work, 'entry.mjs');
    fs.writeFileSync(entry, "export { readObject, indexPack, expandOid } from 'isomorphic-git';\n");
    const out = path.join(work, 'git.mjs');
    const r = await build({ entryPoints: [entry], outfile: out, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'error', metafile: true, plugins: [nodeShims], nodePaths: [path.resolve('node_modules')] });
    const inputs = Object.keys(r.metafile.inputs);
    expect(inputs.filter((f) => /node_modules\/(pako|sha\.js|safe-buffer|to-buffer|get-intrinsic|which-typed-array)\//.test(f))).toEqual([]);
    expect(inputs.some((f) => f.endsWith('build/shims/pako.cjs'))).toBe(true);
    const git = (await import(pathToFileURL(out).href)) as typeof import('isomorphic-git');

    const dir = path.join(work, 'repo');
    fs.mkdirSync(dir);
    const run = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], { cwd: dir }).toString();
    run('init', '-q');
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i} of a file that changes a little each commit`);
    for (let c = 0; c < 6; c++) {
      lines[c * 400] = `changed in commit ${c}`;
      fs.writeFileSync(path.join(dir, 'f.txt'), `${lines.join('\n')}\n`);
      fs.writeFileSync(path.join(dir, `n${c}.txt`), `note ${c}\n`);
      run('add', '-A');
      run('commit', '-q', '-m', `commit ${c}`);
    }
    run('gc', '-q', '--aggressive');
    expect(fs.readdirSync(path.join(dir, '.git/objects')).filter((d) => /^[0-9a-f]{2}$/.test(d))).toEqual([]); // all packed
    const oids = run('rev-list', '--objects', '--all').trim().split('\n').map((l) => l.split(' ')[0]!);
    expect(oids.length).toBeGreaterThan(15);
    expect(run('verify-pack', '-v', ...fs.readdirSync(path.join(dir, '.git/objects/pack')).filter((f) => f.endsWith('.idx')).map((f) => `.git/objects/pack/${f}`))).toMatch(/chain length = [1-9]/); // deltas exist

    const readAll = async () => {
      for (const oid of oids) {
        const o = await git.readObject({ fs, dir, oid, format: 'content' });
        const want = execFileSync('git', ['cat-file', o.type, oid], { cwd: dir });
        expect(Buffer.from(o.object as Uint8Array).equals(want), oid).toBe(true);
      }
    };
    await readAll();
    expect(await git.expandOid({ fs, dir, oid: oids[0]!.slice(0, 8) })).toBe(oids[0]);

    // Without its index, the pack is read through the streaming Inflate and crc32, and re-indexed.
    const pack = fs.readdirSync(path.join(dir, '.git/objects/pack')).find((f) => f.endsWith('.pack'))!;
    const idx = path.join(dir, '.git/objects/pack', pack.replace(/\.pack$/, '.idx'));
    const gitIdx = fs.readFileSync(idx);
    fs.rmSync(idx);
    await git.indexPack({ fs, dir, filepath: `.git/objects/pack/${pack}` });
    expect(fs.readFileSync(idx).subarray(0, 8 + 256 * 4).equals(gitIdx.subarray(0, 8 + 256 * 4))).toBe(true); // same fan-out table
    await readAll();
  }, 120_000);
});
