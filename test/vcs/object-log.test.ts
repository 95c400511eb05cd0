/**
 * The trees-and-commits log of the shadow repositories (vcs/object-log.ts): objects written through
 * writeObject come back through readObject; a torn tail (a writer killed mid-entry) is never read
 * and is cut off by the next writer; a reader sees what another process appended since; a
 * compaction keeps exactly what it is told to; entries are deflated against a dictionary and
 * those of the earlier layout (plain zlib) are still read; a link at the log's name is refused; writers killed
 * at random moments leave every whole entry readable.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import { compactLog, logTreesAndCommits, readLogged } from '../../src/core/services/vcs/object-log.js';
import { readCommit, readTree, writeCommit, writeObject, writeTree } from '../../src/core/services/vcs/objects.js';
import { frameObject, hashObject, type TreeEntry } from '../../src/core/formats/git/objects.js';

let gitdir: string;
let log: string;
beforeEach(() => {
  gitdir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-objlog-')), 'storage.git');
  fs.mkdirSync(path.join(gitdir, 'objects'), { recursive: true });
  log = path.join(gitdir, 'objects', 'fileshed-objects.log');
  logTreesAndCommits(gitdir);
});
afterEach(() => fs.rmSync(path.dirname(gitdir), { recursive: true, force: true }));

const entry = (name: string): TreeEntry => ({ mode: '100644', name, oid: 'ab'.repeat(20) });
const commitOn = (tree: string, parents: string[] = []) => writeCommit(gitdir, { tree, parents, author: 'A <a@x>', committer: 'A <a@x>', time: 1, tz: '+0000', message: `on ${tree}` });
/** Loose files under objects/ (the log aside). */
const loose = () => fs.readdirSync(path.join(gitdir, 'objects')).filter((d) => /^[0-9a-f]{2}$/.test(d));

