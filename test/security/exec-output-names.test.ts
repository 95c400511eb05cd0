/**
 * Options whose value becomes part of an output file name, options
 * that name a file written or read, `-` operands (standard input) that move a file into the output
 * position, and optional-valued options that used to hide the next argument from the path checks.
 * Every case runs in both sandbox modes; the policy refuses it, and the arena checks that nothing
 * outside the zone was read or written (canaries, another user's zone) and that Uploads or a group
 * file the caller may not change is byte-identical.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { groupShed, read } from '../groups/setup.js';
import { expectRan, expectRefused, installed, makeArena, MODES, type Arena } from './exec-harness.js';

/** Zone (alice/Storage/data) to bob's Storage/data: data → Storage → alice → users. */
const BOB = '../../../bob/Storage/data';

type Case = [string, (O: string) => { cmd: string; args: string[] }];

/** Writable Storage: output names, output files and read files that would leave the zone. */
const ESCAPES: Case[] = [
  ['csplit -f d -b /../../../../bob/… (finding 2)', () => ({ cmd: 'csplit', args: ['-f', 'd', '-b', `/../${BOB}/pwn%02d`, 'in.txt', '2'] })],
  ['csplit --suffix-format=/../…', () => ({ cmd: 'csplit', args: ['-f', 'd', `--suffix-format=/../${BOB}/pwn%02d`, 'in.txt', '2'] })],
  ['csplit -b/../… (attached)', () => ({ cmd: 'csplit', args: ['-fd', `-b/../${BOB}/pwn%02d`, 'in.txt', '2'] })],
  ['csplit --suf=/abs (abbreviated)', (O) => ({ cmd: 'csplit', args: [`--suf=${O}/pwn%02d`, 'in.txt', '2'] })],
  ['csplit -f ../…/pwn (prefix climbs)', () => ({ cmd: 'csplit', args: ['-f', `${BOB}/pwn`, 'in.txt', '2'] })],
  ['split --additional-suffix=/../…', () => ({ cmd: 'split', args: ['-l', '1', `--additional-suffix=/../../${BOB}/pwn`, 'in.txt', 'd/x'] })],
  ['split PREFIX climbing to bob', () => ({ cmd: 'split', args: ['-l', '1', 'in.txt', `${BOB}/pwn`] })],
  ['cp --backup -S /../… (backup suffix)', () => ({ cmd: 'cp', args: ['--backup=simple', '-S', `/../../${BOB}/pwn`, 'in.txt', 'g.txt'] })],
  ['mv -S (backup suffix)', (O) => ({ cmd: 'mv', args: ['-b', `--suffix=/${O}/pwn`, 'in.txt', 'g.txt'] })],
  ['install -S (backup suffix)', () => ({ cmd: 'install', args: ['-b', '-S', `/../../${BOB}/pwn`, 'in.txt', 'g.txt'] })],
  ['gzip -S /../… (output suffix)', () => ({ cmd: 'gzip', args: ['-k', '-S', `/../../${BOB}/pwn`, 'in.txt'] })],
  ['mktemp --suffix=/../…', () => ({ cmd: 'mktemp', args: [`--suffix=/../../${BOB}/pwn`, 'tmpXXXXXX'] })],
  ['tar --suffix=/../… (backup suffix on extraction)', () => ({ cmd: 'tar', args: ['--backup', `--suffix=/../../${BOB}/pwn`, '-xf', 'a.tar'] })],
  ['tar --index-file=…/bob (verbose listing written)', () => ({ cmd: 'tar', args: ['-tvf', 'a.tar', `--index-file=${BOB}/pwn`] })],
  ['tar --volno-file /abs', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', '--volno-file', `${O}/pwn`, 'in.txt'] })],
  ['tar --newer=/abs (DATE-OR-FILE)', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', `--newer=${O}/secret.txt`, 'in.txt'] })],
  ['tar -N /abs', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', '-N', `${O}/secret.txt`, 'in.txt'] })],
  ['tar --after-date /abs', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', '--after-date', `${O}/secret.txt`, 'in.txt'] })],
  ['tar --mtime=/abs', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', `--mtime=${O}/secret.txt`, 'in.txt'] })],
  ['tar --owner-map=/abs', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', `--owner-map=${O}/secret.txt`, 'in.txt'] })],
  ['tar --occurrence /abs (optional value hid the operand)', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', '--occurrence', `${O}/secret.txt`] })],
  ['tar --checkpoint /abs (optional value hid the operand)', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', '--checkpoint', `${O}/secret.txt`] })],
  ['tar --wildcards-match-slash /abs (a flag, not a value)', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', '--wildcards-match-slash', `${O}/secret.txt`] })],
  ['od -w /abs (optional value hid the operand)', (O) => ({ cmd: 'od', args: ['-c', '-w', `${O}/secret.txt`] })],
  ['od --width /abs', (O) => ({ cmd: 'od', args: ['-c', '--width', `${O}/secret.txt`] })],
  ['pr -s /abs (optional value hid the operand)', (O) => ({ cmd: 'pr', args: ['-s', `${O}/secret.txt`] })],
  ['diff --context /abs (optional value hid the operand)', (O) => ({ cmd: 'diff', args: ['--context', `${O}/secret.txt`, 'in.txt'] })],
  ['column -d /abs (a flag, not a value)', (O) => ({ cmd: 'column', args: ['-t', '-d', `${O}/secret.txt`] })],
  ['strings @/abs (binutils response file)', (O) => ({ cmd: 'strings', args: [`@${O}/secret.txt`] })],
  ['strings @../… (response file climbing)', () => ({ cmd: 'strings', args: [`@${BOB}/bob-secret.txt`] })],
  ['tree --hintro=/abs (HTML intro read)', (O) => ({ cmd: 'tree', args: ['-H', '.', `--hintro=${O}/secret.txt`] })],
  ['zip -O /abs (output file)', (O) => ({ cmd: 'zip', args: ['x.zip', 'in.txt', '-O', `${O}/pwn.zip`] })],
  ['sort -T /abs (temporary folder written)', (O) => ({ cmd: 'sort', args: ['-T', O, 'in.txt'] })],
  ['uniq - /abs', (O) => ({ cmd: 'uniq', args: ['-', `${O}/secret.txt`] })],
  ['xxd - …/bob', () => ({ cmd: 'xxd', args: ['-', `${BOB}/bob-secret.txt`] })],
];

/** gawk -d/-p/-o write a file; an attached name without a slash can be a link leading out (finding 7b). */
const GAWK: Case[] = [
  ['gawk --dump-variables=out-link', () => ({ cmd: 'gawk', args: ['--dump-variables=out-link', 'BEGIN{x=1}'] })],
  ['gawk -dout-link', () => ({ cmd: 'gawk', args: ['-dout-link', 'BEGIN{x=1}'] })],
  ['gawk --profile=out-link', () => ({ cmd: 'gawk', args: ['--profile=out-link', 'BEGIN{x=1}'] })],
  ['gawk -oout-link', () => ({ cmd: 'gawk', args: ['-oout-link', 'BEGIN{x=1}'] })],
  ['gawk -p/abs', (O) => ({ cmd: 'gawk', args: [`-p${O}/pwn`, 'BEGIN{x=1}'] })],
  ['gawk -D (debugger commands from a file)', () => ({ cmd: 'gawk', args: ['-Dcmds.txt', 'BEGIN{x=1}'] })],
];

/** Uploads is read-only: each of these would write a file there (finding 4, 7b, tree -R). */
const READONLY_WRITES: [string, string[]][] = [
  ['uniq', ['-', 'u.txt']],
  ['uniq', ['--', '-', 'u.txt']],
  ['uniq', ['-c', '-', 'u.txt']],
  ['uniq', ['-f', '1', '-', 'u.txt']],
  ['xxd', ['-', 'u.txt']],
  ['xxd', ['-c', '8', '-', 'u.txt']],
  ['tar', ['-tf', 'a.tar', '--index-file=u.txt']],
  ['tar', ['-tvf', 'a.tar', '--index-file', 'u.txt']],
  ['tar', ['-tf', 'a.tar', '--ind=u.txt']],
  ['tar', ['-tf', 'a.tar', '-g', 'u.txt']],
  ['tar', ['tf', 'a.tar', '--listed-incremental=u.txt']],
  ['tar', ['-tf', 'a.tar', '--volno-file=u.txt']],
  ['sort', ['-T', 'sub', 'u.txt']],
  ['tree', ['-o', 'u.txt']],
  ['tree', ['-R', '-H', '.', '-L', '1']],
  ['gawk', ['-d', 'BEGIN{x=1}']],
  ['gawk', ['--dump-variables=u.txt', 'BEGIN{x=1}']],
  ['gawk', ['-p', 'BEGIN{x=1}']],
  ['gawk', ['--profile', 'BEGIN{x=1}']],
  ['gawk', ['-o', 'BEGIN{x=1}']],
  ['gawk', ['-ou.txt', 'BEGIN{x=1}']],
  ['awk', ['-d', 'BEGIN{x=1}']],
];

let tarball: Buffer;
beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-names-'));
  fs.writeFileSync(path.join(dir, 'member.txt'), 'member\n');
  execFileSync('tar', ['cf', 'a.tar', 'member.txt'], { cwd: dir });
  tarball = fs.readFileSync(path.join(dir, 'a.tar'));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  beforeEach(() => {
    a = makeArena(mode);
    a.put('in.txt', 'one\ntwo\nthree\n');
    a.put('g.txt', 'existing\n');
    a.put('d/keep.txt', 'd is a folder\n');
    a.put('a.tar', tarball);
    a.put('cmds.txt', 'dump out.txt\n');
    // A dangling link to a file outside: writing through it would create the file there.
    fs.symlinkSync(path.join(a.outside, 'through-link'), path.join(a.zone, 'out-link'));
  });
  afterEach(() => a.finish());

  describe('output names, output files and read files that would leave the zone', () => {
    it.each(ESCAPES)('%s is refused', async (_name, make) => {
      const r = await a.exec({ zone: 'storage', ...make(a.outside) });
      expectRefused(r);
      expect(fs.existsSync(path.join(a.s.base, 'users', 'bob', 'Storage', 'data', 'pwn00'))).toBe(false);
    });
    it.skipIf(!installed('gawk')).each(GAWK)('%s is refused', async (_name, make) => {
      expectRefused(await a.exec({ zone: 'storage', ...make(a.outside) }));
    });
  });

  it('the error for a name part says why and what to do instead', async () => {
    const r = await a.exec({ zone: 'storage', cmd: 'csplit', args: ['-f', 'd', '-b', `/../${BOB}/pwn%02d`, 'in.txt', '2'] });
    expectRefused(r, 'ARGUMENT_FORBIDDEN');
    expect(r.error?.message).toMatch(/part of output file names/);
    expect(r.error?.hint).toMatch(/prefix/);
  });

  describe('the same options inside the zone still work (no false positives)', () => {
    it('csplit -f parts/chunk -b %02d.txt', async () => {
      a.put('parts/.keep', '');
      expectRan(await a.exec({ zone: 'storage', cmd: 'csplit', args: ['-s', '-f', 'parts/chunk', '-b', '%02d.txt', 'in.txt', '2'] }));
      expect(fs.readFileSync(path.join(a.zone, 'parts', 'chunk01.txt'), 'utf8')).toBe('two\nthree\n');
    });
    it('split --additional-suffix=.txt in.txt d/x', async () => {
      expectRan(await a.exec({ zone: 'storage', cmd: 'split', args: ['-l', '2', '--additional-suffix=.txt', 'in.txt', 'd/x'] }));
      expect(fs.readFileSync(path.join(a.zone, 'd', 'xab.txt'), 'utf8')).toBe('three\n');
    });
    it('cp --backup -S .orig', async () => {
      expectRan(await a.exec({ zone: 'storage', cmd: 'cp', args: ['--backup=simple', '-S', '.orig', 'in.txt', 'g.txt'] }));
      expect(fs.readFileSync(path.join(a.zone, 'g.txt.orig'), 'utf8')).toBe('existing\n');
    });
    it('tar --index-file inside the zone, tar --newer with a date, tar --occurrence=1', async () => {
      expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-tvf', 'a.tar', '--index-file=list.txt'] }));
      expect(fs.readFileSync(path.join(a.zone, 'list.txt'), 'utf8')).toContain('member.txt');
      expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-cf', 'x.tar', '--newer=2001-01-01', 'in.txt'] }));
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-tf', 'a.tar', '--occurrence=1', 'member.txt'] })).stdout).toBe('member.txt\n');
    });
    it('uniq - is standard input (empty here) when alone; uniq IN OUT writes OUT', async () => {
      expectRan(await a.exec({ zone: 'storage', cmd: 'uniq', args: ['in.txt', 'u-out.txt'] }));
      expect(fs.readFileSync(path.join(a.zone, 'u-out.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'uniq', args: ['-'] })).stdout).toBe('');
    });
    it('od -w8 and pr -s: (optional values attached)', async () => {
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'od', args: ['-c', '-w8', 'in.txt'] })).stdout).toContain('o   n   e');
      expectRan(await a.exec({ zone: 'storage', cmd: 'pr', args: ['-2', '-s:', '-t', 'in.txt'] }));
    });
    it.skipIf(!installed('gawk'))('gawk -d writes awkvars.out in a writable zone', async () => {
      expectRan(await a.exec({ zone: 'storage', cmd: 'gawk', args: ['-dvars.out', 'BEGIN{answer=42}'] }));
      expect(fs.readFileSync(path.join(a.zone, 'vars.out'), 'utf8')).toContain('answer: 42');
    });
  });

  describe('read-only Uploads: output options and `-` operands are writes', () => {
    let digest: () => string;
    beforeEach(() => {
      a.put(path.join(a.uploads, 'u.txt'), 'Alpha\nbeta\nbeta\n');
      a.put(path.join(a.uploads, 'a.tar'), tarball);
      a.put(path.join(a.uploads, 'sub', 'deep', 'x.txt'), 'x\n');
      digest = () => {
        const h = crypto.createHash('sha256');
        const walk = (dir: string) => {
          for (const name of fs.readdirSync(dir).sort()) {
            const full = path.join(dir, name);
            h.update(`${path.relative(a.uploads, full)}\n`);
            if (fs.lstatSync(full).isDirectory()) walk(full);
            else h.update(fs.readFileSync(full));
          }
        };
        walk(a.uploads);
        return h.digest('hex');
      };
    });
    it.each(READONLY_WRITES)('%s %j is refused and Uploads is unchanged', async (cmd, args) => {
      const before = digest();
      const r = await a.exec({ zone: 'uploads', cmd, args });
      expectRefused(r, ['ARGUMENT_FORBIDDEN', 'COMMAND_FORBIDDEN']);
      expect(r.error?.message).toMatch(/read-only/);
      expect(digest()).toBe(before);
    });
    it('reading with - and output options left out still works', async () => {
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'uniq', args: ['u.txt'] })).stdout).toBe('Alpha\nbeta\n');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'xxd', args: ['-l', '2', 'u.txt'] })).stdout).toContain('416c');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'tar', args: ['-tvf', 'a.tar'] })).stdout).toContain('member.txt');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'cat', args: ['-', 'u.txt'] })).stdout).toBe('Alpha\nbeta\nbeta\n');
    });
  });
});

describe.each(MODES)('group space, %s mode: a file the caller may not change stays unchanged', (mode) => {
  it.each([
    ['uniq', ['-', 'f.txt']],
    ['xxd', ['-', 'f.txt']],
    ['tar', ['-tf', 'a.tar', '--index-file=f.txt']],
  ] as [string, string[]][])('%s %j', async (cmd, args) => {
    const s = await groupShed({ sandbox: mode });
    try {
      const g = { zone: 'group', group: 'team' };
      expect((await s.call('shed_create_file', { ...g, path: 'f.txt', content: 'alice wrote this\n', mode: 'owner_ro' })).success).toBe(true);
      fs.writeFileSync(s.groupPath('a.tar'), tarball);
      const r = await s.call('shed_exec', { ...g, cmd, args }, { user: 'bob' });
      // Any command runs: f.txt is read-only for it (where file modes bind, the write fails), and what
      // it did to f.txt anyway is undone after it (restored from the last commit, and said so).
      expect(r.success, JSON.stringify(r)).toBe(true);
      expect(read(s.groupPath('f.txt'))).toBe('alice wrote this\n');
    } finally {
      s.cleanup();
    }
  });
});
