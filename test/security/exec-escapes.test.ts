/**
 * The six escapes verified against the Python original (reference section 11), with their
 * variants, in both sandbox modes: sed e/w/W/r/R, awk pipes/system/getline/redirection/ENVIRON,
 * grep -r outside, sort -o outside (attached, long, separate), lockedit_exec, and
 * stdout_file/stderr_file outside the zone (absolute, ../, through a link).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectOk, expectRefused, makeArena, MODES, type Arena } from './exec-harness.js';

type Case = [string, (a: Arena) => { cmd: string; args: string[] }];

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  let O: string; // the outside folder
  beforeEach(() => {
    a = makeArena(mode);
    O = a.outside;
    a.put('f.txt', 'hello world\nsecond line\n');
    a.put('prog.sed', `1e touch ${'OUT'}/pwn-sed-file\n`.replace('OUT', a.outside));
    a.put('prog.awk', `BEGIN { system("touch ${a.outside}/pwn-awk-file") }\n`);
  });
  afterEach(() => a.finish());

  describe('1. sed commands that run programs or touch other files', () => {
    const cases: Case[] = [
      ['1e cmd', () => ({ cmd: 'sed', args: [`1e touch ${O}/pwn`, 'f.txt'] })],
      ['e alone', () => ({ cmd: 'sed', args: ['e', 'f.txt'] })],
      ['s///e', () => ({ cmd: 'sed', args: [`s/hello.*/touch ${O.replace(/\//g, '\\/')}\\/pwn/e`, 'f.txt'] })],
      ['s///e with other flags', () => ({ cmd: 'sed', args: ['s/x/y/ge', 'f.txt'] })],
      ['s///w /abs', () => ({ cmd: 'sed', args: [`s/hello/bye/w ${O}/w.txt`, 'f.txt'] })],
      ['1w /abs', () => ({ cmd: 'sed', args: [`1w ${O}/w.txt`, 'f.txt'] })],
      ['/re/w file', () => ({ cmd: 'sed', args: ['/hello/w copy.txt', 'f.txt'] })],
      ['W /abs', () => ({ cmd: 'sed', args: [`W ${O}/w.txt`, 'f.txt'] })],
      ['r /etc/passwd', () => ({ cmd: 'sed', args: ['1r /etc/passwd', 'f.txt'] })],
      ['r canary', () => ({ cmd: 'sed', args: [`1r ${O}/secret.txt`, 'f.txt'] })],
      ['R canary', () => ({ cmd: 'sed', args: [`R ${O}/secret.txt`, 'f.txt'] })],
      ['command after a label (GNU ends labels at whitespace)', () => ({ cmd: 'sed', args: [`:x 1e touch ${O}/pwn`, 'f.txt'] })],
      ['e after a branch label', () => ({ cmd: 'sed', args: [`b end;1e touch ${O}/pwn\n:end`, 'f.txt'] })],
      ['delimiter inside a bracket ([/]) hiding the e flag', () => ({ cmd: 'sed', args: [`s/[/]/touch ${O.replace(/\//g, '\\/')}\\/pwn/e`, 'f.txt'] })],
      ['e inside braces', () => ({ cmd: 'sed', args: [`1{e touch ${O}/pwn\n}`, 'f.txt'] })],
      ['-e with a second -e hidden in a cluster (-ne)', () => ({ cmd: 'sed', args: ['-n', '-e', 'p', '-ne', `1e touch ${O}/pwn`, 'f.txt'] })],
      ['--expression=', () => ({ cmd: 'sed', args: [`--expression=1e touch ${O}/pwn`, 'f.txt'] })],
      ['--expr= (abbreviated long option)', () => ({ cmd: 'sed', args: [`--expr=1e touch ${O}/pwn`, 'f.txt'] })],
      ['-e attached', () => ({ cmd: 'sed', args: [`-e1e touch ${O}/pwn`, 'f.txt'] })],
      ['two -e joined into one program', () => ({ cmd: 'sed', args: ['-e', 'p', '-e', `1e touch ${O}/pwn`, 'f.txt'] })],
      ['-f script file', () => ({ cmd: 'sed', args: ['-f', 'prog.sed', 'f.txt'] })],
      ['--file=script', () => ({ cmd: 'sed', args: ['--file=prog.sed', 'f.txt'] })],
      ['-i on the outside canary', () => ({ cmd: 'sed', args: ['-i', 's/K/X/', `${O}/secret.txt`] })],
      ['-i backup suffix naming an absolute folder', () => ({ cmd: 'sed', args: [`-i${O}/*`, 's/h/H/', 'f.txt'] })],
      ['-i backup suffix climbing out', () => ({ cmd: 'sed', args: ['--in-place=../../*', 's/h/H/', 'f.txt'] })],
      ['reading the canary as input', () => ({ cmd: 'sed', args: ['-n', 'p', `${O}/secret.txt`] })],
      ['reading the canary through ../', () => ({ cmd: 'sed', args: ['-n', 'p', path.relative(a.zone, path.join(O, 'secret.txt'))] })],
    ];
    it.each(cases)('sed %s', async (_name, make) => {
      expectRefused(await a.exec({ zone: 'storage', ...make(a) }));
      expect(fs.existsSync(path.join(a.zone, 'copy.txt'))).toBe(false);
    });
  });

  describe('2. awk pipes, system(), getline, redirection, ENVIRON', () => {
    const cases: Case[] = [
      ['print | "cmd"', () => ({ cmd: 'awk', args: [`BEGIN { print "x" | "touch ${O}/pwn" }`] })],
      ['printf | "cmd"', () => ({ cmd: 'awk', args: [`{ printf "%s", $0 | "cat > ${O}/w" }`, 'f.txt'] })],
      ['|& coprocess', () => ({ cmd: 'awk', args: [`BEGIN { print "x" |& "touch ${O}/pwn" }`] })],
      ['system()', () => ({ cmd: 'awk', args: [`BEGIN { system("touch ${O}/pwn") }`] })],
      ['system () with a space', () => ({ cmd: 'awk', args: [`BEGIN { system ("touch ${O}/pwn") }`] })],
      ['getline < file', () => ({ cmd: 'awk', args: [`BEGIN { while ((getline l < "${O}/secret.txt") > 0) print l }`] })],
      ['"cmd" | getline', () => ({ cmd: 'awk', args: [`BEGIN { "cat ${O}/secret.txt" | getline x; print x }`] })],
      ['print > "/abs"', () => ({ cmd: 'awk', args: [`{ print > "${O}/w.txt" }`, 'f.txt'] })],
      ['print >> "/abs"', () => ({ cmd: 'awk', args: [`{ print $0 >> "${O}/w.txt" }`, 'f.txt'] })],
      ['printf(...) > "/abs"', () => ({ cmd: 'awk', args: [`{ printf("%s\\n", $1) > "${O}/w.txt" }`, 'f.txt'] })],
      ['print > relative file', () => ({ cmd: 'awk', args: ['{ print > "copy.txt" }', 'f.txt'] })],
      ['ENVIRON', () => ({ cmd: 'awk', args: ['BEGIN { for (k in ENVIRON) print k, ENVIRON[k] }'] })],
      ['PROCINFO', () => ({ cmd: 'awk', args: ['BEGIN { print PROCINFO["pid"] }'] })],
      ['ARGV rewritten to read another file', () => ({ cmd: 'awk', args: [`BEGIN { ARGV[1] = "${O}/secret.txt"; ARGC = 2 } { print }`] })],
      ['a quote inside a regex hiding system()', () => ({ cmd: 'awk', args: [`/"/ { x = 1 } BEGIN { system("touch ${O}/pwn") } /"/`, 'f.txt'] })],
      ['division after x++ taken for a regex', () => ({ cmd: 'awk', args: [`{ x++ / 2; system("touch ${O}/pwn"); y = 1 / 2 }`, 'f.txt'] })],
      ['a comment holding a quote', () => ({ cmd: 'awk', args: [`# "\nBEGIN { system("touch ${O}/pwn") } # "`] })],
      ['gawk indirect call of a builtin', () => ({ cmd: 'awk', args: [`BEGIN { f = "system"; @f("touch ${O}/pwn") }`] })],
      ['@load', () => ({ cmd: 'awk', args: ['@load "filefuncs"\nBEGIN { }'] })],
      ['-f program file', () => ({ cmd: 'awk', args: ['-f', 'prog.awk'] })],
      ['mawk -W exec program file', () => ({ cmd: 'awk', args: ['-W', 'exec', 'prog.awk'] })],
      ['--exec=', () => ({ cmd: 'awk', args: ['--exec=prog.awk'] })],
      ['-e second program (gawk)', () => ({ cmd: 'awk', args: ['-e', 'BEGIN { x = 1 }', '-e', `BEGIN { system("touch ${O}/pwn") }`] })],
      ['reading the canary as input', () => ({ cmd: 'awk', args: ['{ print }', `${O}/secret.txt`] })],
      ['reading another user through ../', () => ({ cmd: 'awk', args: ['{ print }', '../../../bob/Storage/data/bob-secret.txt'] })],
    ];
    it.each(cases)('awk %s', async (_name, make) => {
      expectRefused(await a.exec({ zone: 'storage', ...make(a) }));
      expect(fs.existsSync(path.join(a.zone, 'copy.txt'))).toBe(false);
    });
  });

  describe('3. grep reading outside the zone', () => {
    const cases: Case[] = [
      ['-r PAT /outside/ (trailing slash)', () => ({ cmd: 'grep', args: ['-r', 'KANARIE', `${O}/`] })],
      ['-r PAT /outside', () => ({ cmd: 'grep', args: ['-r', 'KANARIE', O] })],
      ['-r PAT /', () => ({ cmd: 'grep', args: ['-r', 'KANARIE', '/'] })],
      ['-r PAT ../', () => ({ cmd: 'grep', args: ['-r', 'KANARIE', '../'] })],
      ['-r PAT ../..', () => ({ cmd: 'grep', args: ['-r', 'KANARIE', '../..'] })],
      ['-rl PAT ../../../', () => ({ cmd: 'grep', args: ['-rl', 'KANARIE', '../../../'] })],
      ['PAT relative path to the canary', () => ({ cmd: 'grep', args: ['KANARIE', path.relative(a.zone, path.join(O, 'secret.txt'))] })],
      ['--color PAT /abs (optional-value option)', () => ({ cmd: 'grep', args: ['--color', 'KANARIE', `${O}/secret.txt`] })],
      ['-e PAT -- /abs', () => ({ cmd: 'grep', args: ['-e', 'KANARIE', '--', `${O}/secret.txt`] })],
      ['-f /abs (patterns from the canary)', () => ({ cmd: 'grep', args: ['-f', `${O}/secret.txt`, 'f.txt'] })],
      ['--file=/abs', () => ({ cmd: 'grep', args: [`--file=${O}/secret.txt`, 'f.txt'] })],
      ['--exclude-from /abs', () => ({ cmd: 'grep', args: ['--exclude-from', `${O}/secret.txt`, 'x', 'f.txt'] })],
      ['-r PAT /abs/dir/', () => ({ cmd: 'grep', args: ['-r', 'KANARIE', `${O}/dir/`] })],
      ['other conversation uploads', () => ({ cmd: 'grep', args: ['-r', 'KANARIE', '../../Uploads/c2'] })],
    ];
    it.each(cases)('grep %s', async (_name, make) => {
      expectRefused(await a.exec({ zone: 'storage', ...make(a) }));
    });

    it('grep -r in the zone itself works and finds nothing outside', async () => {
      const d = expectOk(await a.exec({ zone: 'storage', cmd: 'grep', args: ['-r', 'hello', '.'] }));
      expect(d.stdout).toContain('f.txt:hello world');
    });
  });

  describe('4. sort -o outside the zone', () => {
    const cases: Case[] = [
      ['-o/abs (attached)', () => ({ cmd: 'sort', args: [`-o${O}/w.txt`, 'f.txt'] })],
      ['-o /abs', () => ({ cmd: 'sort', args: ['-o', `${O}/w.txt`, 'f.txt'] })],
      ['--output=/abs', () => ({ cmd: 'sort', args: [`--output=${O}/w.txt`, 'f.txt'] })],
      ['--output /abs', () => ({ cmd: 'sort', args: ['--output', `${O}/w.txt`, 'f.txt'] })],
      ['--out=/abs (abbreviated)', () => ({ cmd: 'sort', args: [`--out=${O}/w.txt`, 'f.txt'] })],
      ['-ro/abs (in a cluster)', () => ({ cmd: 'sort', args: [`-ro${O}/w.txt`, 'f.txt'] })],
      ['-o ../x', () => ({ cmd: 'sort', args: ['-o', '../w.txt', 'f.txt'] })],
      ['-o../x', () => ({ cmd: 'sort', args: ['-o../w.txt', 'f.txt'] })],
      ['--output=../../x', () => ({ cmd: 'sort', args: ['--output=../../w.txt', 'f.txt'] })],
      ['-T /abs (temporary files)', () => ({ cmd: 'sort', args: ['-T', O, 'f.txt'] })],
      ['--temporary-directory=/abs', () => ({ cmd: 'sort', args: [`--temporary-directory=${O}`, 'f.txt'] })],
      ['--compress-program=sh', () => ({ cmd: 'sort', args: ['--compress-program=sh', 'f.txt'] })],
      ['--compress-prog (abbreviated)', () => ({ cmd: 'sort', args: ['--compress-prog', 'sh', 'f.txt'] })],
      ['--random-source=/abs', () => ({ cmd: 'sort', args: ['-R', `--random-source=${O}/secret.txt`, 'f.txt'] })],
      ['reading the canary', () => ({ cmd: 'sort', args: [`${O}/secret.txt`] })],
      ['-o onto the canary', () => ({ cmd: 'sort', args: ['-o', `${O}/secret.txt`, 'f.txt'] })],
    ];
    it.each(cases)('sort %s', async (_name, make) => {
      expectRefused(await a.exec({ zone: 'storage', ...make(a) }));
    });
  });

  describe('5. lockedit_exec', () => {
    it.skip('lockedit_exec runs the same executor and policy', () => {});
  });

  describe('6. stdout_file / stderr_file outside the zone', () => {
    it('an absolute stdout_file is a path inside the zone (the leading / is stripped)', async () => {
      const d = expectOk(await a.exec({ zone: 'storage', cmd: 'cat', args: ['f.txt'], stdout_file: `${O}/w.txt` }));
      const inside = path.join(a.zone, O.slice(1), 'w.txt');
      expect(fs.readFileSync(inside, 'utf8')).toBe('hello world\nsecond line\n');
      expect(d.stdout_file).toBe(path.join(O.slice(1), 'w.txt'));
      expect(fs.existsSync(path.join(O, 'w.txt'))).toBe(false);
    });

    it('an absolute stderr_file is a path inside the zone', async () => {
      expectOk(await a.exec({ zone: 'storage', cmd: 'cat', args: ['missing.txt'], stderr_file: `${O}/e.txt` }));
      expect(fs.readFileSync(path.join(a.zone, O.slice(1), 'e.txt'), 'utf8')).toContain('missing.txt');
    });

    it.each([['../w.txt'], ['../../w.txt'], ['a/../../w.txt'], ['../../../bob/Storage/data/w.txt'], ['../../Uploads/c2/w.txt']])('stdout_file %s → PATH_ESCAPE', async (p) => {
      const r = await a.exec({ zone: 'storage', cmd: 'cat', args: ['f.txt'], stdout_file: p });
      expectRefused(r, 'PATH_ESCAPE');
      expect(r.error?.message).toContain('stdout_file');
    });

    it.each([['../e.txt'], ['../../../../e.txt']])('stderr_file %s → PATH_ESCAPE', async (p) => {
      const r = await a.exec({ zone: 'storage', cmd: 'cat', args: ['nothing'], stderr_file: p });
      expectRefused(r, 'PATH_ESCAPE');
      expect(r.error?.message).toContain('stderr_file');
    });

    it('the original gap: a grep stdout_file that "looks like an expression" (/abs with a space and a colon) stays inside', async () => {
      const target = `${O}/a b:c.txt`;
      const r = await a.exec({ zone: 'storage', cmd: 'grep', args: ['hello', 'f.txt'], stdout_file: target });
      expectOk(r);
      expect(fs.existsSync(target)).toBe(false);
      expect(fs.readFileSync(path.join(a.zone, target.slice(1)), 'utf8')).toBe('hello world\n');
    });

    it('stdout_file that is a link to a file outside: refused, the outside file untouched', async () => {
      fs.symlinkSync(path.join(O, 'secret.txt'), path.join(a.zone, 'out.txt'));
      const r = await a.exec({ zone: 'storage', cmd: 'echo', args: ['PWNED'], stdout_file: 'out.txt' });
      expectRefused(r, ['PATH_ESCAPE', 'ARGUMENT_FORBIDDEN', 'INVALID_PATH']); // the arena checks the canary is unchanged and unread
    });

    it('stdout_file that is a link to a missing file outside: nothing created outside', async () => {
      fs.symlinkSync(path.join(O, 'new.txt'), path.join(a.zone, 'dangling.txt'));
      const r = await a.exec({ zone: 'storage', cmd: 'echo', args: ['PWNED'], stdout_file: 'dangling.txt' });
      expect(r.success).toBe(false);
      expect(fs.existsSync(path.join(O, 'new.txt'))).toBe(false);
    });

    it('stderr_file inside a linked folder that leads outside: refused', async () => {
      fs.symlinkSync(O, path.join(a.zone, 'outdir'));
      const r = await a.exec({ zone: 'storage', cmd: 'cat', args: ['nope'], stderr_file: 'outdir/e.txt' });
      expectRefused(r, 'PATH_ESCAPE');
      const r2 = await a.exec({ zone: 'storage', cmd: 'cat', args: ['f.txt'], stdout_file: 'outdir/o.txt' });
      expectRefused(r2, 'PATH_ESCAPE');
      fs.unlinkSync(path.join(a.zone, 'outdir'));
    });

    it('stdout_file in Uploads → ZONE_READONLY', async () => {
      a.put(path.join(a.uploads, 'u.txt'), 'upload\n');
      const r = await a.exec({ zone: 'uploads', cmd: 'cat', args: ['u.txt'], stdout_file: 'copy.txt' });
      expectRefused(r, 'ZONE_READONLY');
      expect(fs.existsSync(path.join(a.uploads, 'copy.txt'))).toBe(false);
    });
  });
});
