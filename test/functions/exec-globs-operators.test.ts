/**
 * shed_exec runs without a shell, so two shell habits need the policy: glob patterns in file
 * operands are expanded inside the zone as a shell would (sorted, dotfiles only for a dot pattern,
 * never outside the zone, an error when nothing matches), and a standalone shell operator (`|`,
 * `>`, `&&`...) is refused with the calls that do what was meant, instead of reaching the program
 * as a file name. Both run in every sandbox mode (they are policy, before the sandbox).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectRan, expectRefused, makeArena, MODES, type Arena } from '../security/exec-harness.js';
import { MAX_EXPANSION } from '../../src/core/services/exec/policy/globs.js';

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  beforeEach(() => {
    a = makeArena(mode);
    a.put('data/b.csv', 'b\n');
    a.put('data/a.csv', 'a\n');
    a.put('data/B.csv', 'B\n');
    a.put('data/.hidden.csv', 'hidden\n');
    a.put('data/notes.txt', 'notes\n');
    a.put('data/sub/c.csv', 'c\n');
    a.put('data/-rf.csv', 'dash\n');
    a.put('x1.log', '1\n');
    a.put('x2.log', '2\n');
    a.put('xa.log', 'a\n');
  });
  afterEach(() => a.finish());

  describe('globs', () => {
    it('ls data/*.csv lists the matches sorted as the C locale, without dotfiles', async () => {
      const d = expectRan(await a.exec({ zone: 'storage', cmd: 'ls', args: ['-1', 'data/*.csv'] }));
      expect(d.stdout).toBe('data/-rf.csv\ndata/B.csv\ndata/a.csv\ndata/b.csv\n');
      expect(d.expanded).toEqual([{ pattern: 'data/*.csv', count: 4, names: ['data/-rf.csv', 'data/B.csv', 'data/a.csv', 'data/b.csv'] }]);
    });

    it('a dot pattern matches dotfiles; ? and [...] work; names starting with - cannot become options', async () => {
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'cat', args: ['data/.h*'] })).stdout).toBe('hidden\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'cat', args: ['x?.log'] })).stdout).toBe('1\n2\na\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'cat', args: ['x[0-9].log'] })).stdout).toBe('1\n2\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'cat', args: ['x[!0-9].log'] })).stdout).toBe('a\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'cat', args: ['data/-*'] })).stdout).toBe('dash\n'); // ./data/-rf.csv is not an option of cat
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'cat', args: ['*/*/c.csv'] })).stdout).toBe('c\n');
      expect(fs.existsSync(path.join(a.zone, 'data', 'a.csv'))).toBe(true);
    });

    it('rm -- with a pattern removes what it matches and nothing else', async () => {
      expectRan(await a.exec({ zone: 'storage', cmd: 'rm', args: ['x*.log'] }));
      expect(fs.readdirSync(a.zone).filter((n) => n.endsWith('.log'))).toEqual([]);
      expect(fs.existsSync(path.join(a.zone, 'data', 'a.csv'))).toBe(true);
    });

    it('patterns are never expanded where the program reads them as patterns or text', async () => {
      const f = expectRan(await a.exec({ zone: 'storage', cmd: 'find', args: ['data', '-name', '*.csv', '-newer', 'x1.log'] }));
      expect(f.expanded).toBeUndefined();
      const g = expectRan(await a.exec({ zone: 'storage', cmd: 'grep', args: ['-r', '--include=*.csv', '-l', '^a$', 'data'] }));
      expect(g.stdout).toBe('data/a.csv\n');
      expect((await a.exec({ zone: 'storage', cmd: 'grep', args: ['-c', 'x*', 'data/notes.txt'] })).data?.expanded).toBeUndefined();
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'echo', args: ['*.log'] })).stdout).toBe('*.log\n');
      a.put('arch/m.txt', 'm\n');
      expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['-cf', 'm.tar', 'arch/*'] }));
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'tar', args: ['--wildcards', '-tf', 'm.tar', 'arch/*'] })).stdout).toBe('arch/m.txt\n');
    });

    it('a file whose name holds * is used as it is', async () => {
      a.put('odd*name.txt', 'odd\n');
      a.put('odd-other.txt', 'other\n');
      const d = expectRan(await a.exec({ zone: 'storage', cmd: 'cat', args: ['odd*name.txt'] }));
      expect(d.stdout).toBe('odd\n');
      expect(d.expanded).toBeUndefined();
    });

    it('no match: FILE_NOT_FOUND naming the pattern, with a hint', async () => {
      const r = await a.exec({ zone: 'storage', cmd: 'ls', args: ['data/*.json'] });
      expect(r.success).toBe(false);
      expect(r.error?.code).toBe('FILE_NOT_FOUND');
      expect(r.error?.message).toContain('data/*.json');
      expect(r.error?.hint).toContain('ls');
    });

    it('never outside the zone: absolute patterns, .. above the root and links leading out are refused', async () => {
      fs.symlinkSync(a.outside, path.join(a.zone, 'out-link'));
      for (const args of [[`${a.outside}/*`], ['../*'], ['../../*/data/*'], ['out-link/*'], ['data/../../*'], ['o*']]) {
        const r = await a.exec({ zone: 'storage', cmd: 'cat', args });
        expectRefused(r, ['PATH_ESCAPE', 'ARGUMENT_FORBIDDEN']);
      }
      // A walk does not descend into a link leading out: */secret.txt matches nothing through out-link.
      const r = await a.exec({ zone: 'storage', cmd: 'cat', args: ['*/secret.txt'] });
      expect(r.error?.code).toBe('FILE_NOT_FOUND');
    });

    it(`at most ${MAX_EXPANSION} names`, async () => {
      const dir = path.join(a.zone, 'many');
      fs.mkdirSync(dir);
      for (let i = 0; i <= MAX_EXPANSION; i++) fs.writeFileSync(path.join(dir, `f${i}`), '');
      const r = await a.exec({ zone: 'storage', cmd: 'ls', args: ['many/*'] });
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error?.message).toContain(String(MAX_EXPANSION));
    });

    it('read-only Uploads: a pattern that makes a reader a writer is refused (uniq IN OUT)', async () => {
      a.put(path.join(a.uploads, 'u1.txt'), 'x\n');
      a.put(path.join(a.uploads, 'u2.txt'), 'y\n');
      expectRefused(await a.exec({ zone: 'uploads', cmd: 'uniq', args: ['u*.txt'] }), 'ARGUMENT_FORBIDDEN');
      expect(expectRan(await a.exec({ zone: 'uploads', cmd: 'cat', args: ['u*.txt'] })).stdout).toBe('x\ny\n');
    });
  });

  describe('shell operators', () => {
    it('awk ... "|" sort -u: refused with the two calls that do it', async () => {
      const r = await a.exec({ zone: 'storage', cmd: 'awk', args: ['{print $1}', 'data/a.csv', '|', 'sort', '-u'] });
      expectRefused(r, 'ARGUMENT_FORBIDDEN');
      expect(r.error?.message).toContain('"|"');
      expect(r.error?.hint).toContain('stdout_file="tmp.txt"');
      expect(r.error?.hint).toContain('cmd="sort", args=["-u","tmp.txt"]');
    });

    it.each([
      ['>', 'stdout_file="out.txt"'],
      ['>>', 'stdout_file="out.txt"'],
      ['2>', 'stderr_file="out.txt"'],
      ['2>&1', 'redirect_stderr_to_stdout=true'],
      ['&&', 'one command per call'],
      [';', 'one command per call'],
      ['<', 'as an argument'],
      ['&', 'one command per call'],
    ])('cat data/a.csv %j ... is refused with a hint about %s', async (op, hint) => {
      const r = await a.exec({ zone: 'storage', cmd: 'cat', args: ['data/a.csv', op, 'out.txt'] });
      expectRefused(r, 'ARGUMENT_FORBIDDEN');
      expect(r.error?.hint?.toLowerCase()).toContain(hint.toLowerCase());
      expect(fs.existsSync(path.join(a.zone, 'out.txt'))).toBe(false);
    });

    it('echo hello ">" f.txt is a mistake too (echo would print the >)', async () => {
      expectRefused(await a.exec({ zone: 'storage', cmd: 'echo', args: ['hello', '>', 'f.txt'] }), 'ARGUMENT_FORBIDDEN');
    });

    it('where the language uses them they pass: expr, tr sets, grep patterns, option values', async () => {
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'expr', args: ['1', '|', '0'] })).stdout).toBe('1\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'expr', args: ['3', '>', '2'] })).stdout).toBe('1\n');
      a.put('p.txt', 'a|b\nc\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'grep', args: ['-F', '|', 'p.txt'] })).stdout).toBe('a|b\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'cut', args: ['-d', '|', '-f', '2', 'p.txt'] })).stdout).toBe('b\nc\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'awk', args: ['-F', '|', '{print $1}', 'p.txt'] })).stdout).toBe('a\nc\n');
      expect((await a.exec({ zone: 'storage', cmd: 'tr', args: ['|', '+'] })).success).toBe(true);
    });
  });
});
