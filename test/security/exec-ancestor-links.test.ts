/**
 * A symbolic link to its own folder or an ancestor (`a -> .`, `s1/a -> ..`,
 * an absolute link to the zone root) defeats `..` counted on the text: the kernel resolves each
 * `a` to the ancestor, so every `a/..` pair climbs one level above it. Path arguments and named
 * path parameters must be judged the way the kernel resolves them (PATH_ESCAPE, in both modes),
 * and no such link may be left in a zone by the post-command sweep (tar, unzip, mv of a link).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { commitZone, gitCommand } from '../../src/core/services/vcs/index.js';
import { ALICE, put, tempZone } from '../vcs/helpers.js';
import { expectOk, expectRefused, makeArena, MODES, type Arena } from './exec-harness.js';

/**
 * A link `a` at `chain/a` whose target resolves to the ancestor `depth` components below the root.
 * `target` is its text (relative, or 'ZONE' for the zone root's absolute path).
 */
interface LinkCase {
  name: string;
  chain: string[];
  target: string;
  depth: number;
}

const CASES: LinkCase[] = [
  { name: 'depth 1: a -> .', chain: [], target: '.', depth: 0 },
  { name: 'depth 1: a -> <zone root, absolute>', chain: [], target: 'ZONE', depth: 0 },
  { name: 'depth 2: s1/a -> ..', chain: ['s1'], target: '..', depth: 0 },
  { name: 'depth 2: s1/a -> .', chain: ['s1'], target: '.', depth: 1 },
  { name: 'depth 3: s1/s2/a -> ../..', chain: ['s1', 's2'], target: '../..', depth: 0 },
  { name: 'depth 3: s1/s2/a -> ..', chain: ['s1', 's2'], target: '..', depth: 1 },
  { name: 'depth 4: s1/s2/s3/a -> ../../..', chain: ['s1', 's2', 's3'], target: '../../..', depth: 0 },
  { name: 'depth 4: s1/s2/s3/a -> ./..', chain: ['s1', 's2', 's3'], target: './..', depth: 2 },
  { name: 'depth 4: s1/s2/s3/a -> <zone root, absolute>', chain: ['s1', 's2', 's3'], target: 'ZONE', depth: 0 },
];

/** The zone is users/alice/Storage/data: three levels below users/, where bob lives. */
const ZONE_DEPTH = 3;

function plant(root: string, c: LinkCase): void {
  fs.mkdirSync(path.join(root, ...c.chain), { recursive: true });
  fs.symlinkSync(c.target === 'ZONE' ? root : c.target, path.join(root, ...c.chain, 'a'));
}

/**
 * A path whose text never climbs above the root (`..` counted on the text), but which the kernel
 * resolves to users/<tail>: enough trips through the link to pay for the `..` that follow.
 */
function climbing(c: LinkCase, tail: string): string {
  const first = [...c.chain, 'a'];
  const again = [...c.chain.slice(c.depth), 'a'];
  const ups = c.depth + ZONE_DEPTH;
  const parts = [...first];
  while (parts.length < ups) parts.push(...again);
  return [...parts, ...Array<string>(ups).fill('..'), tail].join('/');
}

const BOB_DIR = 'bob/Storage/data';
const BOB_FILE = `${BOB_DIR}/bob-secret.txt`;
const PWN = `${BOB_DIR}/pwn.txt`;

/** Every way of reaching the other user's zone through the climbing path. */
const ATTACKS: [string, (c: LinkCase) => Record<string, unknown>][] = [
  ['cat FILE', (c) => ({ cmd: 'cat', args: [climbing(c, BOB_FILE)] })],
  ['cp FILE here', (c) => ({ cmd: 'cp', args: [climbing(c, BOB_FILE), 'stolen.txt'] })],
  ['cp here FILE', (c) => ({ cmd: 'cp', args: ['f.txt', climbing(c, PWN)] })],
  ['mv here FILE', (c) => ({ cmd: 'mv', args: ['f.txt', climbing(c, PWN)] })],
  ['grep -r DIR', (c) => ({ cmd: 'grep', args: ['-r', 'KANARIE', climbing(c, BOB_DIR)] })],
  ['find DIR', (c) => ({ cmd: 'find', args: [climbing(c, BOB_DIR)] })],
  ['tar -cf x.tar DIR', (c) => ({ cmd: 'tar', args: ['-cf', 'x.tar', climbing(c, BOB_DIR)] })],
  ['tar -C DIR (attached value)', (c) => ({ cmd: 'tar', args: [`--directory=${climbing(c, BOB_DIR)}`, '-cf', 'x.tar', '.'] })],
  ['ls DIR', (c) => ({ cmd: 'ls', args: ['-la', climbing(c, BOB_DIR)] })],
  ['sort -o FILE (option value)', (c) => ({ cmd: 'sort', args: [`-o${climbing(c, PWN)}`, 'f.txt'] })],
  ['stdout_file=FILE (named parameter)', (c) => ({ cmd: 'echo', args: ['PWNED'], stdout_file: climbing(c, PWN) })],
];

