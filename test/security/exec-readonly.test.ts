/**
 * Uploads is read-only for shed_exec (shed_delete is its only way to remove files): every form
 * of writing is refused, in both modes, while reading commands work without the original's false
 * positives (grep -i, find -iname).
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectOk, expectRan, expectRefused, makeArena, MODES, type Arena } from './exec-harness.js';

let archives: { tar: Buffer; zip: Buffer; db: Buffer };
beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-ro-'));
  fs.writeFileSync(path.join(dir, 'member.txt'), 'member\n');
  execFileSync('tar', ['cf', 'a.tar', 'member.txt'], { cwd: dir });
  execFileSync('zip', ['-q', 'a.zip', 'member.txt'], { cwd: dir });
  execFileSync('sqlite3', [path.join(dir, 'db.sqlite'), 'create table t(a); insert into t values (7);']);
  archives = { tar: fs.readFileSync(path.join(dir, 'a.tar')), zip: fs.readFileSync(path.join(dir, 'a.zip')), db: fs.readFileSync(path.join(dir, 'db.sqlite')) };
  fs.rmSync(dir, { recursive: true, force: true });
});

const WRITES: [string, string[]][] = [
  ['sed', ['-i', 's/Alpha/X/', 'u.txt']],
  ['sed', ['-ni', 's/Alpha/X/p', 'u.txt']],
  ['sed', ['--in-place', 's/Alpha/X/', 'u.txt']],
  ['sed', ['--in-pl=.bak', 's/Alpha/X/', 'u.txt']],
  ['sed', ['-i.bak', 's/Alpha/X/', 'u.txt']],
  ['sed', ['-si', 's/Alpha/X/', 'u.txt']],
  ['sort', ['-o', 'u.txt', 'u.txt']],
  ['sort', ['-rou.txt', 'u.txt']],
  ['sort', ['--output=sorted.txt', 'u.txt']],
  ['tar', ['xf', 'a.tar']],
  ['tar', ['-xf', 'a.tar']],
  ['tar', ['-xvf', 'a.tar']],
  ['tar', ['--extract', '-f', 'a.tar']],
  ['tar', ['--ext', '-f', 'a.tar']],
  ['tar', ['--get', '-f', 'a.tar']],
  ['tar', ['-cf', 'new.tar', 'u.txt']],
  ['tar', ['cf', 'new.tar', 'u.txt']],
  ['tar', ['-rf', 'a.tar', 'u.txt']],
  ['tar', ['--delete', '-f', 'a.tar', 'member.txt']],
  ['unzip', ['a.zip']],
  ['unzip', ['-o', 'a.zip']],
  ['unzip', ['-d', 'out', 'a.zip']],
  ['uniq', ['u.txt', 'out.txt']],
  ['xxd', ['u.txt', 'out.hex']],
  ['xxd', ['-r', 'u.txt']],
  ['shuf', ['-o', 'out.txt', 'u.txt']],
  ['iconv', ['-f', 'utf-8', '-t', 'ascii', '-o', 'out.txt', 'u.txt']],
  ['find', ['.', '-name', 'u.txt', '-delete']],
  ['find', ['.', '-fprint', 'list.txt']],
  ['yq', ['-i', '.', 'u.txt']],
  ['touch', ['new.txt']],
  ['rm', ['u.txt']],
  ['rm', ['-f', 'a.tar']],
  ['mv', ['u.txt', 'v.txt']],
  ['cp', ['u.txt', 'v.txt']],
  ['mkdir', ['d']],
  ['rmdir', ['d']],
  ['truncate', ['-s', '0', 'u.txt']],
  ['tee', ['u.txt']],
  ['split', ['u.txt']],
  ['gzip', ['u.txt']],
  ['zip', ['z.zip', 'u.txt']],
  ['shred', ['u.txt']],
  ['dos2unix', ['u.txt']],
  ['patch', ['u.txt', 'a.tar']],
  ['chmod', ['000', 'u.txt']],
];

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  let digest: () => string;
  beforeEach(() => {
    a = makeArena(mode);
    a.put(path.join(a.uploads, 'u.txt'), 'Alpha\nbeta\nalpha\n');
    a.put(path.join(a.uploads, 'a.tar'), archives.tar);
    a.put(path.join(a.uploads, 'a.zip'), archives.zip);
    a.put(path.join(a.uploads, 'db.sqlite'), archives.db);
    a.put(path.join(a.uploads, 'sub', 'Report.TXT'), 'report\n');
    digest = () => {
      const h = crypto.createHash('sha256');
      const walk = (dir: string) => {
        for (const name of fs.readdirSync(dir).sort()) {
          const full = path.join(dir, name);
          const st = fs.lstatSync(full);
          h.update(`${path.relative(a.uploads, full)}:${st.mode}\n`);
          if (st.isDirectory()) walk(full);
          else h.update(fs.readFileSync(full));
        }
      };
      walk(a.uploads);
      return h.digest('hex');
    };
  });
  afterEach(() => a.finish());

  it.each(WRITES)('%s %j is refused and Uploads is unchanged', async (cmd, args) => {
    const before = digest();
    const r = await a.exec({ zone: 'uploads', cmd, args });
    expectRefused(r, ['ARGUMENT_FORBIDDEN', 'COMMAND_FORBIDDEN', 'ZONE_READONLY']);
    expect(r.error?.message).toMatch(/read-only|whitelist|forbidden|not allowed/);
    expect(digest()).toBe(before);
  });

  it('stdout_file and stderr_file → ZONE_READONLY naming the parameter', async () => {
    const before = digest();
    for (const param of ['stdout_file', 'stderr_file']) {
      const r = await a.exec({ zone: 'uploads', cmd: 'cat', args: ['u.txt'], [param]: 'copy.txt' });
      expectRefused(r, 'ZONE_READONLY');
      expect(r.error?.message).toContain(param);
    }
    expect(digest()).toBe(before);
  });

  it('sqlite3 opens the database read-only: a write fails and the file is unchanged', async () => {
    const before = digest();
    const d = expectOk(await a.exec({ zone: 'uploads', cmd: 'sqlite3', args: ['db.sqlite', 'insert into t values (8)'] }));
    expect(d.returncode).not.toBe(0);
    expect(d.stderr).toMatch(/readonly|read-only/i);
    expect(digest()).toBe(before);
  });

  describe('reading works (no false positives)', () => {
    it('grep -i', async () => {
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'grep', args: ['-i', 'ALPHA', 'u.txt'] })).stdout).toBe('Alpha\nalpha\n');
    });
    it('grep -ri and grep --ignore-case', async () => {
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'grep', args: ['-ri', 'REPORT', 'sub'] })).stdout).toBe('sub/Report.TXT:report\n');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'grep', args: ['--ignore-case', '-c', 'alpha', 'u.txt'] })).stdout).toBe('2\n');
    });
    it('find -iname', async () => {
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'find', args: ['.', '-iname', '*.txt'] })).stdout.split('\n').sort().join('\n')).toBe('\n./sub/Report.TXT\n./u.txt');
    });
    it('cat, head, wc, sort, md5sum', async () => {
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'cat', args: ['u.txt'] })).stdout).toBe('Alpha\nbeta\nalpha\n');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'head', args: ['-n', '1', 'u.txt'] })).stdout).toBe('Alpha\n');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'wc', args: ['-l', 'u.txt'] })).stdout).toBe('3 u.txt\n');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'sort', args: ['-f', 'u.txt'] })).stdout).toBe('Alpha\nalpha\nbeta\n');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'md5sum', args: ['u.txt'] })).stdout).toMatch(/^[0-9a-f]{32} {2}u\.txt\n$/);
    });
    it('unzip -l, unzip -p, tar -tf, tar tvf', async () => {
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'unzip', args: ['-l', 'a.zip'] })).stdout).toContain('member.txt');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'unzip', args: ['-p', 'a.zip', 'member.txt'] })).stdout).toBe('member\n');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'tar', args: ['-tf', 'a.tar'] })).stdout).toBe('member.txt\n');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'tar', args: ['tvf', 'a.tar'] })).stdout).toContain('member.txt');
    });
    it('sqlite3 select', async () => {
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'sqlite3', args: ['db.sqlite', 'select a from t'] })).stdout).toBe('7\n');
    });
    it('sed -n (print, no in-place)', async () => {
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'sed', args: ['-n', '2p', 'u.txt'] })).stdout).toBe('beta\n');
    });
  });
});
