/**
 * Classes of attack on the argument policy that come from reading arguments differently from the
 * program: an option's arity (a flag taken for a valued option hides the next argument), options
 * after `--` or after an operand, a path behind a prefix or a scheme (file:, @), and writes in
 * read-only Uploads hidden in clusters, member lists or negations. Each runs in every sandbox mode;
 * the arena then checks that nothing outside the zone was read or written.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectRan, expectRefused, installed, makeArena, MODES, type Arena } from './exec-harness.js';

type Case = [string, (O: string, a: Arena) => { cmd: string; args: string[] }];

/** A flag or optional-valued option modelled as taking the next argument hid that argument from every check. */
const ARITY: Case[] = [
  ['tar --exclude-vcs /abs (a flag)', (O) => ({ cmd: 'tar', args: ['-cf', 'out.tar', '--exclude-vcs', `${O}/secret.txt`] })],
  ['tar --exclude-vcs-ignores /abs', (O) => ({ cmd: 'tar', args: ['-cf', 'out.tar', '--exclude-vcs-ignores', `${O}/secret.txt`] })],
  ['tar --sparse /abs (a flag, prefix of --sparse-version)', (O) => ({ cmd: 'tar', args: ['-cf', 'out.tar', '--sparse', `${O}/secret.txt`] })],
  ['tar --xattrs /abs (prefix of --xattrs-include)', (O) => ({ cmd: 'tar', args: ['-cf', 'out.tar', '--xattrs', `${O}/secret.txt`] })],
  ['tar --totals /abs (optional value)', (O) => ({ cmd: 'tar', args: ['-cf', 'out.tar', '--totals', `${O}/secret.txt`] })],
  ['du --time /abs (optional value, attached only)', (O) => ({ cmd: 'du', args: ['--time', O] })],
  ['du --ti /abs (abbreviated)', (O) => ({ cmd: 'du', args: ['--ti', O] })],
  ['grep --binary x /abs (prefix of --binary-files)', (O) => ({ cmd: 'grep', args: ['-e', 'x', '--binary', `${O}/secret.txt`] })],
  ['column --table /abs (prefix of --table-*)', (O) => ({ cmd: 'column', args: ['--table', `${O}/secret.txt`] })],
  ['diff --new-file f /abs (prefix of --new-line-format)', (O) => ({ cmd: 'diff', args: ['--new-file', 'f.txt', `${O}/secret.txt`] })],
  ['iconv -f /abs (a charset holding a slash is a charmap file)', (O) => ({ cmd: 'iconv', args: ['-f', `${O}/secret.txt`, '-t', 'utf-8', 'f.txt'] })],
  ['iconv --to-code=../x', () => ({ cmd: 'iconv', args: ['-f', 'utf-8', '--to-code=../../../above-secret.txt', 'f.txt'] })],
  ['iconv -t through a link leading out', () => ({ cmd: 'iconv', args: ['-f', 'utf-8', '-tout-link/secret.txt', 'f.txt'] })],
  ['awk prog -F /abs (options end at the program text)', (O) => ({ cmd: 'awk', args: ['{print}', '-F', `${O}/secret.txt`] })],
  ['gawk prog -v /abs', (O) => ({ cmd: 'gawk', args: ['{print}', '-v', `${O}/secret.txt`] })],
  ['grep /abs -e x (the pattern came from -e, later in the list)', (O) => ({ cmd: 'grep', args: [`${O}/secret.txt`, '-e', 'KANARIE'] })],
  ['sed /abs -e p', (O) => ({ cmd: 'sed', args: ['-n', `${O}/secret.txt`, '-e', 'p'] })],
  ['xxd -ps /abs (-ps is one flag, not -p -s VALUE)', (O) => ({ cmd: 'xxd', args: ['-ps', `${O}/secret.txt`] })],
  ['curl -z /abs (a date or a file)', (O) => ({ cmd: 'curl', args: ['-z', `${O}/secret.txt`, '-o', 'x', 'https://127.0.0.1:9/'] })],
];

/** `--` does not end the options of every program; after a real one, every argument is still a path. */
const DASHDASH: Case[] = [
  ['find -- . -exec (find keeps parsing its expression)', () => ({ cmd: 'find', args: ['--', '.', '-maxdepth', '0', '-exec', 'touch', 'pwned', ';'] })],
  ['find -- . -fprint', () => ({ cmd: 'find', args: ['--', '.', '-fprint', 'pwned'] })],
  ['unzip -- a.zip -d/abs (a second dash negates, it does not end options)', (O) => ({ cmd: 'unzip', args: ['--', 'a.zip', `-d${O}`] })],
  ['unzip -o -- a.zip -d /abs', (O) => ({ cmd: 'unzip', args: ['-o', '--', 'a.zip', '-d', O] })],
  ['unzip a.zip -x -- -d/abs', (O) => ({ cmd: 'unzip', args: ['a.zip', '-x', '--', `-d${O}`] })],
  ['zipinfo -- /abs', (O) => ({ cmd: 'zipinfo', args: ['--', `${O}/secret.txt`] })],
  ['cat -- /abs (after a real --, still a path)', (O) => ({ cmd: 'cat', args: ['--', `${O}/secret.txt`] })],
  ['sort -- -o /abs (after --, "-o" and /abs are files)', (O) => ({ cmd: 'sort', args: ['--', '-o', `${O}/secret.txt`] })],
  ['grep x -- /abs', (O) => ({ cmd: 'grep', args: ['x', '--', `${O}/secret.txt`] })],
  ['sqlite3 -- -cmd (sqlite3 has no --)', () => ({ cmd: 'sqlite3', args: ['--', '-cmd', '.shell touch pwned', 'db.sqlite'] })],
];

