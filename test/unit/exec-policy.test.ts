/**
 * checkCommand (src/core/services/exec/policy/policy.ts) table-driven, on a real temporary zone (paths are checked
 * against the disk: links leading out are refused). Covers the whitelists, option parsing the way
 * getopt does it (clusters, attached values, abbreviations, --, old-style tar), per-command rules,
 * per-mode rules (sandbox-only commands, link-following options), network rules and the argv.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShedError } from '../../src/core/base/errors.js';
import { checkCommand, type NetworkMode, type Policy, type SandboxMode } from '../../src/core/services/exec/policy/policy.js';
import { RULES } from '../../src/core/services/exec/policy/rules.js';
import { READONLY_COMMANDS, READWRITE_COMMANDS } from '../../src/core/services/exec/policy/commands.js';
import type { Zone } from '../../src/core/base/zones/zones.js';

let base: string;
let zone: Zone;
let uploads: Zone;
beforeAll(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-policy-')));
  const root = path.join(base, 'zone');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  fs.mkdirSync(path.join(base, 'outside'));
  fs.writeFileSync(path.join(root, 'f.txt'), 'x');
  fs.symlinkSync(path.join(base, 'outside'), path.join(root, 'out-link'));
  fs.symlinkSync('../../outside/gone.txt', path.join(root, 'sub', 'dangling-out'));
  fs.symlinkSync('f.txt', path.join(root, 'in-link'));
  fs.symlinkSync('loop2', path.join(root, 'loop1'));
  fs.symlinkSync('loop1', path.join(root, 'loop2'));
  const scope = { key: 'test', limitBytes: 1e9, trees: {} };
  zone = { name: 'storage', label: 'Storage', root, workBase: undefined, versioned: false, readonly: false, scope };
  uploads = { ...zone, name: 'uploads', label: 'Uploads', readonly: true };
});
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

interface Opts {
  readonly?: boolean;
  network?: NetworkMode;
  sandbox?: SandboxMode;
}
const check = (cmd: string, args: string[], o: Opts = {}): Policy =>
  checkCommand({ cmd, args, zone: o.readonly ? uploads : zone, readonly: o.readonly ?? false, network: o.network ?? 'disabled', sandbox: o.sandbox ?? 'validated' });

function refusal(cmd: string, args: string[], o: Opts = {}): ShedError {
  try {
    check(cmd, args, o);
  } catch (err) {
    expect(err).toBeInstanceOf(ShedError);
    return err as ShedError;
  }
  throw new Error(`${cmd} ${JSON.stringify(args)} was accepted`);
}

describe('commands', () => {
  it.each(['bash', 'sh', 'python3', 'perl', 'node', 'env', 'xargs', 'timeout', 'busybox', 'sudo', 'chmod', 'ln', 'rename', 'dd', 'kill', 'vim', 'ed'])('%s is blacklisted', (cmd) => {
    const e = refusal(cmd, []);
    expect(e.code).toBe('COMMAND_FORBIDDEN');
    expect(e.message).toContain('forbidden');
  });

  it.each(['/bin/sh', './x', 'ls -la', '', 'a;b', '../ls', 'ls\n'])('cmd %j is not a program name', (cmd) => {
    expect(refusal(cmd, []).code).toBe('COMMAND_FORBIDDEN');
  });

  it('the read-only list is a subset of the read-write list; writers are not in it', () => {
    for (const cmd of READONLY_COMMANDS) expect(READWRITE_COMMANDS.has(cmd), cmd).toBe(true);
    for (const cmd of ['rm', 'mv', 'cp', 'touch', 'mkdir', 'tee', 'zip', 'gzip', 'split', 'truncate', 'shred', 'git', 'patch']) expect(READONLY_COMMANDS.has(cmd), cmd).toBe(false);
    expect(READWRITE_COMMANDS.has('chmod')).toBe(false);
  });

  it('a writer in Uploads → COMMAND_FORBIDDEN that says the zone is read-only and how to proceed', () => {
    const e = refusal('rm', ['f.txt'], { readonly: true });
    expect(e.code).toBe('COMMAND_FORBIDDEN');
    expect(e.message).toMatch(/read-only/);
    expect(e.hint).toContain('shed_move_uploads_to_storage');
  });

  it('every rule belongs to a whitelisted or downloader command (no dead rules)', () => {
    for (const cmd of Object.keys(RULES)) expect(READWRITE_COMMANDS.has(cmd) || cmd === 'curl' || cmd === 'wget', cmd).toBe(true);
  });
});

describe('paths', () => {
  it.each([
    ['/etc/passwd', /absolute/],
    ['/', /absolute/],
    ['..', /climbs/],
    ['../zone/f.txt', /climbs/], // out and back in
    ['sub/../../x', /climbs/],
    ['a/b/../../../x', /climbs/],
    ['out-link', /symbolic link/],
    ['out-link/x.txt', /symbolic link/],
    ['sub/dangling-out', /symbolic link/],
    ['loop1', /loop/],
  ])('cat %j → PATH_ESCAPE (%s)', (p, why) => {
    const e = refusal('cat', [p]);
    expect(e.code).toBe('PATH_ESCAPE');
    expect(e.message).toMatch(why);
    expect(e.details?.parameter).toBe('args');
  });

  it('in a versioned zone a .git folder is the user\'s data (the history is not in the zone): no argument text guards it', () => {
    const documents: Zone = { ...zone, name: 'documents', label: 'Documents', versioned: true };
    for (const [cmd, args] of [['rm', ['-rf', '.git']], ['cat', ['.git/HEAD']], ['sed', ['-i', 's/a/b/', './.git/config']], ['rm', ['sub/../.git']], ['cp', ['--target-directory=.git/hooks', 'f.txt']], ['tar', ['-xf', 'a.tar', '-C.git']]] as [string, string[]][]) {
      expect(() => checkCommand({ cmd, args, zone: documents, readonly: false, network: 'disabled', sandbox: 'validated' }), args.join(' ')).not.toThrow();
    }
    // What is still refused is what leaves the zone: the history beside it included.
    for (const args of [['../git/HEAD'], ['sub/../../git/config']]) {
      expect(() => checkCommand({ cmd: 'cat', args, zone: documents, readonly: false, network: 'disabled', sandbox: 'validated' }), args.join(' ')).toThrow(/climbs above the zone root/);
    }
  });

  it.each(['f.txt', 'in-link', 'sub/../f.txt', './f.txt', 'missing/new.txt', '~', '-', 'a..b', '...'])('cat %j is allowed', (p) => {
    expect(check('cat', [p]).argv).toEqual([p]);
  });
});

describe('options, the way getopt reads them', () => {
  const escapes: [string, string[]][] = [
    ['sort', ['-o/etc/x', 'f.txt']],
    ['sort', ['-ro/etc/x', 'f.txt']],
    ['sort', ['--output=/etc/x', 'f.txt']],
    ['sort', ['--out=/etc/x', 'f.txt']],
    ['sort', ['--output', '/etc/x', 'f.txt']],
    ['cp', ['-rt/etc', 'f.txt']],
    ['cp', ['-t', '..', 'f.txt']],
    ['tar', ['-cf/etc/x.tar', 'f.txt']],
    ['tar', ['-xC/etc', '-f', 'a.tar']],
    ['tar', ['cfC', 'a.tar', '/etc', 'f.txt']],
    ['unzip', ['-d..', 'a.zip']],
    ['grep', ['--color', 'x', '/etc/passwd']],
    ['grep', ['-f', '/etc/passwd', 'f.txt']],
    ['grep', ['-e', 'x', '--', '/etc/passwd']],
    ['jq', ['-R', '--tab', '.', '/etc/passwd']],
    ['column', ['-t', '/etc/passwd']],
    ['zip', ['-z', '/tmp/x.zip', 'f.txt']],
    ['zip', ['-b', '/tmp', 'x.zip', 'f.txt']],
    ['date', ['-f', '/etc/passwd']],
    ['date', ['--file=../x']],
    ['csplit', ['/etc/passwd', '1']],
    ['csplit', ['-f', '/tmp/xx', 'f.txt', '1']],
    ['shuf', ['-e', '--output=/tmp/x', 'a']],
    ['sqlite3', ['-separator', ',', '/tmp/x.db', 'select 1']],
    ['sqlite3', ['--separator', ',', '/tmp/x.db']],
    ['sqlite3', ['file:/etc/x?mode=ro', 'select 1']],
  ];
  it.each(escapes)('%s %j → PATH_ESCAPE', (cmd, args) => {
    expect(refusal(cmd, args).code).toBe('PATH_ESCAPE');
  });

  it('tar old style becomes ordinary options (so the fixed prefix cannot break it), value letters take the next arguments', () => {
    expect(check('tar', ['czf', 'a.tgz', 'dir']).argv).toEqual(['--force-local', '--no-same-owner', '--no-same-permissions', '-c', '-z', '-f', 'a.tgz', 'dir']);
    expect(check('tar', ['xfC', 'a.tar', 'sub']).argv.slice(3)).toEqual(['-x', '-f', 'a.tar', '-C', 'sub']);
    expect(check('tar', ['-xzf', 'a.tgz']).argv.slice(3)).toEqual(['-xzf', 'a.tgz']);
  });

  it('options as the user wrote them are reported (clusters one letter at a time, long names as typed)', () => {
    expect(check('sort', ['-rn', '--out=o.txt', 'f.txt']).options).toEqual(['-r', '-n', '--out']);
    expect(check('curl', ['-sLo', 'x', 'https://example.com'], { network: 'safe' }).options).toEqual(['-s', '-L', '-o']);
  });

  it('-- ends the options: what follows is checked as positionals', () => {
    expect(check('grep', ['-e', 'x', '--', '-o/etc']).argv).toEqual(['-e', 'x', '--', '-o/etc']); // a file named "-o/etc" inside the zone
    expect(refusal('grep', ['x', '--', '/etc/passwd']).code).toBe('PATH_ESCAPE');
  });

  it('text values are not paths: cut -d /, find -name /x, head -n -1, date -d, awk -F/', () => {
    expect(check('cut', ['-d', '/', '-f', '2', 'f.txt']).argv).toHaveLength(5);
    expect(check('cut', ['-d/', '-f2', 'f.txt']).argv).toHaveLength(3);
    expect(check('find', ['.', '-path', '/x/*', '-printf', '/%p\\n']).argv).toHaveLength(5);
    expect(check('head', ['-n', '-1', 'f.txt']).argv).toHaveLength(3);
    expect(check('date', ['-d', '/', '+%s']).argv).toHaveLength(3);
    expect(check('awk', ['-F/', '{ print $2 }', 'f.txt']).argv).toHaveLength(3);
    expect(check('jq', ['--arg', 'p', '/etc/passwd', '$p', 'f.txt']).argv).toHaveLength(5);
  });

  it('the first positional of grep/sed/awk/jq is program text, the rest are paths; -e/-f move the program out', () => {
    expect(check('grep', ['/etc/passwd', 'f.txt']).argv).toHaveLength(2); // a pattern
    expect(refusal('grep', ['-e', 'x', '/etc/passwd']).code).toBe('PATH_ESCAPE');
    expect(refusal('sed', ['-e', 'p', '/etc/passwd']).code).toBe('PATH_ESCAPE');
    expect(refusal('awk', ['-e', '{print}', '/etc/passwd']).code).toBe('PATH_ESCAPE');
  });
});

describe('per-command rules', () => {
  const forbidden: [string, string[], Opts?][] = [
    ['find', ['.', '-exec', 'id', ';']],
    ['find', ['.', '-fprint', 'x']],
    ['tar', ['--to-command=sh', '-xf', 'a.tar']],
    ['tar', ['--to-c', 'sh', '-xf', 'a.tar']],
    ['tar', ['-Pxf', 'a.tar']],
    ['tar', ['xPf', 'a.tar']],
    ['tar', ['-I', 'sh', '-xf', 'a.tar']],
    ['tar', ['--checkpoint-action=exec=id', '-cf', 'x.tar', '.']],
    ['sort', ['--compress-program=sh', 'f.txt']],
    ['split', ['--filter=sh', 'f.txt']],
    ['rg', ['--pre', 'sh', 'x']],
    ['zip', ['-TT', 'sh', 'x.zip', 'f.txt']],
    ['zip', ['-T', 'x.zip', 'f.txt']],
    ['git', ['clone', '-c', 'core.fsmonitor=sh', 'https://example.com/r'], { sandbox: 'bwrap', network: 'safe' }],
    ['git', ['clone', '--upload-pack=sh', 'x', 'y'], { sandbox: 'bwrap', network: 'safe' }],
    ['git', ['diff', '--ext-diff'], { sandbox: 'bwrap' }],
    ['pandoc', ['--lua-filter', 'x.lua', 'f.txt'], { sandbox: 'bwrap' }],
    ['sed', ['-f', 'x.sed', 'f.txt']],
    ['sed', ['--file=x.sed', 'f.txt']],
    ['awk', ['-f', 'x.awk']],
    ['awk', ['-W', 'exec', 'x.awk']],
    ['awk', ['-Wexec', 'x.awk']],
    ['sqlite3', ['-cmd', '.shell id', 'db']],
    ['sqlite3', ['--init', 'x', 'db']],
    ['sqlite3', ['db', '.shell id']],
    ['dc', ['-e', '!id']],
    ['dc', ['prog.dc']],
    ['jq', ['import "a" as b; .']],
    ['jq', ['-L', 'lib', '.']],
    ['cp', ['-s', 'f.txt', 'l']],
    ['cp', ['-as', 'f.txt', 'l']],
    ['cp', ['--symbolic', 'f.txt', 'l']],
    ['unzip', ['-:', 'a.zip']],
    ['unzip', ['-o:', 'a.zip']],
    ['xmllint', ['--noent', 'f.xml']],
    ['diff3', ['--diff-program=sh', 'a', 'b', 'c']],
    ['uudecode', ['f.uu']],
    ['install', ['-m', '755', 'f.txt', 'x']],
    ['less', ['-ofile', 'f.txt']],
    ['date', ['-s', '2020-01-01']],
  ];
  it.each(forbidden)('%s %j → ARGUMENT_FORBIDDEN', (cmd, args, o) => {
    const e = refusal(cmd, args, o);
    expect(e.code).toBe('ARGUMENT_FORBIDDEN');
    expect(e.hint).toBeTruthy();
    expect(e.details?.parameter).toBe('args');
  });

  it('fixed prefixes: tar never runs rsh or keeps owners; sqlite3 is safe and skips ~/.sqliterc; downloaders skip their rc files; xmllint stays offline', () => {
    expect(check('tar', ['-tf', 'a.tar']).argv.slice(0, 3)).toEqual(['--force-local', '--no-same-owner', '--no-same-permissions']);
    expect(check('sqlite3', ['db', 'select 1']).argv).toEqual(['-safe', '-init', '/dev/null', 'db', 'select 1']);
    expect(check('sqlite3', ['db', 'select 1'], { readonly: true }).argv).toEqual(['-safe', '-init', '/dev/null', '-readonly', 'db', 'select 1']);
    expect(check('curl', ['-o', 'x', 'https://example.com'], { network: 'safe' }).argv[0]).toBe('-q');
    expect(check('wget', ['-O', 'x', 'https://example.com'], { network: 'safe' }).argv[0]).toBe('--no-config');
    expect(check('xmllint', ['--xpath', '//a', 'f.xml']).argv[0]).toBe('--nonet');
  });

  it('read-only zones: writes hidden in clusters, abbreviations and old-style tar are refused', () => {
    for (const [cmd, args] of [
      ['sed', ['-ni', 'p', 'f.txt']],
      ['sed', ['--in-pl', 'p', 'f.txt']],
      ['sort', ['-rof.txt', 'f.txt']],
      ['tar', ['xf', 'a.tar']],
      ['tar', ['--ext', '-f', 'a.tar']],
      ['unzip', ['a.zip']],
      ['uniq', ['f.txt', 'out']],
      ['xxd', ['f.txt', 'out']],
      ['find', ['.', '-delete']],
      ['7z', ['x', 'a.7z']],
    ] as [string, string[]][]) {
      const e = refusal(cmd, args, { readonly: true, sandbox: 'bwrap' });
      expect(e.code, `${cmd} ${args.join(' ')}`).toBe('ARGUMENT_FORBIDDEN');
      expect(e.message).toMatch(/read-only/);
    }
    expect(check('grep', ['-i', 'x', 'f.txt'], { readonly: true }).argv).toEqual(['-i', 'x', 'f.txt']);
    expect(check('find', ['.', '-iname', '*.TXT'], { readonly: true }).argv).toHaveLength(3);
    expect(check('unzip', ['-l', 'a.zip'], { readonly: true }).argv).toHaveLength(2);
    expect(check('tar', ['tvf', 'a.tar'], { readonly: true }).argv.slice(3)).toEqual(['-t', '-v', '-f', 'a.tar']);
  });
});

describe('per sandbox mode', () => {
  it.each(['ffmpeg', 'ffprobe', 'convert', 'magick', 'identify', 'pandoc', 'exiftool', 'colordiff', 'locate', '7z', '7za'])('%s runs only in a kernel sandbox', (cmd) => {
    const e = refusal(cmd, ['f.txt']);
    expect(e.code).toBe('COMMAND_FORBIDDEN');
    expect(e.message).toMatch(/kernel sandbox \(bwrap or landlock\)/);
    expect(() => check(cmd, ['f.txt'], { sandbox: 'bwrap' })).not.toThrow();
    expect(() => check(cmd, ['f.txt'], { sandbox: 'landlock' })).not.toThrow();
  });

  it('git runs only in a kernel sandbox, with the subcommand first', () => {
    expect(refusal('git', ['log']).code).toBe('COMMAND_FORBIDDEN');
    expect(check('git', ['log'], { sandbox: 'landlock' }).argv).toEqual(['log']);
    expect(check('git', ['log', '--oneline'], { sandbox: 'bwrap' }).argv).toEqual(['log', '--oneline']);
    expect(refusal('git', ['config', 'x'], { sandbox: 'bwrap' }).code).toBe('COMMAND_FORBIDDEN');
    expect(refusal('git', ['-c', 'core.pager=sh', 'log'], { sandbox: 'bwrap' }).code).toBe('COMMAND_FORBIDDEN'); // global options: subcommand first
    expect(refusal('git', ['-C', '/etc', 'log'], { sandbox: 'bwrap' }).code).toBe('COMMAND_FORBIDDEN');
    expect(check('git', ['add', '-u'], { sandbox: 'bwrap' }).argv).toEqual(['add', '-u']);
    expect(refusal('git', [], { sandbox: 'bwrap' }).code).toBe('COMMAND_FORBIDDEN');
    expect(refusal('git', ['clone', 'https://example.com/r'], { sandbox: 'bwrap' }).message).toMatch(/network_mode/);
    expect(check('git', ['clone', 'https://example.com/r'], { sandbox: 'bwrap', network: 'safe' }).network).toBe(true);
    expect(refusal('git', ['push'], { sandbox: 'bwrap', network: 'safe' }).message).toMatch(/"all"/);
  });

  it.each([
    ['grep', ['-R', 'x', '.']],
    ['cp', ['-L', 'a', 'b']],
    ['cp', ['-rL', 'a', 'b']],
    ['tar', ['-chf', 'x.tar', '.']],
    ['find', ['-L', '.']],
    ['du', ['-L', '.']],
    ['ls', ['-L', 'x']],
    ['tar', ['-cf', 'x.tar', '-T', 'list']],
    ['sort', ['--files0-from=list']],
    ['wc', ['--files0-from', 'list']],
    ['md5sum', ['-c', 'sums']],
    ['sha256sum', ['--check', 'sums']],
    ['file', ['-f', 'list']],
    ['find', ['-files0-from', 'list']],
  ] as [string, string[]][])('%s %j (follows links or reads file names from a file): refused without the sandbox only', (cmd, args) => {
    const e = refusal(cmd, args);
    expect(e.code).toBe('ARGUMENT_FORBIDDEN');
    expect(e.message).toMatch(/symbolic links|file names/);
    expect(() => check(cmd, args, { sandbox: 'bwrap' })).not.toThrow();
  });

  it('link sweeps: after link-making commands in both modes, before link-following ones without the sandbox', () => {
    expect(check('tar', ['-xf', 'a.tar'])).toMatchObject({ sweepBefore: true, sweepAfter: true });
    expect(check('tar', ['-xf', 'a.tar'], { sandbox: 'bwrap' })).toMatchObject({ sweepBefore: false, sweepAfter: true });
    expect(check('zip', ['-r', 'x.zip', '.'])).toMatchObject({ sweepBefore: true, sweepAfter: false });
    expect(check('mv', ['a', 'b'])).toMatchObject({ sweepAfter: true });
    expect(check('cat', ['f.txt'])).toMatchObject({ sweepBefore: false, sweepAfter: false });
    expect(check('tar', ['-tf', 'a.tar'], { readonly: true })).toMatchObject({ sweepBefore: false, sweepAfter: false });
  });
});

describe('characters and network', () => {
  it.each([
    ['cat', ['a;b']],
    ['cat', ['$(id)']],
    ['cat', ['a`b`']],
    ['ls', ['a|b']],
    ['ls', ['a\nb']],
    ['cat', ['a\0b']],
    ['echo', ['a\0b']],
  ] as [string, string[]][])('%s %j → ARGUMENT_FORBIDDEN', (cmd, args) => {
    expect(refusal(cmd, args).code).toBe('ARGUMENT_FORBIDDEN');
  });

  it('commands whose language uses these characters take them as text', () => {
    for (const [cmd, args] of [
      ['echo', ['a;b', '$(id)']],
      ['grep', ['a|b', 'f.txt']],
      ['awk', ['$1 > 3 && $2 < 4 { print $1 }', 'f.txt']],
      ['printf', ['%s>%s\\n', 'a', 'b']],
      ['sed', ['s/a/b;c/', 'f.txt']],
      ['jq', ['.a | .b', 'f.txt']],
      ['find', ['.', '-name', '*;*']],
    ] as [string, string[]][]) {
      expect(() => check(cmd, args), `${cmd} ${args.join(' ')}`).not.toThrow();
    }
  });

  it('URLs: refused with the network off, for non-network commands, and for schemes other than http(s)/ftp(s)', () => {
    expect(refusal('curl', ['-o', 'x', 'https://example.com']).code).toBe('COMMAND_FORBIDDEN');
    expect(refusal('cat', ['https://example.com'], { network: 'all' }).message).toMatch(/may not use URLs/);
    expect(refusal('curl', ['-o', 'x', 'file:///etc/passwd'], { network: 'all' }).message).toMatch(/scheme "file:"/);
    expect(refusal('curl', ['-o', 'x', 'file:/etc/passwd'], { network: 'all' }).message).toMatch(/scheme "file:"/);
    expect(refusal('curl', ['-o', 'x', '--url=gopher://x'], { network: 'all' }).message).toMatch(/scheme "gopher:"/);
    expect(check('curl', ['-o', 'x', 'https://example.com/?a=1&b=2'], { network: 'safe' }).network).toBe(true);
    expect(check('ffprobe', ['https://example.com/v.mp4'], { network: 'safe', sandbox: 'bwrap' }).network).toBe(true);
    expect(check('cat', ['f.txt']).network).toBe(false);
  });

  it('network_mode "safe": GET only, also inside clusters and abbreviations; "all" allows them', () => {
    for (const args of [['-XPOST'], ['-sXPOST'], ['--req=POST'], ['-d', 'x'], ['-sd', 'x'], ['--data-binary', '@f.txt'], ['-F', 'a=b'], ['-T', 'f.txt'], ['--json', '{}']]) {
      expect(refusal('curl', [...args, '-o', 'o', 'https://example.com'], { network: 'safe' }).message, args.join(' ')).toMatch(/GET/);
    }
    expect(check('curl', ['-XPOST', '-d', 'x', '-o', 'o', 'https://example.com'], { network: 'all' }).argv).toContain('-XPOST');
    expect(refusal('curl', ['-d', '@../x', '-o', 'o', 'https://example.com'], { network: 'all' }).code).toBe('PATH_ESCAPE');
    expect(refusal('curl', ['-F', 'f=</etc/passwd', '-o', 'o', 'https://example.com'], { network: 'all' }).code).toBe('PATH_ESCAPE');
  });
});

describe('output names, output files, `-` operands and optional values', () => {
  const O = '/abs';
  it.each([
    ['csplit', ['-f', 'd', '-b', '/../../../../bob/Storage/data/pwn%02d', 'f.txt', '2']],
    ['csplit', ['-fd', '-bx/../../y%02d', 'f.txt', '2']],
    ['csplit', ['--suffix-format=a/b%02d', 'f.txt', '2']],
    ['csplit', ['--suf', '/x%d', 'f.txt', '2']],
    ['split', ['--additional-suffix=/../../x', 'f.txt']],
    ['split', ['--add', 'a/b', 'f.txt']],
    ['cp', ['-b', '-S', '/x', 'f.txt', 'g.txt']],
    ['cp', ['-bS/x', 'f.txt', 'g.txt']],
    ['mv', ['--suffix=../x', 'f.txt', 'g.txt']],
    ['install', ['-S', 'a/b', 'f.txt', 'g.txt']],
    ['gzip', ['-S/x', 'f.txt']],
    ['xz', ['--suffix=/x', 'f.txt']],
    ['mktemp', ['--suffix=/x', 'tXXXX']],
    ['tar', ['--suffix=/x', '-xf', 'a.tar']],
  ] as [string, string[]][])('%s %j: a name part with a slash → ARGUMENT_FORBIDDEN', (cmd, args) => {
    const e = refusal(cmd, args);
    expect(e.code).toBe('ARGUMENT_FORBIDDEN');
    expect(e.message).toMatch(/part of output file names/);
  });

  it.each([
    ['tar', ['-cf', 'x.tar', `--newer=${O}`, 'f.txt']],
    ['tar', ['-cf', 'x.tar', '-N', `${O}`, 'f.txt']],
    ['tar', ['-cf', 'x.tar', `--after-date=${O}`, 'f.txt']],
    ['tar', ['-cf', 'x.tar', `--newer-mtime=${O}`, 'f.txt']],
    ['tar', ['-cf', 'x.tar', '--mtime', '../x', 'f.txt']],
    ['tar', ['-cf', 'x.tar', `--volno-file=${O}`, 'f.txt']],
    ['tar', ['-cf', 'x.tar', `--index-file=out-link/x`, 'f.txt']],
    ['tar', ['-cf', 'x.tar', `--owner-map=${O}`, 'f.txt']],
    ['tar', ['-cf', 'x.tar', `--group-map=${O}`, 'f.txt']],
    ['tar', ['-cf', 'x.tar', '--occurrence', O]],
    ['tar', ['-cf', 'x.tar', '--wildcards-match-slash', O]],
    ['tar', ['-cf', 'x.tar', '--backup', O]],
    ['tar', ['-xf', 'a.tar', '--one-top-level=..']],
    ['od', ['-w', O]],
    ['od', ['--width', O]],
    ['od', ['--strings', O]],
    ['pr', ['-s', O]],
    ['pr', ['-S', O]],
    ['pr', ['--sep-string', O]],
    ['diff', ['--context', O, 'f.txt']],
    ['diff', ['--unified', O, 'f.txt']],
    ['column', ['-d', O]],
    ['strings', [`@${O}`]],
    ['strings', ['@../x']],
    ['tree', ['--hintro', O]],
    ['tree', ['--gitfile=../x']],
    ['zstd', ['--output-dir-flat=out-link', 'f.txt']],
    ['zstd', ['-o', O, 'f.txt']],
    ['zip', ['-O', O, 'x.zip', 'f.txt']],
    ['sort', ['-T', O, 'f.txt']],
    ['gawk', ['--dump-variables=out-link', 'BEGIN{}']],
    ['gawk', ['-pout-link', 'BEGIN{}']],
    ['gawk', [`-o${O}`, 'BEGIN{}']],
    ['uniq', ['-', O]],
    ['xxd', ['-', '../x']],
  ] as [string, string[]][])('%s %j → PATH_ESCAPE (every value that names a file is checked)', (cmd, args) => {
    expect(refusal(cmd, args).code).toBe('PATH_ESCAPE');
  });

  it.each([
    ['uniq', ['-', 'f.txt']],
    ['uniq', ['--', '-', 'f.txt']],
    ['uniq', ['-c', '-s', '2', '-', 'f.txt']],
    ['xxd', ['-', 'f.txt']],
    ['xxd', ['-c', '8', '-', 'f.txt']],
    ['tar', ['-tf', 'a.tar', '--index-file=f.txt']],
    ['tar', ['-tf', 'a.tar', '--index', 'f.txt']],
    ['tar', ['-tf', 'a.tar', '-g', 'f.txt']],
    ['tar', ['tf', 'a.tar', '--volno-file=f.txt']],
    ['sort', ['-T', 'sub', 'f.txt']],
    ['sort', ['--temporary-directory=sub', 'f.txt']],
    ['tree', ['-o', 'x.txt']],
    ['tree', ['-R', '-H', '.']],
    ['gawk', ['-d', 'BEGIN{}']],
    ['gawk', ['--dump-variables', 'BEGIN{}']],
    ['gawk', ['-p', 'BEGIN{}']],
    ['gawk', ['--prof=x', 'BEGIN{}']],
    ['gawk', ['-o', 'BEGIN{}']],
    ['awk', ['-nd', 'BEGIN{}']],
  ] as [string, string[]][])('read-only: %s %j writes → ARGUMENT_FORBIDDEN', (cmd, args) => {
    const e = refusal(cmd, args, { readonly: true });
    expect(e.code).toBe('ARGUMENT_FORBIDDEN');
    expect(e.message).toMatch(/read-only/);
  });

  it.each([
    ['gawk', ['-D', 'BEGIN{}']],
    ['gawk', ['--debug=cmds', 'BEGIN{}']],
  ] as [string, string[]][])('%s %j (debugger commands from a file) → ARGUMENT_FORBIDDEN everywhere', (cmd, args) => {
    expect(refusal(cmd, args).code).toBe('ARGUMENT_FORBIDDEN');
  });

  it('read-only: one operand (even `-`) is input only; reading options stay allowed', () => {
    for (const [cmd, args] of [
      ['uniq', ['-']],
      ['uniq', ['f.txt']],
      ['uniq', ['-f', '1', 'f.txt']],
      ['xxd', ['-']],
      ['xxd', ['-l', '4', 'f.txt']],
      ['tar', ['-tvf', 'a.tar', '--occurrence=1', 'm']],
      ['od', ['-w8', 'f.txt']],
      ['pr', ['-s:', '-2', 'f.txt']],
      ['cat', ['-', 'f.txt', '-']],
      ['gawk', ['-v', 'x=1', 'BEGIN{}', 'f.txt']],
    ] as [string, string[]][]) {
      expect(() => check(cmd, args, { readonly: true }), `${cmd} ${args.join(' ')}`).not.toThrow();
    }
  });

  it('name parts without a slash and dates for DATE-OR-FILE are accepted', () => {
    for (const [cmd, args] of [
      ['csplit', ['-f', 'sub/part', '-b', '%03d.txt', 'f.txt', '2']],
      ['split', ['--additional-suffix=.csv', 'f.txt', 'sub/p']],
      ['cp', ['-b', '-S', '.orig', 'f.txt', 'g.txt']],
      ['gzip', ['-S', '.z', 'f.txt']],
      ['tar', ['-cf', 'x.tar', '--newer=2024-01-01', 'f.txt']],
      ['tar', ['-cf', 'x.tar', '--mtime=2024-01-01 00:00', 'f.txt']],
      ['tar', ['-cf', 'x.tar', '-N', 'f.txt', 'f.txt']],
    ] as [string, string[]][]) {
      expect(() => check(cmd, args), `${cmd} ${args.join(' ')}`).not.toThrow();
    }
  });
});
