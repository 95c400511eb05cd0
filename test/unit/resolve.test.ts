/**
 * Pure unit tests of the lexical half of the path resolver: normalizeRelative and isInside.
 * The on-disk half (symbolic links, real paths) is covered by test/security/paths.test.ts.
 */
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShedError } from '../../src/core/base/errors.js';
import { isInside, isProtected, normalizeRelative } from '../../src/core/base/paths/resolve.js';

const storage = { name: 'storage', label: 'Storage' } as const;
const documents = { name: 'documents', label: 'Documents' } as const;

function norm(input: string, opts: { allowZoneInPath?: boolean; zone?: typeof storage | typeof documents } = {}): string {
  return normalizeRelative(input, opts.zone ?? storage, { param: 'path', allowZoneInPath: opts.allowZoneInPath });
}

/** The ShedError thrown by `fn`, or a test failure if it returned. */
function thrown(fn: () => unknown): ShedError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ShedError);
    return err as ShedError;
  }
  throw new Error('expected a ShedError, but the call returned');
}

describe('normalizeRelative: plain paths', () => {
  it.each([
    ['a.txt', 'a.txt'],
    ['a/b/c.txt', 'a/b/c.txt'],
    ['./a.txt', 'a.txt'],
    ['a/./b', 'a/b'],
    ['a//b///c', 'a/b/c'],
    ['a/b/', 'a/b'],
    ['', ''],
    ['.', ''],
    ['./', ''],
    ['/', ''],
    ['//', ''],
    ['a/..', ''],
    ['a/../b.txt', 'b.txt'],
    ['a/b/../../c', 'c'],
    ['a/b/../c/./d/..', 'a/c'],
    ['...', '...'], // three dots is an ordinary name
    ['..a', '..a'],
    ['a..', 'a..'],
    ['a/..b/c', 'a/..b/c'],
    ['. /x', '. /x'], // ". " is not "."
    ['..\\..\\etc', '..\\..\\etc'], // backslash is an ordinary character on POSIX
    ['%2e%2e/x', '%2e%2e/x'], // no URL decoding
  ])('%j → %j', (input, expected) => {
    expect(norm(input)).toBe(expected);
  });

  it('strips leading slashes: absolute paths stay inside the zone', () => {
    expect(norm('/etc/passwd')).toBe('etc/passwd');
    expect(norm('///etc//passwd')).toBe('etc/passwd');
    expect(norm('/tmp/../etc/shadow')).toBe('etc/shadow');
  });
});