/** A path behind a prefix or scheme the program reads through. */
const PREFIXES: Case[] = [
  ['sqlite3 -separator , file:/abs (the URI is the database, not the separator)', (O) => ({ cmd: 'sqlite3', args: ['-separator', ',', `file:${O}/db.sqlite`, 'select 1'] })],
  ['sqlite3 file:/proc/self/cwd/../..', () => ({ cmd: 'sqlite3', args: ['-separator', ',', 'file:/proc/self/cwd/../../../../access_auth.sqlite', 'select 1'] })],
  ['sqlite3 file:../.. (relative, climbing)', (O, a) => ({ cmd: 'sqlite3', args: [`file:${a.rel(path.join(O, 'db.sqlite'))}`, 'select 1'] })],
  ['sqlite3 file:%2F (percent-encoded slash)', (O) => ({ cmd: 'sqlite3', args: [`file:${O.replace(/\//g, '%2F')}%2Fdb.sqlite`, 'select 1'] })],
  ['sqlite3 file://localhost/abs', (O) => ({ cmd: 'sqlite3', args: [`file://localhost${O}/db.sqlite`, 'select 1'] })],
  ['sqlite3 FILE: upper case', (O) => ({ cmd: 'sqlite3', args: [`FILE:${O}/db.sqlite`, 'select 1'] })],
  ['sqlite3 file:x?modeof=/abs', (O) => ({ cmd: 'sqlite3', args: [`file:new.db?modeof=${O}/secret.txt`, 'create table t(a)'] })],
  ['sqlite3 file:x?vfs=', () => ({ cmd: 'sqlite3', args: ['file:new.db?vfs=unix-dotfile', 'select 1'] })],
  ['sqlite3 -newline x -nullvalue y file:/abs', (O) => ({ cmd: 'sqlite3', args: ['-newline', 'x', '-nullvalue', 'y', `file:${O}/db.sqlite`, 'select 1'] })],
  ['sqlite3 --separator , (double dash word) file:/abs', (O) => ({ cmd: 'sqlite3', args: ['--separator', ',', `file:${O}/db.sqlite`, 'select 1'] })],
  ['strings @/abs (response file)', (O) => ({ cmd: 'strings', args: [`@${O}/secret.txt`] })],
  ['strings -n 4 @../x', () => ({ cmd: 'strings', args: ['-n', '4', '@../../../above-secret.txt'] })],
];

/** Read-only Uploads: writes the old regexes missed. */
const READONLY: Case[] = [
  ['tar -xfevil.tar (value attached in the cluster)', () => ({ cmd: 'tar', args: ['-xfa.tar'] })],
  ['tar -vxfa.tar', () => ({ cmd: 'tar', args: ['-vxfa.tar'] })],
  ['tar --verbose -xf a.tar', () => ({ cmd: 'tar', args: ['-vf', 'a.tar', '-x'] })],
  ['unzip a.zip -x -l (-l after the archive is a member name)', () => ({ cmd: 'unzip', args: ['a.zip', '-x', '-l'] })],
  ['unzip a.zip -l', () => ({ cmd: 'unzip', args: ['a.zip', '-l'] })],
  ['unzip -l--l a.zip (negated)', () => ({ cmd: 'unzip', args: ['-l--l', 'a.zip'] })],
  ['unzip -T -l a.zip (sets the archive time)', () => ({ cmd: 'unzip', args: ['-lT', 'a.zip'] })],
  ['sed -n -i.bak p', () => ({ cmd: 'sed', args: ['-ni.bak', 'p', 'u.txt'] })],
  ['xxd -revert u.txt', () => ({ cmd: 'xxd', args: ['-revert', 'u.txt', 'out'] })],
];

