/**
 * Symbolic links made inside the zone by the commands themselves (cp -s, tar and unzip members,
 * cp/mv of a relative link) and links planted on disk, then read in every way a command can
 * follow them, in both modes. Nothing outside the zone may be read or written: the policy refuses
 * what names a link leading out, outward links are removed after any command that can create them
 * (and, without the sandbox, before any command that follows links), and bubblewrap shows
 * nothing outside the zone anyway.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectOk, expectRan, expectRefused, expectRefusedOrContained, makeArena, MODES, SECRET, type Arena } from './exec-harness.js';

let workshop: string;
beforeAll(() => {
  workshop = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-evil-'));
});
afterAll(() => fs.rmSync(workshop, { recursive: true, force: true }));

/** Runs a real CLI in a fresh folder of the workshop (outside every zone). */
function build(name: string, steps: (dir: string) => void): string {
  const dir = path.join(workshop, `${name}-${Math.random().toString(36).slice(2)}`);
  fs.mkdirSync(dir);
  steps(dir);
  return dir;
}
const sh = (dir: string, file: string, args: string[]) => execFileSync(file, args, { cwd: dir, stdio: 'pipe' });

/** evil.tar: member `lnk` → target, then member `lnk/pwn.txt` written through it. */
function evilTar(target: string): Buffer {
  const dir = build('tar', (d) => {
    fs.symlinkSync(target, path.join(d, 'lnk'));
    sh(d, 'tar', ['cf', 'evil.tar', 'lnk']);
    fs.unlinkSync(path.join(d, 'lnk'));
    fs.mkdirSync(path.join(d, 'lnk'));
    fs.writeFileSync(path.join(d, 'lnk', 'pwn.txt'), 'PWNED\n');
    sh(d, 'tar', ['rf', 'evil.tar', 'lnk/pwn.txt']);
  });
  return fs.readFileSync(path.join(dir, 'evil.tar'));
}

/** evil.zip made with zip --symlinks: entry `lnk` → target, then `lnk/pwn.txt`. */
function evilZip(target: string): Buffer {
  const dir = build('zip', (d) => {
    fs.symlinkSync(target, path.join(d, 'lnk'));
    sh(d, 'zip', ['-q', '--symlinks', 'evil.zip', 'lnk']);
    fs.unlinkSync(path.join(d, 'lnk'));
    fs.mkdirSync(path.join(d, 'lnk'));
    fs.writeFileSync(path.join(d, 'lnk', 'pwn.txt'), 'PWNED\n');
    sh(d, 'zip', ['-q', 'evil.zip', 'lnk/pwn.txt']);
  });
  return fs.readFileSync(path.join(dir, 'evil.zip'));
}

/** inward.tar: a/rel → ../above-secret.txt, which stays inside the zone (dangling) until moved to the root. */
function inwardTar(): Buffer {
  const dir = build('inward', (d) => {
    fs.mkdirSync(path.join(d, 'a'));
    fs.symlinkSync('../above-secret.txt', path.join(d, 'a', 'rel'));
    sh(d, 'tar', ['cf', 'inward.tar', 'a']);
  });
  return fs.readFileSync(path.join(dir, 'inward.tar'));
}