let workshop: string;
beforeAll(() => {
  workshop = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-anc-'));
});
afterAll(() => fs.rmSync(workshop, { recursive: true, force: true }));

/** A tar (made by the real tar) holding `chain/a` as a link with text `target`, and a file beside it. */
function linkTar(chain: string[], target: string): Buffer {
  const dir = fs.mkdtempSync(path.join(workshop, 'tar-'));
  fs.mkdirSync(path.join(dir, 'top', ...chain), { recursive: true });
  fs.writeFileSync(path.join(dir, 'top', 'keep.txt'), 'kept\n');
  fs.symlinkSync(target, path.join(dir, 'top', ...chain, 'a'));
  execFileSync('tar', ['-cf', 'links.tar', '-C', 'top', '.'], { cwd: dir });
  return fs.readFileSync(path.join(dir, 'links.tar'));
}

function linksIn(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isSymbolicLink()) out.push(path.relative(root, full));
      else if (e.isDirectory() && e.name !== '.git') walk(full);
    }
  };
  walk(root);
  return out.sort();
}

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  beforeEach(() => {
    a = makeArena(mode);
    a.put('f.txt', 'inside\n');
  });
  afterEach(() => a.finish());

  describe.each(CASES)('planted link, $name', (c) => {
    beforeEach(() => plant(a.zone, c));

    it.each(ATTACKS)('%s through it is refused (PATH_ESCAPE)', async (_name, attack) => {
      const r = await a.exec({ zone: 'storage', ...attack(c) });
      expectRefused(r, 'PATH_ESCAPE');
      expect(fs.existsSync(path.join(a.s.base, 'users', PWN))).toBe(false);
    });

    it('shed_read and shed_create_file with the same path are refused too (the named-parameter resolver walks the same way)', async () => {
      expectRefused(await a.call('shed_read', { zone: 'storage', path: climbing(c, BOB_FILE) }), 'PATH_ESCAPE');
      expectRefused(await a.call('shed_create_file', { zone: 'storage', path: climbing(c, PWN), content: 'PWNED' }), 'PATH_ESCAPE');
      expect(fs.existsSync(path.join(a.s.base, 'users', PWN))).toBe(false);
    });
  });

  it('path="a/a/../../x" with a -> . means what the kernel makes of it: two levels above the root, refused', async () => {
    fs.symlinkSync('.', path.join(a.zone, 'a'));
    // The kernel's reading lands on alice/Storage/above-secret.txt, outside the zone.
    expectRefused(await a.call('shed_read', { zone: 'storage', path: 'a/a/../../above-secret.txt' }), 'PATH_ESCAPE');
    expectRefused(await a.exec({ zone: 'storage', cmd: 'cat', args: ['a/a/../../above-secret.txt'] }), 'PATH_ESCAPE');
    // Inside the zone, links are still followed as the kernel does.
    a.put('sub/x.txt', 'deep\n');
    fs.symlinkSync('sub', path.join(a.zone, 'toSub'));
    const read = expectOk(await a.call('shed_read', { zone: 'storage', path: 'toSub/../f.txt' }));
    expect(JSON.stringify(read)).toContain('inside');
  });

  it.each([
    ['diff', ['--from-file=lnk', 'f.txt']],
    ['diff', ['--from-file=a', 'f.txt']],
    ['cmp', ['-ilnk', 'f.txt']],
  ] as [string, string[]][])('a plain word attached to an option is checked when it names a link: %s %j', async (cmd, args) => {
    fs.symlinkSync(a.outside, path.join(a.zone, 'lnk'));
    fs.symlinkSync('.', path.join(a.zone, 'a'));
    const r = await a.exec({ zone: 'storage', cmd, args });
    if (args[0]!.includes('=a')) expect(r.error?.code).not.toBe('PATH_ESCAPE'); // a -> . leads nowhere outside by itself
    else expectRefused(r, 'PATH_ESCAPE');
  });

  describe('Documents: a link to an ancestor does not reach the history (it is beside the zone, not in it)', () => {
    beforeEach(async () => {
      expectOk(await a.call('shed_create_file', { zone: 'documents', path: 'f.txt', content: 'doc\n' }));
    });
    const docs = () => path.join(a.s.base, 'users', 'alice', 'Documents', 'data');
    const repo = () => path.join(a.s.base, 'users', 'alice', 'Documents', 'git');

    it.each([
      ['a -> .', [], '.', 'a/../git/HEAD'],
      ['s1/a -> ..', ['s1'], '..', 's1/a/../git/HEAD'],
      ['s1/s2/a -> ../..', ['s1', 's2'], '../..', 's1/s2/a/../git/HEAD'],
      ['s1/s2/s3/a -> ../../..', ['s1', 's2', 's3'], '../../..', 's1/s2/s3/a/../git/HEAD'],
    ] as [string, string[], string, string][])('%s: cp f.txt %s is refused and the history is unchanged', async (_n, chain, target, head) => {
      fs.mkdirSync(path.join(docs(), ...chain), { recursive: true });
      fs.symlinkSync(target, path.join(docs(), ...chain, 'a'));
      const before = fs.readFileSync(path.join(repo(), 'HEAD'), 'utf8');
      const ref = fs.readFileSync(path.join(repo(), 'refs', 'heads', 'main'), 'utf8');
      for (const args of [['f.txt', head], ['-f', 'f.txt', head]]) expectRefused(await a.exec({ zone: 'documents', cmd: 'cp', args }), 'PATH_ESCAPE');
      expectRefused(await a.exec({ zone: 'documents', cmd: 'tee', args: [head.replace('HEAD', 'config')] }), 'PATH_ESCAPE');
      expectRefused(await a.exec({ zone: 'documents', cmd: 'rm', args: ['-rf', head.replace('/HEAD', '')] }), 'PATH_ESCAPE');
      expect(fs.readFileSync(path.join(repo(), 'HEAD'), 'utf8')).toBe(before);
      expect(fs.readFileSync(path.join(repo(), 'refs', 'heads', 'main'), 'utf8')).toBe(ref);
      expect(fs.existsSync(path.join(repo(), 'config'))).toBe(true);
    });
  });

  describe('no link to itself or an ancestor is left in the zone', () => {
    it.each([
      [[], '.'],
      [[], 'a'],
      [['s1'], '..'],
      [['s1'], '.'],
      [['s1', 's2'], '../..'],
      [['s1', 's2'], '../../s1'],
      [['s1', 's2', 's3'], '../../..'],
      [['s1', 's2', 's3'], '../../../s1/s2'],
    ] as [string[], string][])('tar -xf of %j/a -> %s: the link is removed, the rest extracted', async (chain, target) => {
      a.put('links.tar', linkTar(chain, target));
      expectOk(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-xf', 'links.tar'] }));
      expect(fs.readFileSync(path.join(a.zone, 'keep.txt'), 'utf8')).toBe('kept\n');
      expect(linksIn(a.zone)).toEqual([]);
    });

    it('an absolute link to the zone root (tar member) is removed', async () => {
      a.put('links.tar', linkTar(['s1'], a.zone));
      expectOk(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-xf', 'links.tar'] }));
      expect(linksIn(a.zone)).toEqual([]);
    });

    it('unzip of a zip holding a -> .. in a subfolder: removed', async () => {
      const dir = fs.mkdtempSync(path.join(workshop, 'zip-'));
      fs.mkdirSync(path.join(dir, 's1'));
      fs.symlinkSync('..', path.join(dir, 's1', 'a'));
      execFileSync('zip', ['-q', '--symlinks', '-r', 'l.zip', 's1'], { cwd: dir });
      a.put('l.zip', fs.readFileSync(path.join(dir, 'l.zip')));
      expectOk(await a.exec({ zone: 'storage', cmd: 'unzip', args: ['-o', 'l.zip'] }));
      expect(linksIn(a.zone)).toEqual([]);
    });

    it('mv of a harmless link to where it points at its own folder: the sweep removes it', async () => {
      fs.mkdirSync(path.join(a.zone, 'sub'));
      fs.mkdirSync(path.join(a.zone, 'd'));
      fs.symlinkSync('../sub', path.join(a.zone, 'd', 'up'));
      expectOk(await a.exec({ zone: 'storage', cmd: 'mv', args: ['d/up', 'sub/up'] }));
      expect(linksIn(a.zone)).toEqual([]);
    });

    it('a harmless inward link is kept', async () => {
      a.put('links.tar', linkTar(['s1'], '../keep.txt'));
      expectOk(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-xf', 'links.tar'] }));
      expect(linksIn(a.zone)).toEqual(['s1/a']);
    });
  });
});

describe('git restore of a link blob (in-process history, mode-independent)', () => {
  it.each(['.', '..', '../..', 'sub'])('a link sub/x -> %s from history is refused if it points at its folder or an ancestor', async (target) => {
    const z = tempZone();
    try {
      put(z.root, 'sub/f.txt', 'f\n');
      fs.symlinkSync(target, path.join(z.root, 'sub', 'x'));
      await commitZone(z, [''], ALICE, 'with link');
      fs.rmSync(path.join(z.root, 'sub', 'x'));
      await commitZone(z, [''], ALICE, 'link gone');
      const out = await gitCommand(z, ['restore', '--source=HEAD~1', '--', 'sub/x'], ALICE).catch((e: unknown) => e);
      // '..' and '../..' lead to ancestors (or out); '.' is its own folder; 'sub' from sub/ is a missing sub/sub: harmless.
      if (target === 'sub') expect(fs.readlinkSync(path.join(z.root, 'sub', 'x'))).toBe('sub');
      else {
        expect((out as { code?: string }).code ?? JSON.stringify(out)).toBe('PATH_ESCAPE');
        expect(fs.lstatSync(path.join(z.root, 'sub', 'x'), { throwIfNoEntry: false })).toBeUndefined();
      }
    } finally {
      z.cleanup();
    }
  });
});