let archives: { tar: Buffer; zip: Buffer };
beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-classes-'));
  fs.writeFileSync(path.join(dir, 'member.txt'), 'member\n');
  execFileSync('tar', ['cf', 'a.tar', 'member.txt'], { cwd: dir });
  execFileSync('zip', ['-q', 'a.zip', 'member.txt'], { cwd: dir });
  archives = { tar: fs.readFileSync(path.join(dir, 'a.tar')), zip: fs.readFileSync(path.join(dir, 'a.zip')) };
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  beforeEach(() => {
    a = makeArena(mode, { network_mode: 'safe' });
    a.put('f.txt', 'line one\n');
    a.put('-F', 'a file named -F\n');
    a.put('-v', 'a file named -v\n');
    a.put('a.zip', archives.zip);
    a.put(path.join(a.uploads, 'u.txt'), 'upload\n');
    a.put(path.join(a.uploads, 'a.tar'), archives.tar);
    a.put(path.join(a.uploads, 'a.zip'), archives.zip);
    fs.symlinkSync(a.outside, path.join(a.zone, 'out-link'));
  });
  afterEach(() => a.finish());

  const refused = async (make: Case[1], zone = 'storage') => {
    const r = await a.exec({ zone, ...make(a.outside, a) });
    expectRefused(r, ['ARGUMENT_FORBIDDEN', 'PATH_ESCAPE', 'COMMAND_FORBIDDEN']);
    expect(fs.existsSync(path.join(a.zone, 'pwned'))).toBe(false);
  };

  describe('arity: what a flag or an optional value leaves for the next argument', () => {
    it.each(ARITY)('%s', async (_n, make) => refused(make));
  });

  describe('-- and operands: options as the program reads them', () => {
    it.each(DASHDASH)('%s', async (_n, make) => refused(make));
  });

  describe('prefixes and schemes before a path', () => {
    it.each(PREFIXES)('%s', async (_n, make) => refused(make));
  });

  describe('read-only Uploads', () => {
    it.each(READONLY)('%s', async (_n, make) => {
      const before = fs.readdirSync(a.uploads).sort();
      await refused(make, 'uploads');
      expect(fs.readdirSync(a.uploads).sort()).toEqual(before);
    });

    it('an outward link left in Uploads is removed before diff -r can follow it', async () => {
      fs.mkdirSync(path.join(a.uploads, 'x'));
      fs.mkdirSync(path.join(a.uploads, 'y'));
      fs.symlinkSync(path.join(a.outside, 'secret.txt'), path.join(a.uploads, 'x', 'n.txt'));
      a.put(path.join(a.uploads, 'y', 'n.txt'), 'other\n');
      const r = await a.exec({ zone: 'uploads', cmd: 'diff', args: ['-r', 'x', 'y'] });
      if (mode === 'validated') expect(fs.existsSync(path.join(a.uploads, 'x', 'n.txt'))).toBe(false);
      expect(JSON.stringify(r)).not.toContain('KANARIE');
    });
  });

  it('the same programs still work as their parsers read them (no false positives)', async () => {
    a.put('d/x.txt', 'x\n');
    expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-cf', 'out.tar', '--exclude-vcs', 'd'] }));
    expect(expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-tf', 'out.tar'] })).stdout).toContain('d/x.txt');
    expectRan(await a.exec({ zone: 'storage', cmd: 'du', args: ['--time', 'd'] }));
    expectRan(await a.exec({ zone: 'storage', cmd: 'du', args: ['--time=ctime', '-s', 'd'] }));
    expect(expectRan(await a.exec({ zone: 'storage', cmd: 'iconv', args: ['-f', 'utf-8', '-t', 'ascii//TRANSLIT', 'f.txt'] })).stdout).toBe('line one\n');
    expect(expectRan(await a.exec({ zone: 'storage', cmd: 'awk', args: ['-F', ' ', '{print $2}', 'f.txt'] })).stdout).toBe('one\n');
    expect(expectRan(await a.exec({ zone: 'storage', cmd: 'awk', args: ['{print FILENAME}', '-F'] })).stdout).toBe('-F\n');
    expect(expectRan(await a.exec({ zone: 'storage', cmd: 'grep', args: ['f.txt', '-e', 'one'] }))).toBeTruthy();
    expect(expectRan(await a.exec({ zone: 'storage', cmd: 'cut', args: ['-d', '/', '-f', '1', 'f.txt'] })).stdout).toBe('line one\n');
    expect(expectRan(await a.exec({ zone: 'storage', cmd: 'grep', args: ['-c', '--', '-v', '-v'] })).stdout).toBe('1\n');
    const q = expectRan(await a.exec({ zone: 'storage', cmd: 'sqlite3', args: ['-separator', ',', 'file:new.db?mode=rwc', 'create table t(a,b)', "insert into t values(1,'x')", 'select * from t'] }));
    expect(q.stdout).toBe('1,x\n');
    expect(fs.existsSync(path.join(a.zone, 'new.db'))).toBe(true);
    expectRan(await a.exec({ zone: 'storage', cmd: 'find', args: ['--', '.', '-maxdepth', '1', '-name', 'f.txt'] }));
    expectRan(await a.exec({ zone: 'uploads', cmd: 'unzip', args: ['-l', 'a.zip'] }));
    expectRan(await a.exec({ zone: 'uploads', cmd: 'tar', args: ['-tvfa.tar'] }));
    if (installed('xxd')) expect(expectRan(await a.exec({ zone: 'storage', cmd: 'xxd', args: ['-ps', 'f.txt'] })).stdout).toBe('6c696e65206f6e650a\n');
    expectRan(await a.exec({ zone: 'storage', cmd: 'unzip', args: ['-o', 'a.zip', '-d', 'unz'] }));
    expect(fs.readFileSync(path.join(a.zone, 'unz', 'member.txt'), 'utf8')).toBe('member\n');
  });
});