describe('normalizeRelative: climbing above the root', () => {
  it.each(['..', '../', '../x', '../../x', 'a/../../x', 'a/b/../../../x', '../'.repeat(40) + 'etc/passwd', './..', 'a/../..', '/..', '/../etc/passwd', 'a/./../b/../..'])(
    '%j → PATH_ESCAPE naming the parameter',
    (input) => {
      const err = thrown(() => norm(input));
      expect(err.code).toBe('PATH_ESCAPE');
      expect(err.message).toContain('path');
      expect(err.details?.parameter).toBe('path');
      expect(err.hint).toMatch(/path="/);
    },
  );

  it('the error names the parameter it was given', () => {
    const err = thrown(() => normalizeRelative('../x', storage, { param: 'new_path' }));
    expect(err.message).toContain('new_path');
    expect(err.details?.parameter).toBe('new_path');
  });
});

describe('normalizeRelative: forbidden characters', () => {
  it.each([
    ['NUL', 'a\u0000b'],
    ['NUL alone', '\u0000'],
    ['NUL after a good path', 'a.txt\u0000.png'],
    ['newline', 'a\nb'],
    ['carriage return', 'a\rb'],
    ['tab', 'a\tb'],
    ['escape', 'a\u001b[31mb'],
    ['DEL', 'a\u007fb'],
    ['C1 control', 'a\u0085b'],
    ['right-to-left override', 'invoice\u202Etxt.exe'],
    ['left-to-right embedding', 'a\u202Ab'],
    ['first strong isolate', 'a\u2068b'],
  ])('%s → INVALID_PATH', (_label, input) => {
    const err = thrown(() => norm(input));
    expect(err.code).toBe('INVALID_PATH');
    expect(err.details?.parameter).toBe('path');
  });

  it('control characters are refused even inside a climb, before any other rule', () => {
    expect(thrown(() => norm('../\u0000')).code).toBe('INVALID_PATH');
  });

  it('the NUL byte is named as such', () => {
    expect(thrown(() => norm('a\u0000b')).message).toMatch(/NUL/);
  });

  it('a control character is named by its code point', () => {
    expect(thrown(() => norm('a\u001bb')).message).toContain('U+001B');
    expect(thrown(() => norm('a\u202Eb')).message).toContain('U+202E');
  });
});

describe('normalizeRelative: unicode', () => {
  it('NFD and NFC forms of é give the same relative path (NFC)', () => {
    const nfd = 'caf\u0065\u0301/r\u0065\u0301sum\u0065\u0301.txt';
    const nfc = 'caf\u00e9/r\u00e9sum\u00e9.txt';
    expect(nfd).not.toBe(nfc);
    expect(norm(nfd)).toBe(nfc);
    expect(norm(nfc)).toBe(nfc);
  });

  it('full-width solidus U+FF0F is a character, not a separator', () => {
    expect(norm('a\uFF0Fb')).toBe('a\uFF0Fb');
    expect(norm('..\uFF0F..\uFF0Fetc')).toBe('..\uFF0F..\uFF0Fetc');
  });

  it('full-width and one-dot-leader dots are names, not ..', () => {
    expect(norm('\uFF0E\uFF0E/x')).toBe('\uFF0E\uFF0E/x');
    expect(norm('\u2024\u2024/x')).toBe('\u2024\u2024/x');
  });

  it('a component of 255 bytes passes; 256 bytes is INVALID_PATH', () => {
    expect(norm('a'.repeat(255))).toBe('a'.repeat(255));
    expect(thrown(() => norm('a'.repeat(256))).code).toBe('INVALID_PATH');
    // é is two bytes in UTF-8: 128 of them are 256 bytes.
    expect(thrown(() => norm('\u00e9'.repeat(128))).code).toBe('INVALID_PATH');
  });

  it('a path over 4096 bytes is INVALID_PATH', () => {
    const long = Array.from({ length: 20 }, () => 'b'.repeat(250)).join('/');
    expect(Buffer.byteLength(long)).toBeGreaterThan(4096);
    expect(thrown(() => norm(long)).code).toBe('INVALID_PATH');
  });
});

describe('normalizeRelative: zone name as first component', () => {
  it.each(['storage/x', 'Storage/x', 'STORAGE/x', 'storage', './storage/x', '/storage/x', 'a/../storage/x'])('%j in zone storage → PATH_STARTS_WITH_ZONE', (input) => {
    const err = thrown(() => norm(input, { allowZoneInPath: false }));
    expect(err.code).toBe('PATH_STARTS_WITH_ZONE');
    expect(err.hint).toContain('allow_zone_in_path=true');
  });

  it('a caller without the allow_zone_in_path parameter (allowZoneInPath left out) gets a hint that does not name it', () => {
    const err = thrown(() => norm('storage/x'));
    expect(err.code).toBe('PATH_STARTS_WITH_ZONE');
    expect(err.hint).toBe('Use path="x".');
  });

  it('the hint gives the path without the zone name', () => {
    expect(thrown(() => norm('Storage/reports/q1.txt')).hint).toContain('path="reports/q1.txt"');
  });

  it('allow_zone_in_path=true keeps the folder', () => {
    expect(norm('storage/x', { allowZoneInPath: true })).toBe('storage/x');
    expect(norm('Storage/x', { allowZoneInPath: true })).toBe('Storage/x');
  });

  it('only the first component counts, and only the own zone name', () => {
    expect(norm('a/storage/x')).toBe('a/storage/x');
    expect(norm('documents/x')).toBe('documents/x');
    expect(norm('storage2/x')).toBe('storage2/x');
    expect(thrown(() => norm('Documents/x', { zone: documents })).code).toBe('PATH_STARTS_WITH_ZONE');
  });
});

describe('normalizeRelative: properties', () => {
  const segment = fc.oneof(
    fc.constantFrom('..', '.', '', 'a', 'b', 'é', 'e\u0301', '...', 'x y'),
    fc.string({ unit: fc.constantFrom('a', 'b', '.', '-', '_', 'é', '\u00e9') , minLength: 1, maxLength: 4 }),
  );
  const input = fc.tuple(fc.boolean(), fc.array(segment, { maxLength: 12 })).map(([lead, parts]) => (lead ? '/' : '') + parts.join('/'));

  it('the result is NFC, relative, and has no empty, . or .. components', () => {
    fc.assert(
      fc.property(input, (text) => {
        let rel: string;
        try {
          rel = norm(text);
        } catch (err) {
          expect((err as ShedError).code).toBe('PATH_ESCAPE');
          return;
        }
        expect(rel.startsWith('/')).toBe(false);
        expect(rel).toBe(rel.normalize('NFC'));
        if (rel !== '') for (const part of rel.split('/')) expect(['', '.', '..']).not.toContain(part);
      }),
      { numRuns: 2000 },
    );
  });

  it('is idempotent and agrees with path.posix.normalize when it does not climb', () => {
    fc.assert(
      fc.property(input, (text) => {
        let rel: string;
        try {
          rel = norm(text);
        } catch {
          // A climb above the root: path.posix.normalize of the relative form starts with '..'.
          const posix = path.posix.normalize(text.replace(/^\/+/, '').normalize('NFC') || '.');
          expect(posix === '..' || posix.startsWith('../')).toBe(true);
          return;
        }
        expect(norm(rel)).toBe(rel);
        const expected = path.posix.normalize(text.replace(/^\/+/, '').normalize('NFC') || '.').replace(/\/$/, '');
        expect(rel).toBe(expected === '.' ? '' : expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('isInside', () => {
  it.each([
    ['/x/data', '/x/data', true],
    ['/x/data/a', '/x/data', true],
    ['/x/data/a/b/c', '/x/data', true],
    ['/x/data2', '/x/data', false], // sibling sharing the prefix
    ['/x/data2/a', '/x/data', false],
    ['/x/data-old/a', '/x/data', false],
    ['/x/dat', '/x/data', false],
    ['/x', '/x/data', false],
    ['/', '/x/data', false],
    ['/y/data/a', '/x/data', false],
    ['/x/data/a', '/x/data/', true], // a root given with its trailing slash
    ['/x/data2', '/x/data/', false],
    ['/anything', '/', true],
  ] as const)('isInside(%j, %j) = %j', (candidate, root, expected) => {
    expect(isInside(candidate, root)).toBe(expected);
  });

  it('never accepts a path that merely starts with the root text', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]{1,8}$/), (suffix) => {
        expect(isInside(`/srv/shed/data${suffix}`, '/srv/shed/data')).toBe(false);
        expect(isInside(`/srv/shed/data/${suffix}`, '/srv/shed/data')).toBe(true);
      }),
    );
  });
});

describe('isProtected', () => {
  it('a .git folder of a versioned zone, any spelling git refuses and any depth (never versioned); nothing in an unversioned zone', () => {
    const versioned = { versioned: true };
    for (const p of ['.git', '.git/config', '.git/objects/ab/cd', 'sub/.git/config', 'a/b/.GIT', 'x/git~1/y', '.git. ', '.g\u200cit/x']) expect(isProtected(versioned, p), p).toBe(true);
    for (const p of ['.gitignore', '.git2/x', 'git/x', 'sub/.gitmodules', '']) expect(isProtected(versioned, p), p).toBe(false);
    expect(isProtected({ versioned: false }, '.git/config')).toBe(false);
  });
});
