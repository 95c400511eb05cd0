/**
 * shed_exec behaviour in every sandbox mode (bwrap, landlock, validated): results and failures, truncation, output files
 * (binary-safe), stderr handling, timeouts, missing programs, the sandbox view of paths, and the
 * everyday commands that the Python original refused by mistake.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';

const MODES = ['bwrap', 'landlock', 'validated'] as const;

function installed(cmd: string): boolean {
  return ['/usr/local/bin', '/usr/bin', '/bin'].some((d) => fs.existsSync(path.join(d, cmd)));
}
/** Whitelisted, not sandbox-only, and not installed here: for COMMAND_NOT_FOUND. */
const MISSING = ['rg', 'xmllint', 'dc', 'tree', 'gawk', 'recode', 'uuencode', 'dos2unix', 'lz4', 'bc', 'jq'].find((c) => !installed(c));

function ok(r: Result): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- result fields
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.success).toBe(true);
  return r.data!;
}
function ran(r: Result): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- result fields
  const d = ok(r);
  expect(d.returncode, `${d.command}: ${d.stderr}`).toBe(0);
  return d;
}

describe.each(MODES)('shed_exec (%s mode)', (mode) => {
  let s: Shed;
  let zone: string;
  const put = (rel: string, body: string | Buffer, z: 'storage' | 'uploads' = 'storage') => {
    const abs = s.zonePath(z, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, body);
  };
  const exec = (args: Record<string, unknown>) => s.call('shed_exec', { zone: 'storage', ...args });
  beforeEach(() => {
    s = makeShed({ sandbox: mode });
    fs.mkdirSync(s.zonePath('storage'), { recursive: true });
    zone = fs.realpathSync(s.zonePath('storage'));
    put('f.txt', 'one\ntwo\nthree\n');
  });
  afterEach(() => s.cleanup());

  describe('results', () => {
    it('returns stdout, stderr, returncode, the zone label, the command and the args as given', async () => {
      const d = ran(await exec({ cmd: 'cat', args: ['f.txt'] }));
      expect(d).toMatchObject({ zone: 'Storage', command: 'cat', args: ['f.txt'], stdout: 'one\ntwo\nthree\n', stderr: '', returncode: 0, truncated: false, sandbox: mode });
    });

    it('a non-zero exit code is success:true with a message that says FAILED and points at stderr', async () => {
      const r = await exec({ cmd: 'ls', args: ['missing.txt'] });
      const d = ok(r);
      expect(d.returncode).toBe(2);
      expect(d.stderr).toContain('missing.txt');
      expect(r.message).toMatch(/FAILED with exit code 2.*stderr/);
    });

    it('args default to none', async () => {
      expect(ran(await exec({ cmd: 'ls' })).stdout).toContain('f.txt');
      expect(ran(await exec({ cmd: 'ls', args: [] })).stdout).toContain('f.txt');
    });

    it('the zone appears as /zone under bwrap; where commands run in the real folder (landlock, validated) pwd, realpath and readlink -f are refused; error messages carry no disk path', async () => {
      if (mode === 'bwrap') {
        expect(ran(await exec({ cmd: 'pwd' })).stdout).toBe('/zone\n');
        expect(ran(await exec({ cmd: 'realpath', args: ['f.txt'] })).stdout).toBe('/zone/f.txt\n');
        expect(ran(await exec({ cmd: 'readlink', args: ['-f', '.'] })).stdout).toBe('/zone\n');
      } else {
        for (const [cmd, args] of [['pwd', []], ['realpath', ['f.txt']], ['readlink', ['-f', '.']]] as [string, string[]][]) {
          const r = await exec({ cmd, args });
          expect(['COMMAND_FORBIDDEN', 'ARGUMENT_FORBIDDEN']).toContain(r.error?.code);
          expect(r.error?.hint).toBeTruthy();
        }
      }
      expect(ran(await exec({ cmd: 'realpath', args: ['--relative-to=.', 'f.txt'] })).stdout).toBe('f.txt\n');
      const r = await exec({ cmd: 'ls', args: ['-la', 'nope', '.'] });
      expect(JSON.stringify(r)).not.toContain(zone);
      expect(JSON.stringify(r)).not.toContain(s.base);
    });

    it('stdin is closed: a command waiting for input ends at once', async () => {
      const started = Date.now();
      expect(ran(await exec({ cmd: 'cat' })).stdout).toBe('');
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });

  describe('output limits', () => {
    it('truncates each stream at max_output with a notice giving the counts and how to get everything', async () => {
      const d = ok(await exec({ cmd: 'seq', args: ['1', '100000'], max_output: 100 }));
      expect(d.truncated).toBe(true);
      const [shown, notice] = (d.stdout as string).split('\n\n[...');
      expect(shown!.length).toBe(100);
      expect(shown).toBe(Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join('').slice(0, 100));
      expect(notice).toContain('showing the first 100 characters of about 588895 bytes');
      expect(notice).toContain('stdout_file');
    });

    it('stderr is truncated separately', async () => {
      const names = Array.from({ length: 200 }, (_, i) => `missing-${i}.txt`);
      const d = ok(await exec({ cmd: 'ls', args: names, max_output: 50 }));
      expect(d.stderr).toContain('stderr TRUNCATED: showing the first 50 characters');
      expect(d.truncated).toBe(true);
    });

    it('max_output=0 means the admin ceiling (max_output_absolute)', async () => {
      s.tools.valves = { ...s.tools.valves, max_output_absolute: 1000 };
      const d = ok(await exec({ cmd: 'seq', args: ['1', '10000'], max_output: 0 }));
      expect((d.stdout as string).indexOf('\n\n[...')).toBe(1000);
      const big = ok(await exec({ cmd: 'seq', args: ['1', '10000'], max_output: 999_999 }));
      expect((big.stdout as string).indexOf('\n\n[...')).toBe(1000);
    });

    it('output within the limit is not truncated', async () => {
      const d = ran(await exec({ cmd: 'seq', args: ['1', '5'], max_output: 10 }));
      expect(d).toMatchObject({ stdout: '1\n2\n3\n4\n5\n', truncated: false });
    });

    it('a negative max_output → INVALID_PARAMETER naming it', async () => {
      const r = await exec({ cmd: 'pwd', max_output: -1 });
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error?.message).toContain('max_output');
    });
  });

  describe('output files', () => {
    it('stdout_file is binary-safe: head -c 1000 of random bytes', async () => {
      const bytes = crypto.randomBytes(5000);
      bytes[0] = 0xff; // invalid UTF-8 on purpose
      put('blob.bin', bytes);
      const r = await exec({ cmd: 'head', args: ['-c', '1000', 'blob.bin'], stdout_file: 'out/first.bin' });
      const d = ran(r);
      expect(fs.readFileSync(path.join(zone, 'out/first.bin')).equals(bytes.subarray(0, 1000))).toBe(true);
      expect(d).toMatchObject({ stdout: '[Output written to out/first.bin]', stdout_file: 'out/first.bin', stdout_file_size: 1000 });
    });

    it('stdout_file replaces an existing file, even the input itself (written beside, then renamed)', async () => {
      ran(await exec({ cmd: 'sort', args: ['-r', 'f.txt'], stdout_file: 'f.txt' }));
      expect(fs.readFileSync(path.join(zone, 'f.txt'), 'utf8')).toBe('two\nthree\none\n');
      expect(fs.readdirSync(zone)).toEqual(['f.txt']);
    });

    it('stderr_file receives stderr; stdout is still returned', async () => {
      const d = ok(await exec({ cmd: 'ls', args: ['f.txt', 'missing.txt'], stderr_file: 'err.log' }));
      expect(d.stdout).toBe('f.txt\n');
      expect(d.stderr).toBe('[Errors written to err.log]');
      expect(fs.readFileSync(path.join(zone, 'err.log'), 'utf8')).toMatch(/missing\.txt.*No such file/);
      expect(d.stderr_file_size).toBe(fs.statSync(path.join(zone, 'err.log')).size);
    });

    it('redirect_stderr_to_stdout merges both streams (and wins over stderr_file)', async () => {
      const d = ok(await exec({ cmd: 'ls', args: ['f.txt', 'missing.txt'], redirect_stderr_to_stdout: true, stderr_file: 'never.log' }));
      expect(d.stdout).toContain('f.txt\n');
      expect(d.stdout).toContain('missing.txt');
      expect(d.stderr).toBe('');
      expect(fs.existsSync(path.join(zone, 'never.log'))).toBe(false);
      const f = ok(await exec({ cmd: 'ls', args: ['f.txt', 'missing.txt'], redirect_stderr_to_stdout: true, stdout_file: 'both.txt' }));
      expect(f.stdout).toBe('[Output written to both.txt]');
      const both = fs.readFileSync(path.join(zone, 'both.txt'), 'utf8');
      expect(both).toContain('f.txt');
      expect(both).toContain('missing.txt');
    });

    it('a stdout_file that is a folder → NOT_A_FILE; nothing is left behind', async () => {
      fs.mkdirSync(path.join(zone, 'dir'));
      const r = await exec({ cmd: 'cat', args: ['f.txt'], stdout_file: 'dir' });
      expect(r.error?.code).toBe('NOT_A_FILE');
      expect(fs.readdirSync(path.join(zone, 'dir'))).toEqual([]);
    });

    it('a refused command leaves no temp file for its stdout_file', async () => {
      const r = await exec({ cmd: 'sed', args: ['1e id', 'f.txt'], stdout_file: 'o.txt' });
      expect(r.error?.code).toBe('ARGUMENT_FORBIDDEN');
      expect(fs.readdirSync(zone)).toEqual(['f.txt']);
    });
  });

  describe('timeouts', () => {
    it('a command past its timeout → TIMEOUT with the limit and a hint naming the maximum', async () => {
      s.tools.valves = { ...s.tools.valves, exec_timeout_max: 7 };
      const r = await exec({ cmd: 'sleep', args: ['30'], timeout: 1 });
      expect(r.error?.code).toBe('TIMEOUT');
      expect(r.error?.details).toMatchObject({ command: 'sleep', timeout: 1 });
      expect(r.error?.hint).toContain('7');
    });

    it('timeout 0 is raised to 1 second; a timeout above the maximum is lowered to it', async () => {
      ran(await exec({ cmd: 'sleep', args: ['0.2'], timeout: 0 }));
      s.tools.valves = { ...s.tools.valves, exec_timeout_max: 1 };
      const r = await exec({ cmd: 'sleep', args: ['5'], timeout: 500 });
      expect(r.error?.details?.timeout).toBe(1);
    });

    it('the default timeout is exec_timeout_default', async () => {
      s.tools.valves = { ...s.tools.valves, exec_timeout_default: 1 };
      const r = await exec({ cmd: 'sleep', args: ['5'] });
      expect(r.error?.details?.timeout).toBe(1);
    });
  });

  describe('programs', () => {
    it.skipIf(MISSING === undefined)(`an allowed but missing program → COMMAND_NOT_FOUND with the package in the hint (${MISSING})`, async () => {
      const r = await exec({ cmd: MISSING!, args: [] });
      expect(r.error?.code).toBe('COMMAND_NOT_FOUND');
      expect(r.error?.message).toContain(MISSING!);
      expect(r.error?.hint).toMatch(/Debian package '[a-z0-9.+-]+'/);
      expect(r.error?.details?.package).toBeTruthy();
    });

    it('the policy speaks before COMMAND_NOT_FOUND: a forbidden option of a missing program is refused as such', async () => {
      const r = await exec({ cmd: 'rg', args: ['--pre', 'sh', 'x'] });
      expect(r.error?.code).toBe('ARGUMENT_FORBIDDEN');
    });

    it('a command outside the whitelist → COMMAND_FORBIDDEN pointing at shed_allowed_commands', async () => {
      const r = await exec({ cmd: 'nmap', args: [] });
      expect(r.error?.code).toBe('COMMAND_FORBIDDEN');
      expect(r.error?.hint).toContain('shed_allowed_commands');
    });

    it('cmd with options inside → COMMAND_FORBIDDEN with a hint that splits it', async () => {
      const r = await exec({ cmd: 'ls -la', args: [] });
      expect(r.error?.code).toBe('COMMAND_FORBIDDEN');
      expect(r.error?.hint).toContain('cmd="ls", args=["-la"]');
    });

    it.skipIf(mode !== 'validated')('media and other sandbox-only tools are refused without a kernel sandbox, saying why', async () => {
      for (const cmd of ['ffmpeg', 'pandoc', 'convert', 'exiftool', '7z', 'locate', 'git']) {
        const r = await exec({ cmd, args: ['x'] });
        expect(r.error?.code, cmd).toBe('COMMAND_FORBIDDEN');
        expect(r.error?.message, cmd).toMatch(/sandbox/);
      }
    });
  });

  describe("everyday commands the original refused (no false positives)", () => {
    beforeEach(() => {
      put('data.csv', 'name,amount\na,50\nb,150\nc,300\n');
      put('t.tsv', 'x y 50\nx z 150\nw v 101\n');
      put('conf.txt', '# comment\nkey=value\n# other\nkey2=v2\n');
      put('j.json', '{"a": {"b": 42}}\n');
      put('paths.txt', 'usr/local/bin\nvar/log/syslog\n');
      put('Storage.txt', 'Storage is the zone name\nother\n');
      put('dir/one.txt', '1\n');
      put('dir/two.md', '2\n');
    });

    it('grep Storage file (a pattern equal to the zone name)', async () => {
      expect(ran(await exec({ cmd: 'grep', args: ['Storage', 'Storage.txt'] })).stdout).toBe('Storage is the zone name\n');
    });
    it('grep -i in Uploads', async () => {
      put('u.txt', 'Hello\n', 'uploads');
      expect(ran(await s.call('shed_exec', { zone: 'uploads', cmd: 'grep', args: ['-i', 'hello', 'u.txt'] })).stdout).toBe('Hello\n');
    });
    it("awk '$3 > 100' (a comparison in a condition)", async () => {
      expect(ran(await exec({ cmd: 'awk', args: ['$3 > 100 { print $2 }', 't.tsv'] })).stdout).toBe('z\nv\n');
    });
    it('awk with a comparison inside print parentheses, ||, && and regex alternation', async () => {
      expect(ran(await exec({ cmd: 'awk', args: ['-F,', 'NR > 1 && ($2 > 100 || $1 ~ /^(a|z)$/) { print $1, ($2 > 200) }', 'data.csv'] })).stdout).toBe('a 0\nb 0\nc 1\n');
    });
    it("awk -F, '{s+=$2} END {print s}'", async () => {
      expect(ran(await exec({ cmd: 'awk', args: ['-F,', '{s+=$2} END {print s}', 'data.csv'] })).stdout).toBe('500\n');
    });
    it('awk division and regex with a slash in brackets', async () => {
      expect(ran(await exec({ cmd: 'awk', args: ['-F,', 'NR > 1 { t += $2 / 2 } /[/]/ { n++ } END { print t, n + 0 }', 'data.csv'] })).stdout).toBe('250 0\n');
    });
    it("sed -n '2,4p'", async () => {
      expect(ran(await exec({ cmd: 'sed', args: ['-n', '2,4p', 'conf.txt'] })).stdout).toBe('key=value\n# other\nkey2=v2\n');
    });
    it("sed 's/a/b/g'", async () => {
      expect(ran(await exec({ cmd: 'sed', args: ['s/e/E/g', 'conf.txt'] })).stdout).toBe('# commEnt\nkEy=valuE\n# othEr\nkEy2=v2\n');
    });
    it("sed '/^#/d'", async () => {
      expect(ran(await exec({ cmd: 'sed', args: ['/^#/d', 'conf.txt'] })).stdout).toBe('key=value\nkey2=v2\n');
    });
    it('sed with w, e and r letters inside regexes, replacements and appended text', async () => {
      expect(ran(await exec({ cmd: 'sed', args: ['-e', 's/value/write-error/', '-e', '/key2/a\\ appended with w e r', 'conf.txt'] })).stdout).toBe('# comment\nkey=write-error\n# other\nkey2=v2\n appended with w e r\n');
    });
    it('sed -i in Storage edits in place', async () => {
      ran(await exec({ cmd: 'sed', args: ['-i', 's/v2/V2/', 'conf.txt'] }));
      expect(fs.readFileSync(path.join(zone, 'conf.txt'), 'utf8')).toContain('key2=V2');
    });
    it("jq '.a | .b'", async () => {
      expect(ran(await exec({ cmd: 'jq', args: ['.a | .b', 'j.json'] })).stdout).toBe('42\n');
    });
    it('cut -d / -f 2', async () => {
      expect(ran(await exec({ cmd: 'cut', args: ['-d', '/', '-f', '2', 'paths.txt'] })).stdout).toBe('local\nlog\n');
      expect(ran(await exec({ cmd: 'cut', args: ['-d/', '-f2', 'paths.txt'] })).stdout).toBe('local\nlog\n');
    });
    it("find . -name '*.txt'", async () => {
      const out = ran(await exec({ cmd: 'find', args: ['dir', '-name', '*.txt'] })).stdout;
      expect(out).toBe('dir/one.txt\n');
    });
    it('tar -czf a.tgz dir, then tar -xzf a.tgz -C out', async () => {
      ran(await exec({ cmd: 'tar', args: ['-czf', 'a.tgz', 'dir'] }));
      ran(await exec({ cmd: 'mkdir', args: ['out'] }));
      ran(await exec({ cmd: 'tar', args: ['-xzf', 'a.tgz', '-C', 'out'] }));
      expect(fs.readFileSync(path.join(zone, 'out/dir/two.md'), 'utf8')).toBe('2\n');
    });
    it('tar czf / tar xzf (old style, no dash)', async () => {
      ran(await exec({ cmd: 'tar', args: ['czf', 'b.tgz', 'dir'] }));
      ran(await exec({ cmd: 'mkdir', args: ['out2'] }));
      ran(await exec({ cmd: 'tar', args: ['xzfC', 'b.tgz', 'out2'] }));
      expect(fs.readFileSync(path.join(zone, 'out2/dir/one.txt'), 'utf8')).toBe('1\n');
    });
    it('sort -o sorted.txt in.txt', async () => {
      ran(await exec({ cmd: 'sort', args: ['-o', 'sorted.txt', 'f.txt'] }));
      expect(fs.readFileSync(path.join(zone, 'sorted.txt'), 'utf8')).toBe('one\nthree\ntwo\n');
    });
    it('head -n -1, tail -n +2, wc -l, uniq -c, tr, paste -d', async () => {
      expect(ran(await exec({ cmd: 'head', args: ['-n', '-1', 'f.txt'] })).stdout).toBe('one\ntwo\n');
      expect(ran(await exec({ cmd: 'tail', args: ['-n', '+2', 'f.txt'] })).stdout).toBe('two\nthree\n');
      expect(ran(await exec({ cmd: 'wc', args: ['-l', 'f.txt'] })).stdout).toBe('3 f.txt\n');
      expect(ran(await exec({ cmd: 'paste', args: ['-d', ',', 'f.txt', 'f.txt'] })).stdout).toBe('one,one\ntwo,two\nthree,three\n');
    });
    it('cp, mv, mkdir -p, rm -r work in Storage', async () => {
      ran(await exec({ cmd: 'mkdir', args: ['-p', 'a/b'] }));
      ran(await exec({ cmd: 'cp', args: ['f.txt', 'a/b/g.txt'] }));
      ran(await exec({ cmd: 'mv', args: ['a/b/g.txt', 'a/h.txt'] }));
      expect(fs.readFileSync(path.join(zone, 'a/h.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
      ran(await exec({ cmd: 'rm', args: ['-r', 'a'] }));
      expect(fs.existsSync(path.join(zone, 'a'))).toBe(false);
    });
    it('zip and unzip round trip in Storage', async () => {
      ran(await exec({ cmd: 'zip', args: ['-qr', 'd.zip', 'dir'] }));
      ran(await exec({ cmd: 'unzip', args: ['-q', 'd.zip', '-d', 'unz'] }));
      expect(fs.readFileSync(path.join(zone, 'unz/dir/one.txt'), 'utf8')).toBe('1\n');
    });
    it('sqlite3 create, insert, select in Storage', async () => {
      const d = ran(await exec({ cmd: 'sqlite3', args: ['t.db', 'create table t(a)', 'insert into t values (1),(2)', 'select sum(a) from t'] }));
      expect(d.stdout).toBe('3\n');
    });
    it('date with a format, printf, expr, seq', async () => {
      expect(ran(await exec({ cmd: 'date', args: ['-u', '-d', '@86400', '+%Y-%m-%d'] })).stdout).toBe('1970-01-02\n');
      expect(ran(await exec({ cmd: 'printf', args: ['%05.1f|%s\\n', '3.14159', 'x<y>z'] })).stdout).toBe('003.1|x<y>z\n');
      expect(ran(await exec({ cmd: 'seq', args: ['-s', ',', '3'] })).stdout).toBe('1,2,3\n');
    });
  });
});
