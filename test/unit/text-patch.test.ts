import { describe, expect, it } from 'vitest';
import { applyTextPatch, splitLines, type TextPatch } from '../../src/core/base/text/patch.js';
import { compileModelPattern, translatePattern as compilePattern } from '../../src/core/base/text/regex.js';
import { ShedError } from '../../src/core/base/errors.js';

const p = (patch: Partial<TextPatch> & Pick<TextPatch, 'position'>): TextPatch => ({ matchAll: false, ...patch });
const apply = (text: string, content: string, patch: TextPatch) => applyTextPatch(text, content, patch).text;
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as ShedError).code;
  }
  return 'no error';
};

describe('splitLines', () => {
  it('keeps line endings and a last unterminated line', () => {
    expect(splitLines('a\nb\r\nc')).toEqual(['a\n', 'b\r\n', 'c']);
    expect(splitLines('')).toEqual([]);
    expect(splitLines('\n\n')).toEqual(['\n', '\n']);
  });
});

describe('newline rule: line positions take whole lines', () => {
  it('replace line 2 without trailing newline does not merge lines (the original produced l1\\nNEWl3)', () => {
    expect(apply('l1\nl2\nl3\n', 'NEW', p({ position: 'replace', line: 2 }))).toBe('l1\nNEW\nl3\n');
  });
  it('append to a file without final newline starts a new line', () => {
    expect(apply('a\nb', 'c', p({ position: 'end' }))).toBe('a\nb\nc\n');
  });
  it('prepend adds the newline', () => {
    expect(apply('a\n', 'top', p({ position: 'start' }))).toBe('top\na\n');
  });
  it('insert before/after a line', () => {
    expect(apply('a\nb\n', 'X', p({ position: 'before', line: 2 }))).toBe('a\nX\nb\n');
    expect(apply('a\nb\n', 'X', p({ position: 'after', line: 2 }))).toBe('a\nb\nX\n');
    expect(apply('a\nb', 'X', p({ position: 'after', line: 2 }))).toBe('a\nb\nX\n');
    expect(apply('a\nb', 'X', p({ position: 'before', line: 3 }))).toBe('a\nb\nX\n');
  });
  it('multi-line content keeps its own lines', () => {
    expect(apply('a\nz\n', 'b\nc\n', p({ position: 'after', line: 1 }))).toBe('a\nb\nc\nz\n');
  });
  it('uses the file line ending (CRLF files stay CRLF)', () => {
    expect(apply('a\r\nb\r\n', 'X', p({ position: 'after', line: 1 }))).toBe('a\r\nX\r\nb\r\n');
  });
  it('replace a range, clamp end_line, and empty content deletes lines', () => {
    expect(apply('1\n2\n3\n4\n', 'X', p({ position: 'replace', line: 2, endLine: 3 }))).toBe('1\nX\n4\n');
    expect(apply('1\n2\n3\n', 'X', p({ position: 'replace', line: 2, endLine: 99 }))).toBe('1\nX\n');
    expect(apply('1\n2\n3\n', '', p({ position: 'replace', line: 2 }))).toBe('1\n3\n');
  });
  it('replacing the last line keeps a missing final newline missing', () => {
    expect(apply('a\nb', 'B', p({ position: 'replace', line: 2 }))).toBe('a\nB');
  });
  it('line beyond the file is refused with the line count', () => {
    expect(code(() => apply('a\nb\n', 'X', p({ position: 'after', line: 3 })))).toBe('INVALID_PARAMETER');
    expect(code(() => apply('a\nb\n', 'X', p({ position: 'replace', line: 3 })))).toBe('INVALID_PARAMETER');
    expect(apply('a\nb\n', 'X', p({ position: 'before', line: 3 }))).toBe('a\nb\nX\n');
  });
});

describe('patterns', () => {
  const re = (s: string, f = '') => compilePattern(s, f).pattern;
  it('before/after the first matching line, or all with match_all', () => {
    expect(apply('# A\nx\n# B\n', 'new', p({ position: 'after', pattern: re('^#') }))).toBe('# A\nnew\nx\n# B\n');
    expect(apply('# A\nx\n# B\n', 'new', p({ position: 'before', pattern: re('^#'), matchAll: true }))).toBe('new\n# A\nx\nnew\n# B\n');
  });
  it('replace substitutes exactly the matched text, literally (no $1 or \\1 templates)', () => {
    expect(apply('price: 10 EUR\n', '20', p({ position: 'replace', pattern: re('\\d+') }))).toBe('price: 20 EUR\n');
    expect(apply('a-b', '$1 \\1 $&', p({ position: 'replace', pattern: re('(a)') }))).toBe('$1 \\1 $&-b');
    expect(apply('x x x', 'y', p({ position: 'replace', pattern: re('x'), matchAll: true }))).toBe('y y y');
    expect(apply('x x x', 'y', p({ position: 'replace', pattern: re('x') }))).toBe('y x x');
  });
  it('multi-line patterns with flags', () => {
    expect(apply('start\nmid\nend\n', 'S', p({ position: 'replace', pattern: re('start.*end', 's') }))).toBe('S\n');
    expect(apply('Hello\n', 'Bye', p({ position: 'replace', pattern: re('hello', 'i') }))).toBe('Bye\n');
  });
  it('no match → PATTERN_NOT_FOUND, and a literal-looking pattern gets an escaped suggestion', () => {
    try {
      apply('call print(x) here\n', 'y', p({ position: 'replace', pattern: re('print(x)') }));
      expect.unreachable();
    } catch (err) {
      expect((err as ShedError).code).toBe('PATTERN_NOT_FOUND');
      expect((err as ShedError).hint).toContain('print\\\\(x\\\\)');
    }
  });
  it('compilePattern accepts Python habits and refuses bad flags and bad regexes', () => {
    expect(compileModelPattern(re('(?P<n>a)b')).test('xab')).toBe(true);
    expect(compilePattern('(?i)abc', '').pattern.flags).toBe('i');
    expect(compileModelPattern(re('(?i)abc')).test('xABC')).toBe(true);
    expect(compilePattern('a', 'g').matchAll).toBe(true);
    expect(code(() => compilePattern('a', 'x'))).toBe('INVALID_PARAMETER');
    expect(code(() => compilePattern('(unclosed', ''))).toBe('INVALID_PARAMETER');
  });
});
