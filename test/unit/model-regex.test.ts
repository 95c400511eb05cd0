/**
 * The model's regular expressions (shed_patch_text pattern) run on a linear-time engine (RE2):
 * catastrophic patterns finish at once, JavaScript meanings are kept where RE2's differ, and what
 * RE2 cannot do (backreferences, lookarounds) is refused with an error that teaches.
 */
import { describe, expect, it } from 'vitest';
import type { ShedError } from '../../src/core/base/errors.js';
import { applyTextPatch, type TextPatch } from '../../src/core/base/text/patch.js';
import { compileModelPattern, translatePattern } from '../../src/core/base/text/regex.js';

const pat = (s: string, f = '') => translatePattern(s, f).pattern;
const replace = (text: string, content: string, pattern: string, flags = '', matchAll = true) =>
  applyTextPatch(text, content, { position: 'replace', pattern: pat(pattern, flags), matchAll } satisfies TextPatch).text;
const refusal = (fn: () => unknown): ShedError => {
  try {
    fn();
  } catch (err) {
    return err as ShedError;
  }
  throw new Error('expected a refusal');
};

describe('catastrophic patterns take linear time', () => {
  it.each([
    ['^(a+)+$', `${'a'.repeat(27)}!`],
    ['^(a|a)*$', `${'a'.repeat(40)}!`],
    ['^(a|aa)+$', `${'a'.repeat(60)}!`],
    ['(x+x+)+y', 'x'.repeat(5000)],
    ['^(\\w+\\s?)*$', `${'word '.repeat(2000)}!`],
    ['(.*a){20}', 'a'.repeat(19) + 'b'.repeat(10_000)],
  ])('%s', (pattern, input) => {
    const t0 = performance.now();
    expect(compileModelPattern(pat(pattern)).test(input)).toBe(false);
    // Backtracking engines take seconds to centuries on these; RE2 takes milliseconds.
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

describe('JavaScript meanings are kept', () => {
  it('. stops at \\r and \\n unless flag s', () => {
    expect(replace('v = 1\r\nw = 2\r\n', 'v = 9', 'v = .*', '', false)).toBe('v = 9\r\nw = 2\r\n');
    expect(refusal(() => replace('a\rb', 'X', 'a.b')).code).toBe('PATTERN_NOT_FOUND');
    expect(replace('a\rb', 'X', 'a.b', 's')).toBe('X');
  });
  it('multi-line $ stops before CRLF as in JavaScript', () => {
    expect(replace('x=1\r\ny=2\r\n', 'x=3', '^x=\\d$', 'm')).toBe('x=3\r\ny=2\r\n');
    expect(replace('x=1\r\ny=2\r\n', 'Z', '\\d$', 'm')).toBe('x=Z\r\ny=Z\r\n');
    // A pattern that names \r sees the file as it is.
    expect(replace('x=1\r\ny=2\r\n', ';', '\\r\\n')).toBe('x=1;y=2;');
  });
  it('\\s includes no-break spaces, \\S excludes them', () => {
    expect(replace('a\u00a0b c', '_', '\\s')).toBe('a_b_c');
    expect(replace('a\u00a0b', '_', '\\S')).toBe('_\u00a0_');
    expect(replace('a\u00a0b,c', '_', '[\\s,]')).toBe('a_b_c');
  });
  it('[] matches nothing and [^] anything', () => {
    expect(replace('a\nb', 'X', 'a[^]b')).toBe('X');
    expect(() => replace('ab', 'X', 'a[]b')).toThrow();
  });
  it('Python habits: (?P<name>), a leading (?i), (?<name>) groups, \\u escapes, slashes', () => {
    expect(replace('Hello World', 'X', '(?i)hello')).toBe('X World');
    expect(replace('2024-05', 'D', '(?P<y>\\d{4})-(?<m>\\d{2})')).toBe('D');
    expect(replace('A/B', 'x', '\\u0041\\/B')).toBe('x');
    expect(replace('a/b', 'x', 'a/b')).toBe('x');
  });
  it('the replacement is literal', () => {
    expect(replace('abc', '$1 $& \\1', '(b)')).toBe('a$1 $& \\1c');
  });
});

describe('what RE2 cannot do is refused with an error that teaches', () => {
  it.each([
    ['(a)\\1', 'backreference'],
    ['(?<q>a)\\k<q>', 'backreference'],
    ['(?P<n>a)(?P=n)', 'backreference'],
    ['foo(?= bar)', 'lookahead'],
    ['foo(?! bar)', 'lookahead'],
    ['(?<=\\$)\\d+', 'lookbehind'],
    ['(?<!x)y', 'lookbehind'],
  ])('%s', (pattern, what) => {
    const err = refusal(() => translatePattern(pattern, ''));
    expect(err.code).toBe('INVALID_PARAMETER');
    expect(err.message).toContain(what);
    expect(err.message).toContain('linear-time');
    expect(err.hint).toMatch(/pattern=/);
  });
  it('huge patterns and RE2 syntax errors are refused, naming the parameter', () => {
    expect(refusal(() => translatePattern('a'.repeat(3000), '')).message).toContain('at most 2000');
    expect(refusal(() => translatePattern('(unclosed', '')).details).toMatchObject({ parameter: 'pattern' });
    expect(refusal(() => translatePattern('a{5000}', '')).code).toBe('INVALID_PARAMETER');
  });
});
