/**
 * Running from source, the worker thread's bundle is one file in the shared temp folder, named by its
 * content and reused by every test process. Anyone may put a file at that name first: the worker
 * runs only a file this user owns, no one else can write, holding exactly the built text.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFromSource } from '../../src/core/base/work/pool.js';

const ENTRY = path.resolve('src/core/services/pool-worker.ts');
let tmp: string;
let saved: string | undefined;
let out: string;
let built: Buffer;

beforeAll(() => {
  // A temp folder of this test's own, so the shared copy other test processes use is left alone.
  saved = process.env.TMPDIR;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-bundle-'));
  process.env.TMPDIR = tmp;
  out = bundleFromSource(ENTRY);
  built = fs.readFileSync(out);
});

afterAll(() => {
  if (saved === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the source-mode worker bundle', () => {
  it('is one file named by its content, reused as it is by the next process', () => {
    expect(path.dirname(out)).toBe(tmp);
    expect(path.basename(out)).toMatch(/^fileshed-worker-[0-9a-f]{24}\.mjs$/);
    const ino = fs.statSync(out).ino;
    expect(bundleFromSource(ENTRY)).toBe(out);
    expect(fs.statSync(out).ino).toBe(ino);
    expect(fs.readdirSync(tmp)).toEqual([path.basename(out)]);
  }, 60_000);

  it('a planted file of the same size at the name is replaced, never run', () => {
    const planted = Buffer.alloc(built.length, 0x20);
    planted.write('globalThis.planted = true;');
    fs.writeFileSync(out, planted);
    expect(bundleFromSource(ENTRY)).toBe(out);
    expect(fs.readFileSync(out).equals(built)).toBe(true);
  }, 60_000);

  it('a copy others may write to is replaced by a new file; a link at the name is replaced, its target untouched', () => {
    fs.chmodSync(out, 0o666);
    const before = fs.statSync(out).ino;
    expect(bundleFromSource(ENTRY)).toBe(out);
    expect(fs.statSync(out).ino).not.toBe(before);
    expect(fs.statSync(out).mode & 0o022).toBe(0);

    const target = path.join(tmp, 'elsewhere.mjs');
    fs.writeFileSync(target, built);
    fs.rmSync(out);
    fs.symlinkSync(target, out);
    expect(bundleFromSource(ENTRY)).toBe(out);
    expect(fs.lstatSync(out).isFile()).toBe(true);
    expect(fs.readFileSync(out).equals(built)).toBe(true);
    expect(fs.readFileSync(target).equals(built)).toBe(true);
    expect(fs.readdirSync(tmp).sort()).toEqual([path.basename(out), 'elsewhere.mjs'].sort());
  }, 60_000);
});
