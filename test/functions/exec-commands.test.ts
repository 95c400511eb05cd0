/**
 * Every installed whitelisted command runs its everyday form in every sandbox mode, helpers
 * included (tar's compressors through its shell, zcat and egrep scripts, yq's Python and jq, git's
 * own programs): under Landlock a program missing from a command's list of executables, or a system
 * file missing from the ruleset, shows here as a failure. Commands a mode refuses by policy (media and
 * other sandbox-only tools in validated mode, pwd and df where the zone's real path is visible) are
 * left out of that mode.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';
import { installed, MODES } from '../security/exec-harness.js';

/** True when `file` is a compiled program (not a script that starts another one). */
function isElf(file: string | undefined): boolean {
  if (file === undefined) return false;
  const head = Buffer.alloc(4);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, 4, 0);
  } finally {
    fs.closeSync(fd);
  }
  return head.toString('latin1') === '\x7fELF';
}

/** [cmd, args, expected stdout (exact string, or a pattern), expected exit code (0 by default)]. */
type Case = [cmd: string, args: string[], out?: string | RegExp, code?: number];

const CASES: Case[] = [
  ['cat', ['a.txt'], 'hello world\nfoo bar\n'],
  ['head', ['-n1', 'a.txt'], 'hello world\n'],
  ['tail', ['-n1', 'a.txt'], 'foo bar\n'],
  ['less', ['a.txt'], 'hello world\nfoo bar\n'],
  ['more', ['a.txt'], /hello world/],
  ['nl', ['a.txt'], /1\thello world/],
  ['wc', ['-l', 'a.txt'], '2 a.txt\n'],
  ['stat', ['-c', '%s', 'a.txt'], '20\n'],
  ['file', ['a.txt'], 'a.txt: ASCII text\n'],
  ['du', ['-s', 'a.txt'], /a\.txt/],
  ['tac', ['a.txt'], 'foo bar\nhello world\n'],
  ['ls', ['a.txt'], 'a.txt\n'],
  ['tree', ['-L', '1', 'sub'], /x\.txt/],
  ['find', ['sub', '-name', '*.txt'], 'sub/x.txt\n'],
  ['grep', ['hello', 'a.txt'], 'hello world\n'],
  ['egrep', ['h.llo', 'a.txt'], 'hello world\n'],
  ['fgrep', ['hello', 'a.txt'], 'hello world\n'],
  ['rg', ['--no-heading', 'hello', 'a.txt'], 'hello world\n'],
  ['awk', ['{print $1}', 'a.txt'], 'hello\nfoo\n'],
  ['gawk', ['{print $2}', 'a.txt'], 'world\nbar\n'],
  ['mawk', ['{print $2}', 'a.txt'], 'world\nbar\n'],
  ['sed', ['-n', '2p', 'a.txt'], 'foo bar\n'],
  ['sort', ['-r', 'a.txt'], 'hello world\nfoo bar\n'],
  ['uniq', ['a.txt'], 'hello world\nfoo bar\n'],
  ['cut', ['-c1-3', 'a.txt'], 'hel\nfoo\n'],
  ['paste', ['-d,', 'a.txt', 'b.txt'], 'hello world,x\nfoo bar,y\n'],
  ['fold', ['-w5', 'b.txt'], 'x\ny\n'],
  ['fmt', ['a.txt'], 'hello world foo bar\n'],
  ['column', ['-t', 'a.txt'], /hello\s+world/],
  ['rev', ['b.txt'], 'x\ny\n'],
  ['shuf', ['-n1', 'b.txt'], /^[xy]\n$/],
  ['expand', ['b.txt'], 'x\ny\n'],
  ['unexpand', ['b.txt'], 'x\ny\n'],
  ['pr', ['-t', 'b.txt'], 'x\ny\n'],
  ['join', ['b.txt', 'b.txt'], 'x\ny\n'],
  ['diff', ['a.txt', 'b.txt'], /< hello world/, 1],
  ['diff3', ['a.txt', 'a.txt', 'b.txt'], /====3/],
  ['sdiff', ['b.txt', 'b.txt'], /x\s+x/],
  ['cmp', ['a.txt', 'a.txt'], ''],
  ['comm', ['b.txt', 'b.txt'], '\t\tx\n\t\ty\n'],
  ['colordiff', ['a.txt', 'a.txt'], ''],
  ['tar', ['-czf', 'x.tgz', 'a.txt'], ''],
  ['tar', ['-tzf', 'x.tgz'], 'a.txt\n'],
  ['tar', ['-cjf', 'x.tbz', 'a.txt'], ''],
  ['tar', ['-tjf', 'x.tbz'], 'a.txt\n'],
  ['tar', ['-cJf', 'x.txz', 'a.txt'], ''],
  ['tar', ['-tJf', 'x.txz'], 'a.txt\n'],
  ['tar', ['--zstd', '-cf', 'x.tzst', 'a.txt'], ''],
  ['tar', ['--zstd', '-tf', 'x.tzst'], 'a.txt\n'],
  ['zip', ['-q', 'z.zip', 'a.txt'], ''],
  ['unzip', ['-Z1', 'z.zip'], 'a.txt\n'],
  ['zipinfo', ['-1', 'z.zip'], 'a.txt\n'],
  ['7z', ['l', 'z.zip'], /a\.txt/],
  ['7za', ['l', 'z.zip'], /a\.txt/],
  ['gzip', ['-k', 'a.txt'], ''],
  ['zcat', ['a.txt.gz'], 'hello world\nfoo bar\n'],
  ['gunzip', ['-c', 'a.txt.gz'], 'hello world\nfoo bar\n'],
  ['bzip2', ['-k', 'a.txt'], ''],
  ['bzcat', ['a.txt.bz2'], 'hello world\nfoo bar\n'],
  ['bunzip2', ['-c', 'a.txt.bz2'], 'hello world\nfoo bar\n'],
  ['xz', ['-k', 'a.txt'], ''],
  ['xzcat', ['a.txt.xz'], 'hello world\nfoo bar\n'],
  ['unxz', ['-c', 'a.txt.xz'], 'hello world\nfoo bar\n'],
  ['lz4', ['-q', '-f', 'a.txt', 'a.lz4'], ''],
  ['zstd', ['-q', '-f', 'a.txt'], ''],
  ['md5sum', ['b.txt'], /^[0-9a-f]{32} {2}b\.txt\n$/],
  ['sha1sum', ['b.txt'], /^[0-9a-f]{40} {2}b\.txt\n$/],
  ['sha256sum', ['b.txt'], /^[0-9a-f]{64} {2}b\.txt\n$/],
  ['sha512sum', ['b.txt'], /^[0-9a-f]{128} {2}b\.txt\n$/],
  ['b2sum', ['b.txt'], /^[0-9a-f]{128} {2}b\.txt\n$/],
  ['cksum', ['b.txt'], /b\.txt/],
  ['sum', ['b.txt'], /b\.txt|\d+/],
  ['base32', ['b.txt'], 'PAFHSCQ=\n'],
  ['base64', ['b.txt'], 'eAp5Cg==\n'],
  ['basenc', ['--base16', 'b.txt'], '780A790A\n'],
  ['strings', ['a.txt'], 'hello world\nfoo bar\n'],
  ['od', ['-An', '-c', 'b.txt'], /x\s+\\n\s+y/],
  ['hexdump', ['-C', 'b.txt'], /78 0a 79 0a/],
  ['xxd', ['-p', 'b.txt'], '780a790a\n'],
  ['jq', ['.a', 'j.json'], '1\n'],
  ['xmllint', ['--noout', 'x.xml'], ''],
  ['yq', ['.a', 'y.yaml'], '1\n'],
  ['iconv', ['-f', 'utf-8', '-t', 'ascii', 'b.txt'], 'x\ny\n'],
  ['bc', ['-q', 'c.bc'], '3\n'],
  ['dc', ['-e', '1 2 + p'], '3\n'],
  ['expr', ['1', '+', '2'], '3\n'],
  ['factor', ['12'], '12: 2 2 3\n'],
  ['numfmt', ['--to=iec', '2048'], '2.0K\n'],
  ['basename', ['a/b'], 'b\n'],
  ['dirname', ['a/b'], 'a\n'],
  ['realpath', ['--relative-to=.', 'sub/x.txt'], 'sub/x.txt\n'],
  ['echo', ['hi'], 'hi\n'],
  ['printf', ['%s-%s', 'a', 'b'], 'a-b'],
  ['sqlite3', ['d.db', 'select 41+1'], '42\n'],
  ['which', ['ls'], /\/ls\n$/],
  ['whereis', ['-b', 'ls'], /^ls: /],
  ['split', ['-l', '1', 'b.txt', 'part-'], ''],
  ['csplit', ['-s', 'a.txt', '2'], ''],
  ['patch', ['--dry-run', 'a.txt', 'p.diff'], /checking file a\.txt/],
  ['touch', ['t.txt'], ''],
  ['mkdir', ['-p', 'd/e'], ''],
  ['cp', ['a.txt', 'c.txt'], ''],
  ['mv', ['c.txt', 'd/c.txt'], ''],
  ['rm', ['t.txt'], ''],
  ['rmdir', ['d/e'], ''],
  ['truncate', ['-s', '10', 'tr.txt'], ''],
  ['mktemp', [], /tmp\.[A-Za-z0-9]+\n$/],
  ['mktemp', ['-p', '.'], /tmp\.[A-Za-z0-9]+\n$/],
  ['install', ['a.txt', 'inst.txt'], ''],
  ['shred', ['-u', 'inst.txt'], ''],
  ['dos2unix', ['-q', 'b.txt'], ''],
  ['unix2dos', ['-q', 'b2.txt'], ''],
  ['recode', ['utf8..latin1', 'r.txt'], ''],
  ['uuencode', ['b.txt', 'b.txt'], /^begin 644 b\.txt/],
  ['seq', ['3'], '1\n2\n3\n'],
  ['date', ['-u', '-d', '@0', '+%Y'], '1970\n'],
  ['cal', ['1', '2000'], /January 2000/],
  ['readlink', ['ln'], 'a.txt\n'],
  ['pathchk', ['a.txt'], ''],
  ['uname', ['-s'], 'Linux\n'],
  ['nproc', [], /^\d+\n$/],
  ['sleep', ['0'], ''],
  ['tee', ['tee.txt'], ''],
  ['gettext', ['hi'], 'hi'],
  ['tsort', ['ts.txt'], 'a\nb\n'],
  ['true', [], ''],
  ['false', [], '', 1],
  ['git', ['init', '-q', 'repo'], ''],
  ['pandoc', ['-t', 'plain', 'a.txt'], /hello world/],
  // ImageMagick reads PNG, JPEG, GIF and WebP only (its policy: src/core/services/exec/launcher/magick.ts).
  ['identify', ['img.png'], /PNG 1x1/],
  ['convert', ['img.png', 'img.jpg'], ''],
  ['magick', ['img.png', 'img2.jpg'], ''],
  ['ffprobe', ['-v', 'error', '-show_entries', 'format=format_name', 'img.ppm'], /format_name/],
  ['exiftool', ['-s', '-FileType', 'img.ppm'], /PPM/],
];

