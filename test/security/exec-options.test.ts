/**
 * Option-attached paths, `..` inside option values, and options or script languages that run
 * programs, in both sandbox modes. Every case must be refused by the argument policy (it applies
 * in both modes); the arena then checks that nothing outside the zone was read or written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectRan, expectRefused, makeArena, MODES, type Arena } from './exec-harness.js';

type Case = [string, (O: string) => { cmd: string; args: string[]; zone?: string }];

/** Option values that are paths: attached, after =, as the next argument, inside clusters, abbreviated. */
const ATTACHED: Case[] = [
  ['tar -C/abs', (O) => ({ cmd: 'tar', args: ['-xf', 'a.tar', `-C${O}`] })],
  ['tar -C /abs', (O) => ({ cmd: 'tar', args: ['-xf', 'a.tar', '-C', O] })],
  ['tar --directory=/abs', (O) => ({ cmd: 'tar', args: ['-xf', 'a.tar', `--directory=${O}`] })],
  ['tar --dir=/abs (abbreviated)', (O) => ({ cmd: 'tar', args: ['-xf', 'a.tar', `--dir=${O}`] })],
  ['tar -xC/abs (value inside a cluster)', (O) => ({ cmd: 'tar', args: [`-xC${O}`, '-f', 'a.tar'] })],
  ['tar -C..', () => ({ cmd: 'tar', args: ['-xf', 'a.tar', '-C..'] })],
  ['tar -C ../..', () => ({ cmd: 'tar', args: ['-xf', 'a.tar', '-C', '../..'] })],
  ['tar -f../x', () => ({ cmd: 'tar', args: ['-c', '-f../x.tar', 'f.txt'] })],
  ['tar -cf/abs (value after a letter)', (O) => ({ cmd: 'tar', args: [`-cf${O}/x.tar`, 'f.txt'] })],
  ['tar --file=/abs', (O) => ({ cmd: 'tar', args: ['-c', `--file=${O}/x.tar`, 'f.txt'] })],
  ['tar -tf of the outside archive', (O) => ({ cmd: 'tar', args: ['-tf', `${O}/x.tar`] })],
  ['tar cf /abs (old style)', (O) => ({ cmd: 'tar', args: ['cf', `${O}/x.tar`, 'f.txt'] })],
  ['tar -c of the canary', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', `${O}/secret.txt`] })],
  ['tar -c of ../', () => ({ cmd: 'tar', args: ['-cf', 'x.tar', '../'] })],
  ['tar -g /abs (snapshot file written)', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', '-g', `${O}/snap`, 'f.txt'] })],
  ['tar --index-file=/abs', (O) => ({ cmd: 'tar', args: ['-cvf', 'x.tar', `--index-file=${O}/idx`, 'f.txt'] })],
  ['tar -X /abs', (O) => ({ cmd: 'tar', args: ['-cf', 'x.tar', '-X', `${O}/secret.txt`, 'f.txt'] })],
  ['unzip -d /', () => ({ cmd: 'unzip', args: ['a.zip', '-d', '/'] })],
  ['unzip -d /abs', (O) => ({ cmd: 'unzip', args: ['a.zip', '-d', O] })],
  ['unzip -d/abs', (O) => ({ cmd: 'unzip', args: ['a.zip', `-d${O}`] })],
  ['unzip -d ..', () => ({ cmd: 'unzip', args: ['a.zip', '-d', '..'] })],
  ['unzip -: (keeps ../ in member names)', () => ({ cmd: 'unzip', args: ['-:', 'a.zip'] })],
  ['unzip -o: (in a cluster)', () => ({ cmd: 'unzip', args: ['-o:', 'a.zip'] })],
  ['7z x -o/abs (sandbox only; refused in both modes)', (O) => ({ cmd: '7z', args: ['x', 'a.7z', `-o${O}`] })],
  ['7z x -o..', () => ({ cmd: '7z', args: ['x', 'a.7z', '-o../..'] })],
  ['sort -olink/x (attached value through a link leading out)', () => ({ cmd: 'sort', args: ['-oout-link/w.txt', 'f.txt'] })],
  ['cp -tlink (attached target through a link leading out)', () => ({ cmd: 'cp', args: ['-tout-link', 'f.txt'] })],
  ['unzip of the outside archive', (O) => ({ cmd: 'unzip', args: ['-l', `${O}/a.zip`] })],
  ['cp -t/abs', (O) => ({ cmd: 'cp', args: [`-t${O}`, 'f.txt'] })],
  ['cp -rt/abs (cluster)', (O) => ({ cmd: 'cp', args: [`-rt${O}`, 'f.txt'] })],
  ['cp -t /abs', (O) => ({ cmd: 'cp', args: ['-t', O, 'f.txt'] })],
  ['cp --target-directory=..', () => ({ cmd: 'cp', args: ['--target-directory=..', 'f.txt'] })],
  ['cp --target=../.. (abbreviated)', () => ({ cmd: 'cp', args: ['--target=../..', 'f.txt'] })],
  ['cp f /abs', (O) => ({ cmd: 'cp', args: ['f.txt', `${O}/copy.txt`] })],
  ['cp canary here', (O) => ({ cmd: 'cp', args: [`${O}/secret.txt`, 'copy.txt'] })],
  ['mv -t/abs', (O) => ({ cmd: 'mv', args: [`-t${O}`, 'f.txt'] })],
  ['mv f ../', () => ({ cmd: 'mv', args: ['f.txt', '../'] })],
  ['install -t /abs', (O) => ({ cmd: 'install', args: ['-t', O, 'f.txt'] })],
  ['install -D f /abs/x', (O) => ({ cmd: 'install', args: ['-D', 'f.txt', `${O}/x/y`] })],
  ['zip -b /abs (temp folder)', (O) => ({ cmd: 'zip', args: ['-b', O, 'x.zip', 'f.txt'] })],
  ['zip -z /abs (comment flag takes no value)', (O) => ({ cmd: 'zip', args: ['-z', `${O}/x.zip`, 'f.txt'] })],
  ['zip --output-file=/abs', (O) => ({ cmd: 'zip', args: ['x.zip', 'f.txt', `--output-file=${O}/x.zip`] })],
  ['zip /abs.zip f', (O) => ({ cmd: 'zip', args: [`${O}/x.zip`, 'f.txt'] })],
  ['zip -r x.zip ../', () => ({ cmd: 'zip', args: ['-r', 'x.zip', '../'] })],
  ['split f /abs/prefix', (O) => ({ cmd: 'split', args: ['f.txt', `${O}/part`] })],
  ['csplit -f /abs/prefix', (O) => ({ cmd: 'csplit', args: ['-f', `${O}/xx`, 'f.txt', '2'] })],
  ['csplit --prefix=../x', () => ({ cmd: 'csplit', args: ['--prefix=../xx', 'f.txt', '2'] })],
  ['csplit of the canary', (O) => ({ cmd: 'csplit', args: [`${O}/secret.txt`, '1'] })],
  ['shuf -o/abs', (O) => ({ cmd: 'shuf', args: [`-o${O}/w`, 'f.txt'] })],
  ['shuf -n 1 --output=../x', () => ({ cmd: 'shuf', args: ['-n', '1', '--output=../x', 'f.txt'] })],
  ['iconv -o /abs', (O) => ({ cmd: 'iconv', args: ['-f', 'utf-8', '-t', 'ascii', '-o', `${O}/w`, 'f.txt'] })],
  ['tee /abs', (O) => ({ cmd: 'tee', args: [`${O}/w`] })],
  ['touch -r /abs', (O) => ({ cmd: 'touch', args: ['-r', `${O}/secret.txt`, 'f.txt'] })],
  ['touch /abs', (O) => ({ cmd: 'touch', args: [`${O}/w`] })],
  ['truncate --reference=/abs', (O) => ({ cmd: 'truncate', args: [`--reference=${O}/secret.txt`, 'f.txt'] })],
  ['truncate -s 0 /abs', (O) => ({ cmd: 'truncate', args: ['-s', '0', `${O}/secret.txt`] })],
  ['mkdir -p /abs/x', (O) => ({ cmd: 'mkdir', args: ['-p', `${O}/x`] })],
  ['mktemp -p /abs', (O) => ({ cmd: 'mktemp', args: ['-p', O] })],
  ['mktemp --tmpdir=/abs', (O) => ({ cmd: 'mktemp', args: [`--tmpdir=${O}`] })],
  ['rm -rf /abs', (O) => ({ cmd: 'rm', args: ['-rf', O] })],
  ['rm ../above', () => ({ cmd: 'rm', args: ['../above-secret.txt'] })],
  ['rmdir ../data (climbs out and back: the zone root itself)', () => ({ cmd: 'rmdir', args: ['../data'] })],
  ['rm -rf ../data (climbs out and back)', () => ({ cmd: 'rm', args: ['-rf', '../data'] })],
  ['shred -u /abs', (O) => ({ cmd: 'shred', args: ['-u', `${O}/secret.txt`] })],
  ['ln -s (blacklisted)', (O) => ({ cmd: 'ln', args: ['-s', O, 'lnk'] })],
  ['date -f /abs (dates from a file, echoed in errors)', (O) => ({ cmd: 'date', args: ['-f', `${O}/secret.txt`] })],
  ['date --file=/abs', (O) => ({ cmd: 'date', args: [`--file=${O}/secret.txt`] })],
  ['date -r /abs', (O) => ({ cmd: 'date', args: ['-r', `${O}/secret.txt`] })],
  ['column -t /abs (-t takes no value)', (O) => ({ cmd: 'column', args: ['-t', `${O}/secret.txt`] })],
  ['jq -R --tab . /abs (--tab takes no value)', (O) => ({ cmd: 'jq', args: ['-R', '--tab', '.', `${O}/secret.txt`] })],
  ['jq --arg x . /abs', (O) => ({ cmd: 'jq', args: ['--arg', 'x', 'y', '.', `${O}/secret.txt`] })],
  ['jq --rawfile', (O) => ({ cmd: 'jq', args: ['-n', '--rawfile', 'x', `${O}/secret.txt`, '$x'] })],
  ['jq --slurpfile', (O) => ({ cmd: 'jq', args: ['-n', '--slurpfile', 'x', `${O}/secret.txt`, '$x'] })],
  ['jq -L /abs', (O) => ({ cmd: 'jq', args: [`-L${O}`, '.', 'f.txt'] })],
  ['head -c 100 /abs', (O) => ({ cmd: 'head', args: ['-c', '100', `${O}/secret.txt`] })],
  ['tail -n1 ../../../bob/Storage/data/bob-secret.txt', () => ({ cmd: 'tail', args: ['-n1', '../../../bob/Storage/data/bob-secret.txt'] })],
  ['xxd /abs', (O) => ({ cmd: 'xxd', args: [`${O}/secret.txt`] })],
  ['base64 /abs', (O) => ({ cmd: 'base64', args: [`${O}/secret.txt`] })],
  ['od -c ../above', () => ({ cmd: 'od', args: ['-c', '../above-secret.txt'] })],
  ['wc --files0-from=/abs', (O) => ({ cmd: 'wc', args: [`--files0-from=${O}/secret.txt`] })],
  ['du ../../..', () => ({ cmd: 'du', args: ['-a', '../../..'] })],
  ['ls /abs', (O) => ({ cmd: 'ls', args: ['-la', O] })],
  ['ls ../../..', () => ({ cmd: 'ls', args: ['../../..'] })],
  ['find / -name x', () => ({ cmd: 'find', args: ['/', '-name', 'secret.txt'] })],
  ['find .. -name x', () => ({ cmd: 'find', args: ['..', '-name', '*.txt'] })],
  ['find -newer /abs', (O) => ({ cmd: 'find', args: ['.', '-newer', `${O}/secret.txt`] })],
  ['stat /abs', (O) => ({ cmd: 'stat', args: [`${O}/secret.txt`] })],
  ['file /abs', (O) => ({ cmd: 'file', args: [`${O}/secret.txt`] })],
  ['realpath ..', () => ({ cmd: 'realpath', args: ['../../bob'] })],
  ['diff f /abs', (O) => ({ cmd: 'diff', args: ['f.txt', `${O}/secret.txt`] })],
  ['diff --from-file=/abs', (O) => ({ cmd: 'diff', args: [`--from-file=${O}/secret.txt`, 'f.txt'] })],
  ['cmp f ../above', () => ({ cmd: 'cmp', args: ['f.txt', '../above-secret.txt'] })],
  ['md5sum /abs', (O) => ({ cmd: 'md5sum', args: [`${O}/secret.txt`] })],
  ['sqlite3 /abs db', (O) => ({ cmd: 'sqlite3', args: [`${O}/db.sqlite`, 'select 1'] })],
  ['sqlite3 -separator , /abs db (word option with a value)', (O) => ({ cmd: 'sqlite3', args: ['-separator', ',', `${O}/x.db`, 'create table t(a)'] })],
  ['sqlite3 file: URI', (O) => ({ cmd: 'sqlite3', args: [`file:${O}/db.sqlite?mode=ro`, 'select 1'] })],
  ['xxd f /abs (output file)', (O) => ({ cmd: 'xxd', args: ['f.txt', `${O}/w`] })],
  ['gzip -c ../above', () => ({ cmd: 'gzip', args: ['-c', '../above-secret.txt'] })],
  ['patch -i /abs', (O) => ({ cmd: 'patch', args: ['-i', `${O}/secret.txt`, 'f.txt'] })],
  ['patch -d /abs', (O) => ({ cmd: 'patch', args: ['-d', O, '-i', 'f.txt'] })],
];

/** Options and script languages that run programs or reach other files. */
const PROGRAMS: Case[] = [
  ['find -exec', () => ({ cmd: 'find', args: ['.', '-exec', 'cat', '{}', ';'] })],
  ['find -execdir', () => ({ cmd: 'find', args: ['.', '-execdir', 'id', ';'] })],
  ['find -ok', () => ({ cmd: 'find', args: ['.', '-ok', 'id', ';'] })],
  ['find -okdir', () => ({ cmd: 'find', args: ['.', '-okdir', 'id', ';'] })],
  ['find -fprint /abs', (O) => ({ cmd: 'find', args: ['.', '-fprint', `${O}/w`] })],
  ['find -fprintf', (O) => ({ cmd: 'find', args: ['.', '-fprintf', `${O}/w`, '%p'] })],
  ['find -fls', (O) => ({ cmd: 'find', args: ['.', '-fls', `${O}/w`] })],
  ['find -fprint0 (inside the zone too)', () => ({ cmd: 'find', args: ['.', '-fprint0', 'list'] })],
  ['tar --to-command', () => ({ cmd: 'tar', args: ['-xf', 'a.tar', '--to-command=sh'] })],
  ['tar --to-comm (abbreviated)', () => ({ cmd: 'tar', args: ['-xf', 'a.tar', '--to-comm', 'sh'] })],
  ['tar -I prog', () => ({ cmd: 'tar', args: ['-I', 'sh', '-xf', 'a.tar'] })],
  ['tar -Isht (attached)', () => ({ cmd: 'tar', args: ['-Ish', '-xf', 'a.tar'] })],
  ['tar --use-compress-program', () => ({ cmd: 'tar', args: ['--use-compress-program=sh', '-xf', 'a.tar'] })],
  ['tar -P', () => ({ cmd: 'tar', args: ['-P', '-xf', 'a.tar'] })],
  ['tar -Pxf (cluster)', () => ({ cmd: 'tar', args: ['-Pxf', 'a.tar'] })],
  ['tar xPf (old style)', () => ({ cmd: 'tar', args: ['xPf', 'a.tar'] })],
  ['tar cIf (old style, compress program)', () => ({ cmd: 'tar', args: ['cIf', 'sh', 'x.tar', 'f.txt'] })],
  ['tar --absolute-names', () => ({ cmd: 'tar', args: ['--absolute-names', '-xf', 'a.tar'] })],
  ['tar --checkpoint-action=exec=', () => ({ cmd: 'tar', args: ['-cf', 'x.tar', '--checkpoint=1', '--checkpoint-action=exec=id', 'f.txt'] })],
  ['tar -F script', () => ({ cmd: 'tar', args: ['-cf', 'x.tar', '-F', 'prog.sh', 'f.txt'] })],
  ['tar --info-script', () => ({ cmd: 'tar', args: ['-cf', 'x.tar', '--info-script=prog.sh', 'f.txt'] })],
  ['tar --rsh-command', () => ({ cmd: 'tar', args: ['--rsh-command=sh', '-cf', 'host:x.tar', 'f.txt'] })],
  ['sort --compress-program', () => ({ cmd: 'sort', args: ['--compress-program=sh', 'f.txt'] })],
  ['split --filter', () => ({ cmd: 'split', args: ['--filter=sh', 'f.txt'] })],
  ['split --filt= (abbreviated)', () => ({ cmd: 'split', args: ['--filt=sh', 'f.txt'] })],
  ['rg --pre (policy refuses before COMMAND_NOT_FOUND)', () => ({ cmd: 'rg', args: ['--pre', 'sh', 'x', '.'] })],
  ['rg --pre=', () => ({ cmd: 'rg', args: ['--pre=sh', 'x'] })],
  ['rg -z', () => ({ cmd: 'rg', args: ['-z', 'x'] })],
  ['zip -TT', () => ({ cmd: 'zip', args: ['-T', '-TT', 'sh', 'x.zip', 'f.txt'] })],
  ['zip --unzip-command', () => ({ cmd: 'zip', args: ['--unzip-command=sh', 'x.zip', 'f.txt'] })],
  ['pandoc --filter', () => ({ cmd: 'pandoc', args: ['--filter', 'sh', 'f.txt'] })],
  ['pandoc --lua-filter', () => ({ cmd: 'pandoc', args: ['--lua-filter=x.lua', 'f.txt'] })],
  ['pandoc -d defaults', () => ({ cmd: 'pandoc', args: ['-d', 'x.yaml', 'f.txt'] })],
  ['git -c', () => ({ cmd: 'git', args: ['-c', 'core.pager=sh', 'log'] })],
  ['git -C /abs', (O) => ({ cmd: 'git', args: ['-C', O, 'log'] })],
  ['git --upload-pack', () => ({ cmd: 'git', args: ['clone', '--upload-pack=sh', 'x', 'y'] })],
  ['git config (subcommand)', () => ({ cmd: 'git', args: ['config', 'core.hooksPath', '.'] })],
  ['sqlite3 .shell', () => ({ cmd: 'sqlite3', args: ['db.sqlite', '.shell id'] })],
  ['sqlite3 .system', () => ({ cmd: 'sqlite3', args: ['db.sqlite', '.system id'] })],
  ['sqlite3 .load', () => ({ cmd: 'sqlite3', args: ['db.sqlite', '.load /tmp/x'] })],
  ['sqlite3 .output /abs', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `.output ${O}/w`, 'select 1'] })],
  ['sqlite3 .once /abs', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `.once ${O}/w`, 'select 1'] })],
  ['sqlite3 .open /abs', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `.open ${O}/db.sqlite`] })],
  ['sqlite3 .read', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `.read ${O}/secret.txt`] })],
  ['sqlite3 .import', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `.import ${O}/secret.txt t`] })],
  ['sqlite3 -cmd', () => ({ cmd: 'sqlite3', args: ['-cmd', '.shell id', 'db.sqlite'] })],
  ['sqlite3 --cmd (double dash)', () => ({ cmd: 'sqlite3', args: ['--cmd', '.shell id', 'db.sqlite'] })],
  ['sqlite3 -init', () => ({ cmd: 'sqlite3', args: ['-init', 'x.sql', 'db.sqlite'] })],
  ['sqlite3 ATTACH', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `ATTACH '${O}/db.sqlite' AS o; SELECT * FROM o.sqlite_master`] })],
  ['sqlite3 ATTACH after a string holding --', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `select '--'; attach '${O}/x.db' as y; create table y.t(a)`] })],
  ['sqlite3 load_extension', () => ({ cmd: 'sqlite3', args: ['db.sqlite', "select load_extension('/tmp/x.so')"] })],
  ['sqlite3 readfile', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `select readfile('${O}/secret.txt')`] })],
  ['sqlite3 writefile', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `select writefile('${O}/w', 'x')`] })],
  ['sqlite3 VACUUM INTO', (O) => ({ cmd: 'sqlite3', args: ['db.sqlite', `VACUUM INTO '${O}/copy.db'`] })],
  ['dc !cmd', () => ({ cmd: 'dc', args: ['-e', '!id'] })],
  ['dc program file', () => ({ cmd: 'dc', args: ['prog.dc'] })],
  ['jq import', () => ({ cmd: 'jq', args: ['import "x" as y; .', 'f.json'] })],
  ['jq include', () => ({ cmd: 'jq', args: ['-n', 'include "x"; 1'] })],
  ['jq import behind --arg (two values)', () => ({ cmd: 'jq', args: ['--arg', 'a', 'b', 'import "x" as y; .'] })],
  ['xmllint --noent (external entities)', () => ({ cmd: 'xmllint', args: ['--noent', 'f.xml'] })],
  ['xmllint --xinclude', () => ({ cmd: 'xmllint', args: ['--xinclude', 'f.xml'] })],
  ['diff3 --diff-program', () => ({ cmd: 'diff3', args: ['--diff-program=sh', 'prog.sh', 'f.txt', 'f.txt'] })],
  ['sdiff --diff-program', () => ({ cmd: 'sdiff', args: ['--diff-program=sh', 'f.txt', 'f.txt'] })],
  ['less -o log', () => ({ cmd: 'less', args: ['-o', 'log', 'f.txt'] })],
  ['hexdump -f format file', () => ({ cmd: 'hexdump', args: ['-f', 'fmt', 'f.txt'] })],
  ['file -m magic', () => ({ cmd: 'file', args: ['-m', 'magic', 'f.txt'] })],
  ['uudecode without -o (names its own output file)', () => ({ cmd: 'uudecode', args: ['f.uu'] })],
  ['curl -K config', () => ({ cmd: 'curl', args: ['-K', 'cfg', '-o', 'x', 'https://example.com'] })],
  ['xargs', () => ({ cmd: 'xargs', args: ['sh'] })],
  ['env', () => ({ cmd: 'env', args: ['sh', '-c', 'id'] })],
  ['sh', () => ({ cmd: 'sh', args: ['-c', 'id'] })],
  ['bash', () => ({ cmd: 'bash', args: ['-c', 'id'] })],
  ['python3', () => ({ cmd: 'python3', args: ['-c', 'print(1)'] })],
  ['perl', () => ({ cmd: 'perl', args: ['-e', 'print 1'] })],
  ['busybox', () => ({ cmd: 'busybox', args: ['sh'] })],
  ['timeout', () => ({ cmd: 'timeout', args: ['5', 'sh'] })],
  ['nice', () => ({ cmd: 'nice', args: ['sh'] })],
  ['chmod (removed from the whitelist)', () => ({ cmd: 'chmod', args: ['+x', 'prog.sh'] })],
  ['rename (Perl expressions)', () => ({ cmd: 'rename', args: ['s/a/b/e', 'f.txt'] })],
  ['cmd with a path', () => ({ cmd: '/bin/sh', args: ['-c', 'id'] })],
  ['cmd with a relative path to a zone script', () => ({ cmd: './prog.sh', args: [] })],
  ['cmd with spaces', () => ({ cmd: 'sh -c id', args: [] })],
];

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  beforeEach(() => {
    a = makeArena(mode);
    a.put('f.txt', 'line one\nline two\n');
    a.put('prog.sh', `#!/bin/sh\ntouch ${a.outside}/pwn\n`, 0o755);
    a.put('prog.dc', '!id\n');
    a.put('f.json', '{"a":1}\n');
    a.put('f.xml', '<a/>\n');
    fs.symlinkSync(a.outside, path.join(a.zone, 'out-link')); // planted: as if a link leading out existed
  });
  afterEach(() => a.finish());

  describe('option-attached paths and .. inside option values', () => {
    it.each(ATTACHED)('%s', async (_name, make) => {
      const r = await a.exec({ zone: 'storage', ...make(a.outside) });
      expectRefused(r);
    });
  });

  describe('program-running options and languages', () => {
    it.each(PROGRAMS)('%s', async (_name, make) => {
      const r = await a.exec({ zone: 'storage', ...make(a.outside) });
      expectRefused(r);
    });
  });

  it('the error names the value and the option that carried it, and never a disk path of the zone', async () => {
    const r = await a.exec({ zone: 'storage', cmd: 'sort', args: [`-o${a.outside}/w`, 'f.txt'] });
    expectRefused(r, 'PATH_ESCAPE');
    expect(r.error?.message).toContain(`-o${a.outside}/w`);
    expect(JSON.stringify(r)).not.toContain(a.zone);
  });

  it('the same options work inside the zone (no false positives)', async () => {
    a.put('d/x.txt', 'x\n');
    expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-cf', 'a.tar', 'd'] }));
    expectRan(await a.exec({ zone: 'storage', cmd: 'mkdir', args: ['out'] }));
    expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-xf', 'a.tar', '-Cout'] }));
    expect(fs.readFileSync(path.join(a.zone, 'out/d/x.txt'), 'utf8')).toBe('x\n');
    expectRan(await a.exec({ zone: 'storage', cmd: 'cp', args: ['-t', 'out', 'f.txt'] }));
    expectRan(await a.exec({ zone: 'storage', cmd: 'sort', args: ['-rosorted.txt', 'f.txt'] }));
    expect(fs.readFileSync(path.join(a.zone, 'sorted.txt'), 'utf8')).toBe('line two\nline one\n');
    expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['czf', 'b.tgz', 'd'] }));
    const d = expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['tzf', 'b.tgz'] }));
    expect(d.stdout).toContain('d/x.txt');
    expectRan(await a.exec({ zone: 'storage', cmd: 'csplit', args: ['-f', 'part', 'f.txt', '2'] }));
    expect(fs.readFileSync(path.join(a.zone, 'part01'), 'utf8')).toBe('line two\n');
    const j = expectRan(await a.exec({ zone: 'storage', cmd: 'jq', args: ['--arg', 'x', 'y', '-c', '{x: $x, a: .a}', 'f.json'] }));
    expect(j.stdout).toBe('{"x":"y","a":1}\n');
    const c = expectRan(await a.exec({ zone: 'storage', cmd: 'column', args: ['-t', '-s', ' ', 'f.txt'] }));
    expect(c.stdout).toContain('line  one');
    const q = expectRan(await a.exec({ zone: 'storage', cmd: 'sqlite3', args: ['-separator', ';', 'db.sqlite', 'create table t(a,b)', "insert into t values(1,'x')", 'select * from t', '.mode csv', '.headers on', 'select * from t'] }));
    expect(q.stdout).toBe('1;x\na,b\r\n1,x\r\n'); // sqlite3's csv mode ends rows with CRLF
    const dt = expectRan(await a.exec({ zone: 'storage', cmd: 'date', args: ['-u', '-d', '@0', '+%Y/%m/%d'] }));
    expect(dt.stdout).toBe('1970/01/01\n');
  });
});