describe('object log', () => {
  it('trees and commits are appended to one file and read back; no loose file is made', async () => {
    const tree = writeTree(gitdir, [entry('a.txt')]);
    const commit = commitOn(tree);
    expect(loose()).toEqual([]);
    expect(fs.readdirSync(path.join(gitdir, 'objects'))).toEqual(['fileshed-objects.log']);
    expect((await readTree(gitdir, tree)).map((e) => e.name)).toEqual(['a.txt']);
    expect((await readCommit(gitdir, commit)).tree).toBe(tree);
    const size = fs.statSync(log).size;
    expect(writeTree(gitdir, [entry('a.txt')])).toBe(tree); // the same object again: not appended twice
    expect(fs.statSync(log).size).toBe(size);
  });

  it('entries are deflated against the log dictionary: a capture commit takes two thirds of a loose one or less', () => {
    const tree = writeTree(gitdir, [entry('big.txt')]);
    const parent = commitOn(tree);
    const body = `tree ${tree}\nparent ${parent}\nauthor Fileshed capture <fileshed@fileshed> 1796687790 +0000\ncommitter Fileshed <fileshed@localhost> 1796687790 +0000\n\nCapture: state of the zone\n`;
    const before = fs.statSync(log).size;
    const oid = writeObject(gitdir, 'commit', Buffer.from(body));
    const bytes = fs.readFileSync(log).subarray(before);
    expect(bytes.subarray(0, 20).toString('hex')).toBe(oid);
    expect(bytes.readUInt32BE(20)).toBe(bytes.length - 24);
    expect(bytes[24]).toBe(0x01); // the dictionary's mark
    const loose = zlib.deflateSync(frameObject('commit', Buffer.from(body)), { level: 1 }).length;
    expect(bytes.length - 24).toBeLessThanOrEqual((loose * 2) / 3);
    expect(readLogged(gitdir, oid)?.body.toString()).toBe(body);
  });

  it('entries an earlier version wrote (deflated as loose objects) are still read, beside new ones and after a compaction', async () => {
    const body = Buffer.from(`tree ${'4b825dc642cb6eb9a060e54bf8d69288fbee4904'}\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nold\n`);
    const old = hashObject('commit', body);
    const deflated = zlib.deflateSync(frameObject('commit', body));
    const head = Buffer.alloc(24);
    head.write(old, 0, 'hex');
    head.writeUInt32BE(deflated.length, 20);
    fs.writeFileSync(log, Buffer.concat([head, deflated]));
    const tree = writeTree(gitdir, [entry('new.txt')]);
    expect((await readCommit(gitdir, old)).tree).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
    expect((await readTree(gitdir, tree)).map((e) => e.name)).toEqual(['new.txt']);
    const drop = writeTree(gitdir, [entry('drop.txt')]);
    expect(compactLog(gitdir, (oid) => oid !== drop)).toBe(1);
    expect(readLogged(gitdir, old)?.body.equals(body)).toBe(true);
    expect(readLogged(gitdir, tree)?.type).toBe('tree');
    expect(readLogged(gitdir, drop)).toBeUndefined();
  });

  it('an entry whose mark was changed is refused, never served', () => {
    const tree = writeTree(gitdir, [entry('a.txt')]);
    const bytes = fs.readFileSync(log);
    bytes[24] = 0x78; // now claims a zlib stream
    fs.writeFileSync(`${log}.new`, bytes);
    fs.renameSync(`${log}.new`, log);
    expect(() => readLogged(gitdir, tree)).toThrow();
  });

  it('a reader that knows only the earlier layout (id, length, body) still finds every entry whole', () => {
    const ids = [writeTree(gitdir, [entry('a.txt')]), commitOn(writeTree(gitdir, [entry('b.txt')]))];
    const bytes = fs.readFileSync(log);
    const found: string[] = [];
    let at = 0;
    for (; at + 24 <= bytes.length; at += 24 + bytes.readUInt32BE(at + 20)) found.push(bytes.subarray(at, at + 20).toString('hex'));
    expect(at).toBe(bytes.length); // no torn tail it would cut off
    for (const oid of ids) expect(found).toContain(oid);
  });

  it('a torn tail is never read and is cut off by the next writer', () => {
    const first = writeTree(gitdir, [entry('a.txt')]);
    const whole = fs.statSync(log).size;
    // A writer killed mid-entry: a header naming 1,000 bytes, and 10 of them.
    const torn = Buffer.alloc(34);
    torn.write('cd'.repeat(20), 0, 'hex');
    torn.writeUInt32BE(1000, 20);
    fs.appendFileSync(log, torn);
    expect(readLogged(gitdir, 'cd'.repeat(20))).toBeUndefined();
    const second = writeTree(gitdir, [entry('b.txt')]);
    expect(readLogged(gitdir, first)?.type).toBe('tree');
    expect(readLogged(gitdir, second)?.type).toBe('tree');
    expect(fs.statSync(log).size).toBeGreaterThan(whole);
    expect(fs.readFileSync(log).includes(torn)).toBe(false);
  });

  it('an entry whose bytes do not match its id is refused, never served', () => {
    const tree = writeTree(gitdir, [entry('a.txt')]);
    const bytes = fs.readFileSync(log);
    const other = writeTree(path.join(path.dirname(gitdir), 'x.git'), [entry('z.txt')]); // a loose object elsewhere
    expect(other).not.toBe(tree);
    bytes.write(other, 0, 'hex'); // the entry now claims another id
    fs.writeFileSync(`${log}.new`, bytes);
    fs.renameSync(`${log}.new`, log);
    expect(() => readLogged(gitdir, other)).toThrow(/does not match/);
  });

  it('another log at the same inode (rewritten twice by another process meanwhile) is indexed anew', () => {
    const mine = writeTree(gitdir, [entry('mine.txt')]);
    expect(readLogged(gitdir, mine)?.type).toBe('tree');
    // Another repository's log, longer, written over this one in place: the same inode, other entries.
    const other = path.join(path.dirname(gitdir), 'other.git');
    logTreesAndCommits(other);
    const theirs = [writeTree(other, [entry('x.txt')]), writeTree(other, [entry('y.txt')])];
    const ino = fs.statSync(log).ino;
    fs.writeFileSync(log, fs.readFileSync(path.join(other, 'objects', 'fileshed-objects.log')));
    expect(fs.statSync(log).ino).toBe(ino);
    expect(readLogged(gitdir, mine)).toBeUndefined();
    for (const oid of theirs) expect(readLogged(gitdir, oid)?.type).toBe('tree');
  });

  it('a compaction keeps what it is told to, as a new file; readers follow it', async () => {
    const keep = writeTree(gitdir, [entry('keep.txt')]);
    const drop = writeTree(gitdir, [entry('drop.txt')]);
    const ino = fs.statSync(log).ino;
    expect(compactLog(gitdir, (oid) => oid === keep)).toBe(1);
    expect(fs.statSync(log).ino).not.toBe(ino);
    expect(readLogged(gitdir, drop)).toBeUndefined();
    expect((await readTree(gitdir, keep)).map((e) => e.name)).toEqual(['keep.txt']);
    expect(compactLog(gitdir, () => true)).toBe(0);
    expect(fs.readdirSync(path.join(gitdir, 'objects'))).toEqual(['fileshed-objects.log']); // no temp left
  });

  it('a link at the log name is refused: nothing is read or written through it', () => {
    const elsewhere = path.join(path.dirname(gitdir), 'elsewhere');
    fs.writeFileSync(elsewhere, 'x');
    fs.symlinkSync(elsewhere, log);
    expect(() => writeTree(gitdir, [entry('a.txt')])).toThrow(/symbolic link/);
    expect(() => readLogged(gitdir, 'ab'.repeat(20))).toThrow(/symbolic link/);
    expect(fs.readFileSync(elsewhere, 'utf8')).toBe('x');
  });

  it('what another process appended since is read; writers killed at random moments leave every whole entry readable', async () => {
    // A child writes up to 40 commits (64 KiB messages), then waits; killed at a random moment.
    const script = path.join(path.dirname(gitdir), 'writer.mjs');
    const src = path.resolve('src/core/services/vcs');
    buildSync({
      stdin: {
        contents: `import { logTreesAndCommits } from ${JSON.stringify(`${src}/object-log.ts`)};
import { writeCommit } from ${JSON.stringify(`${src}/objects.ts`)};
const [gitdir] = process.argv.slice(2);
logTreesAndCommits(gitdir);
const pad = 'p'.repeat(64 * 1024);
setInterval(() => {}, 1000);
for (let i = 0; i < 40; i++) process.stdout.write(writeCommit(gitdir, { tree: '4b825dc642cb6eb9a060e54bf8d69288fbee4904', parents: [], author: 'A <a@x>', committer: 'A <a@x>', time: i, tz: '+0000', message: pad + i }) + '\\n');
`,
        resolveDir: src,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: script,
      logLevel: 'silent',
    });
    const written: string[] = [];
    for (let round = 0; round < 15; round++) {
      const p = spawn(process.execPath, [script, gitdir], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      for (let i = 0; i < 3000 && out.split('\n').length < 3; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      p.kill('SIGKILL');
      await new Promise((r) => p.once('exit', r));
      // Every commit the child reported written is read back whole, by this other process.
      written.push(...out.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l)));
      for (const oid of written) expect((await readCommit(gitdir, oid)).tree).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
    }
    expect(written.length).toBeGreaterThan(15);
    const after = commitOn('4b825dc642cb6eb9a060e54bf8d69288fbee4904', [written[0]!]);
    expect((await readCommit(gitdir, after)).parents).toEqual([written[0]]);
  }, 300_000);
});