/** What a mode refuses by policy (not something this test checks). */
const REFUSED: Record<string, readonly string[]> = {
  validated: ['git', '7z', '7za', 'pandoc', 'ffprobe', 'identify', 'convert', 'magick', 'exiftool', 'colordiff'],
};

describe.each(MODES)('%s mode', (mode) => {
  let s: Shed;
  beforeAll(() => {
    s = makeShed({ sandbox: mode });
    const put = (rel: string, body: string | Buffer) => {
      fs.mkdirSync(path.dirname(s.zonePath('storage', rel)), { recursive: true });
      fs.writeFileSync(s.zonePath('storage', rel), body);
    };
    put('a.txt', 'hello world\nfoo bar\n');
    put('b.txt', 'x\ny\n');
    put('b2.txt', 'x\ny\n');
    put('r.txt', 'plain\n');
    put('sub/x.txt', 'x\n');
    put('j.json', '{"a":1}');
    put('y.yaml', 'a: 1\n');
    put('x.xml', '<a/>');
    put('c.bc', '1+2\nquit\n');
    put('ts.txt', 'a b\n');
    put('img.ppm', 'P3\n1 1\n255\n255 0 0\n');
    put('img.png', Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c49444154789c63f8cfc0000003010100c9fe92ef0000000049454e44ae426082', 'hex'));
    put('p.diff', '--- a.txt\n+++ a.txt\n@@ -1,2 +1,2 @@\n-hello world\n+hello there\n foo bar\n');
    fs.symlinkSync('a.txt', s.zonePath('storage', 'ln'));
  });
  afterAll(() => s.cleanup());

  // In order: later cases use what earlier ones made (x.tgz, a.txt.gz, z.zip...).
  it('runs every installed command', async () => {
    const failures: string[] = [];
    let ran = 0;
    for (const [cmd, args, out, code = 0] of CASES) {
      if (!installed(cmd) || (REFUSED[mode] ?? []).includes(cmd)) continue;
      // /usr/local/bin/convert on some test machines is a script around another program, not ImageMagick.
      if (cmd === 'convert' && !isElf(findProgram('convert'))) continue;
      const r = await s.call('shed_exec', { zone: 'storage', cmd, args });
      ran++;
      const d = r.data;
      const label = `${cmd} ${args.join(' ')}`;
      if (!r.success || d === undefined) failures.push(`${label}: ${r.error?.code} ${r.error?.message}`);
      else if (d.returncode !== code) failures.push(`${label}: exit ${d.returncode}: ${d.stderr}`);
      else if (out !== undefined && !(typeof out === 'string' ? d.stdout === out : out.test(d.stdout))) failures.push(`${label}: stdout ${JSON.stringify(d.stdout)}`);
      else if (/Permission denied|Cannot exec|Operation not permitted/.test(d.stderr)) failures.push(`${label}: ${d.stderr}`);
    }
    expect(failures).toEqual([]);
    expect(ran).toBeGreaterThan(100);
  }, 120_000);

  it('curl and wget download over the network when network_mode allows it (a name resolved through /etc/hosts)', async () => {
    const server = http.createServer((_req, res) => res.end('downloaded\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://localhost:${(server.address() as AddressInfo).port}/f.txt`;
    const net = makeShed({ sandbox: mode, network_mode: 'safe' });
    try {
      fs.mkdirSync(net.zonePath('storage'), { recursive: true });
      for (const [cmd, args, file] of [['curl', ['-s', '-o', 'c.txt', url], 'c.txt'], ['wget', ['-q', '-O', 'w.txt', url], 'w.txt']] as const) {
        if (!installed(cmd)) continue;
        const r = await net.call('shed_exec', { zone: 'storage', cmd, args: [...args] });
        expect(r.data?.returncode, `${cmd}: ${JSON.stringify(r.error ?? r.data?.stderr)}`).toBe(0);
        expect(fs.readFileSync(net.zonePath('storage', file), 'utf8')).toBe('downloaded\n');
      }
    } finally {
      server.close();
      net.cleanup();
    }
  });

  it.runIf(installed('git') && mode !== 'validated')('git init, add, commit, log and status (git runs its own programs)', async () => {
    const git = async (...args: string[]) => s.call('shed_exec', { zone: 'storage', cmd: 'git', args });
    expect((await git('init', '-q')).data?.returncode).toBe(0);
    fs.appendFileSync(s.zonePath('storage', '.git/config'), '[user]\n\tname = T\n\temail = t@example.com\n');
    expect((await git('add', 'a.txt')).data?.returncode).toBe(0);
    const commit = await git('commit', '-q', '-m', 'first');
    expect(commit.data?.returncode, commit.data?.stderr).toBe(0);
    expect((await git('log', '--format=%s')).data?.stdout).toBe('first\n');
    expect((await git('status', '--porcelain', 'a.txt')).data?.stdout).toBe('');
  });
});