/** Every way of reading what `lnk` leads to. Each may be refused or run; the arena checks the result. */
const READS: [string, string[]][] = [
  ['cat', ['lnk']],
  ['cat', ['lnk/secret.txt']],
  ['head', ['-c', '200', 'lnk/secret.txt']],
  ['grep', ['-r', 'KANARIE', '.']],
  ['grep', ['-R', 'KANARIE', '.']],
  ['grep', ['-r', 'KANARIE', 'lnk']],
  ['grep', ['-r', 'KANARIE', 'lnk/']],
  ['cp', ['lnk', 'copy']],
  ['cp', ['lnk/secret.txt', 'copy.txt']],
  ['cp', ['-rL', '.', '../copy']],
  ['cp', ['-rL', 'lnk', 'copy-dir']],
  ['tar', ['-chf', 'x.tar', 'lnk']],
  ['tar', ['-chf', 'x.tar', '.']],
  ['zip', ['-r', 'z.zip', '.']],
  ['zip', ['-r', 'z2.zip', 'lnk']],
  ['find', ['-L', '.', '-name', 'secret.txt']],
  ['find', ['.', '-follow', '-type', 'f']],
  ['du', ['-aL', '.']],
  ['ls', ['-lL', 'lnk']],
  ['ls', ['-la', 'lnk/']],
  ['wc', ['-c', 'lnk/secret.txt']],
  ['diff', ['-r', '.', 'lnk']],
  ['sort', ['lnk/secret.txt']],
  ['md5sum', ['lnk/secret.txt']],
  ['base64', ['lnk/secret.txt']],
  ['xxd', ['lnk/secret.txt']],
  ['sed', ['-n', 'p', 'lnk/secret.txt']],
  ['awk', ['{ print }', 'lnk/secret.txt']],
  ['stat', ['-L', 'lnk']],
  ['file', ['-L', 'lnk']],
  ['readlink', ['-f', 'lnk']],
  ['touch', ['lnk/new.txt']],
  ['cp', ['f.txt', 'lnk/']],
  ['mv', ['f.txt', 'lnk/moved.txt']],
  ['tee', ['lnk/tee.txt']],
  ['mkdir', ['lnk/newdir']],
  ['rm', ['-rf', 'lnk/']],
  ['truncate', ['-s', '0', 'lnk/secret.txt']],
  ['shred', ['lnk/secret.txt']],
  ['sqlite3', ['lnk/db.sqlite', 'select 1']],
];

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  beforeEach(() => {
    a = makeArena(mode);
    a.put('f.txt', 'inside\n');
  });
  afterEach(() => a.finish());

  const noOutwardLinks = () => {
    const walk = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) return walk(full);
        if (!e.isSymbolicLink()) return [];
        const dest = path.resolve(dir, fs.readlinkSync(full));
        return dest === a.zone || dest.startsWith(`${a.zone}/`) ? [] : [path.relative(a.zone, full)];
      });
    expect(walk(a.zone), 'links leading outside the zone were left behind').toEqual([]);
  };

  describe('cp -s and cp -l are refused', () => {
    it.each([[['-s', 'f.txt', 'lnk']], [['--symbolic-link', 'f.txt', 'lnk']], [['-rs', '.', 'mirror']], [['--sym', 'f.txt', 'l2']], [['-l', 'f.txt', 'hard']], [['-al', '.', 'h2']], [['--link', 'f.txt', 'h3']]])('cp %j', async (args) => {
      expectRefused(await a.exec({ zone: 'storage', cmd: 'cp', args }), 'ARGUMENT_FORBIDDEN');
      expect(fs.existsSync(path.join(a.zone, 'lnk'))).toBe(false);
    });
  });

  describe.each([
    ['absolute link to the canary folder', (x: Arena) => x.outside],
    ['relative link climbing to the canary folder', (x: Arena) => x.rel(x.outside)],
    ['link to /', () => '/'],
    ["link to another user's zone", (x: Arena) => path.join(path.dirname(path.dirname(path.dirname(x.zone))), 'bob', 'Storage', 'data')],
  ])('archive with %s', (_name, target) => {
    it('tar: the link member is not written through, and no outward link is left', async () => {
      a.put('evil.tar', evilTar(target(a)));
      const r = await a.exec({ zone: 'storage', cmd: 'tar', args: ['-xf', 'evil.tar'] });
      expectOk(r);
      expect(fs.existsSync(path.join(a.outside, 'pwn.txt'))).toBe(false);
      noOutwardLinks();
      for (const [cmd, args] of READS) expectRefusedOrContained(await a.exec({ zone: 'storage', cmd, args }));
      noOutwardLinks();
    });

    it('tar (old style, verbose): same', async () => {
      a.put('evil.tar', evilTar(target(a)));
      expectOk(await a.exec({ zone: 'storage', cmd: 'tar', args: ['xvf', 'evil.tar'] }));
      noOutwardLinks();
      expectRefusedOrContained(await a.exec({ zone: 'storage', cmd: 'cat', args: ['lnk/secret.txt'] }));
    });

    it('unzip of a zip made with --symlinks: same', async () => {
      a.put('evil.zip', evilZip(target(a)));
      const r = await a.exec({ zone: 'storage', cmd: 'unzip', args: ['-o', 'evil.zip'] });
      expectOk(r);
      expect(fs.existsSync(path.join(a.outside, 'pwn.txt'))).toBe(false);
      noOutwardLinks();
      for (const [cmd, args] of READS) expectRefusedOrContained(await a.exec({ zone: 'storage', cmd, args }));
      noOutwardLinks();
    });
  });

  it('a relative link that is inward where it is extracted but outward once moved or copied to the root is removed', async () => {
    a.put('inward.tar', inwardTar());
    expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-xf', 'inward.tar'] }));
    expect(fs.readlinkSync(path.join(a.zone, 'a', 'rel'))).toBe('../above-secret.txt'); // inward (dangling): kept
    expectOk(await a.exec({ zone: 'storage', cmd: 'cp', args: ['-P', 'a/rel', 'copied'] }));
    expectOk(await a.exec({ zone: 'storage', cmd: 'cp', args: ['-a', 'a', 'b'] }));
    expectOk(await a.exec({ zone: 'storage', cmd: 'mv', args: ['a/rel', 'moved'] }));
    noOutwardLinks();
    for (const name of ['copied', 'moved']) {
      expect(fs.lstatSync(path.join(a.zone, name), { throwIfNoEntry: false })).toBeUndefined();
      expectRefusedOrContained(await a.exec({ zone: 'storage', cmd: 'cat', args: [name] }));
    }
    expect(fs.readlinkSync(path.join(a.zone, 'b', 'rel'))).toBe('../above-secret.txt');
  });

  describe('links planted on disk (as if one got in): nothing reads through them', () => {
    beforeEach(() => {
      fs.symlinkSync(a.outside, path.join(a.zone, 'lnk'));
      fs.symlinkSync(path.join(a.outside, 'secret.txt'), path.join(a.zone, 'lnkfile'));
      fs.mkdirSync(path.join(a.zone, 'sub'));
      fs.symlinkSync('../../above-secret.txt', path.join(a.zone, 'sub', 'up'));
    });

    it.each(READS)('%s %j', async (cmd, args) => {
      const r = await a.exec({ zone: 'storage', cmd, args });
      expectRefusedOrContained(r);
      if (r.success) expect(JSON.stringify(r)).not.toContain(SECRET);
    });

    it.each([['cat', ['lnkfile']], ['cat', ['sub/up']], ['head', ['lnk/secret.txt']], ['grep', ['x', 'lnk/dir/inner.txt']]] as [string, string[]][])('naming a link that leads out is refused: %s %j', async (cmd, args) => {
      const r = await a.exec({ zone: 'storage', cmd, args });
      expectRefused(r, 'PATH_ESCAPE');
      expect(r.error?.message).toContain('symbolic link');
    });

    it('extracting into a linked folder writes nothing outside', async () => {
      const dir = build('into', (d) => {
        fs.mkdirSync(path.join(d, 'lnk'));
        fs.writeFileSync(path.join(d, 'lnk', 'pwn.txt'), 'PWNED\n');
        sh(d, 'tar', ['cf', 'into.tar', 'lnk/pwn.txt']);
        sh(d, 'zip', ['-q', 'into.zip', 'lnk/pwn.txt']);
      });
      a.put('into.tar', fs.readFileSync(path.join(dir, 'into.tar')));
      a.put('into.zip', fs.readFileSync(path.join(dir, 'into.zip')));
      await a.exec({ zone: 'storage', cmd: 'tar', args: ['-xf', 'into.tar'] });
      await a.exec({ zone: 'storage', cmd: 'unzip', args: ['-o', 'into.zip'] });
      expect(fs.existsSync(path.join(a.outside, 'lnk'))).toBe(false);
      expect(fs.existsSync(path.join(a.outside, 'pwn.txt'))).toBe(false);
    });
  });
});
