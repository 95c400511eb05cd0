/**
 * fs/beneath.ts, the one way a server step after a command reaches a place of the zone: folder by
 * folder by descriptor, never following a link (at the end, in the middle, to outside), and what
 * uses it for a locked edit's scratch folder (locks/scratch.ts): a folder of the edited file's path
 * replaced by a link to another user's file never makes that file the working copy.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BeneathWalk, lstatBeneath, makeBeneath, openBeneath, readBeneath, replaceFileIn, type MovedAside } from '../../src/core/base/fs/beneath.js';
import { collectScratch, openScratch } from '../../src/core/base/locks/scratch.js';

let base: string;
let zone: string;
let outside: string;
beforeEach(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-beneath-')));
  zone = path.join(base, 'zone');
  outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(zone, 'd'), { recursive: true });
  fs.mkdirSync(path.join(outside, 'd'), { recursive: true });
  fs.writeFileSync(path.join(zone, 'd', 'v.txt'), 'zone\n');
  fs.writeFileSync(path.join(outside, 'd', 'v.txt'), 'outside\n');
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

describe('beneath a zone, by descriptor', () => {
  it('reaches real folders and files', () => {
    expect(lstatBeneath(zone, 'd/v.txt')?.isFile()).toBe(true);
    expect(readBeneath(zone, 'd/v.txt')?.toString()).toBe('zone\n');
    const dir = openBeneath(zone, 'd');
    expect(dir?.rel).toBe('d');
    dir?.close();
  });

  it('never follows a link, in the middle or at the end, inside the zone or out', () => {
    fs.renameSync(path.join(zone, 'd'), path.join(zone, 'e'));
    fs.symlinkSync('e', path.join(zone, 'd'));
    expect(lstatBeneath(zone, 'd/v.txt'), 'a link in the middle (to a folder of the zone)').toBeUndefined();
    expect(readBeneath(zone, 'd/v.txt')).toBeUndefined();
    fs.rmSync(path.join(zone, 'd'));
    fs.symlinkSync(path.join(outside, 'd'), path.join(zone, 'd'));
    expect(lstatBeneath(zone, 'd/v.txt'), 'a link to outside').toBeUndefined();
    fs.symlinkSync(path.join(outside, 'd', 'v.txt'), path.join(zone, 'e', 'w.txt'));
    expect(lstatBeneath(zone, 'e/w.txt')?.isSymbolicLink(), 'a final link is seen as a link').toBe(true);
    expect(readBeneath(zone, 'e/w.txt'), 'and never read through').toBeUndefined();
    expect(() => lstatBeneath(zone, '../outside/d/v.txt')).toThrow();
  });

  it('makes the way real: a link standing for a folder is moved aside, and a write lands in the zone', async () => {
    fs.rmSync(path.join(zone, 'd'), { recursive: true });
    fs.symlinkSync(path.join(outside, 'd'), path.join(zone, 'd'));
    const moved: MovedAside[] = [];
    const dir = makeBeneath(zone, 'd/sub', moved);
    try {
      await replaceFileIn(dir, 'v.txt', Buffer.from('new\n'), 0o640);
    } finally {
      dir.close();
    }
    expect(moved).toEqual([{ from: 'd', to: 'd.~1~' }]);
    expect(fs.lstatSync(path.join(zone, 'd.~1~')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(zone, 'd', 'sub', 'v.txt'), 'utf8')).toBe('new\n');
    expect(fs.statSync(path.join(zone, 'd', 'sub', 'v.txt')).mode & 0o777).toBe(0o640);
    expect(fs.readFileSync(path.join(outside, 'd', 'v.txt'), 'utf8'), 'nothing written outside').toBe('outside\n');
    expect(fs.readdirSync(path.join(outside, 'd'))).toEqual(['v.txt']);
  });
});

describe('a walk of many places in one pass', () => {
  it('opens each folder once, follows no link, and keeps few descriptors open', () => {
    for (let i = 0; i < 300; i++) fs.mkdirSync(path.join(zone, 'many', `f${i}`), { recursive: true });
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(zone, 'many', `f${i}`, 'x.txt'), 'x');
    fs.symlinkSync(path.join(outside, 'd'), path.join(zone, 'out'));
    const fds = () => fs.readdirSync('/proc/self/fd').length;
    const before = fds();
    const walk = new BeneathWalk(zone);
    try {
      expect(walk.lstat('d/v.txt')?.isFile()).toBe(true);
      expect(walk.lstat('out/v.txt'), 'not through a link').toBeUndefined();
      for (let i = 0; i < 300; i++) expect(walk.lstat(`many/f${i}/x.txt`)?.isFile()).toBe(true);
      expect(fds() - before, 'descriptors held stay bounded').toBeLessThanOrEqual(130);
    } finally {
      walk.forget();
    }
    expect(fds()).toBe(before);
  });
});

describe("a locked edit's scratch folder", () => {
  it("a folder of the path replaced by a link to another user's file: that file is not taken as the working copy", () => {
    const work = path.join(base, 'work');
    const copy = path.join(work, 'editzone', 'c1', 'a', 'b', 'c.txt');
    fs.mkdirSync(path.dirname(copy), { recursive: true });
    fs.writeFileSync(copy, 'mine\n');
    const victim = path.join(outside, 'b', 'c.txt');
    fs.mkdirSync(path.dirname(victim), { recursive: true });
    fs.writeFileSync(victim, 'SECRET of another user\n');
    const s = openScratch({ workBase: work }, 'c1', 'a/b/c.txt', copy);
    try {
      // What a command in the scratch folder could leave: its folder `a` swapped for a link.
      fs.renameSync(path.join(s.root, 'a'), path.join(s.root, 'a2'));
      fs.symlinkSync(outside, path.join(s.root, 'a'));
      const got = collectScratch(s, 1 << 20);
      expect(got.changed).toBe(false);
      expect(got.note).toMatch(/no regular file/);
      expect(fs.readFileSync(copy, 'utf8')).toBe('mine\n');
      expect(fs.readFileSync(victim, 'utf8'), "the other user's file stays where it was").toBe('SECRET of another user\n');
    } finally {
      fs.rmSync(s.root, { recursive: true, force: true });
    }
  });

  it('what the command left at the real path becomes the working copy', () => {
    const work = path.join(base, 'work');
    const copy = path.join(work, 'editzone', 'c1', 'a', 'c.txt');
    fs.mkdirSync(path.dirname(copy), { recursive: true });
    fs.writeFileSync(copy, 'mine\n');
    const s = openScratch({ workBase: work }, 'c1', 'a/c.txt', copy);
    try {
      fs.rmSync(s.file);
      fs.writeFileSync(s.file, 'edited\n');
      expect(collectScratch(s, 1 << 20).changed).toBe(true);
      expect(fs.readFileSync(copy, 'utf8')).toBe('edited\n');
    } finally {
      fs.rmSync(s.root, { recursive: true, force: true });
    }
  });
});
