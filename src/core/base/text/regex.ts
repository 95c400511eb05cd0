/**
 * Regular expressions written by the model, run by an engine without backtracking (re2js, a pure
 * JavaScript port of RE2): matching time is linear in the input (times the pattern's size), so a
 * pattern like `^(a+)+$` cannot take exponential time. The model writes JavaScript syntax (with
 * Python habits: `(?P<name>…)`, a leading `(?i)`); `translatePattern` turns it into RE2 syntax that
 * means the same, and refuses with a teaching error what RE2 cannot do in linear time:
 * backreferences (`\1`, `\k<name>`, `(?P=name)`) and lookarounds (`(?=`, `(?!`, `(?<=`, `(?<!`).
 *
 * JavaScript meanings kept: `.` does not match line terminators (\n, \r, U+2028, U+2029) unless
 * flag s; `\s` includes \v, no-break spaces and the other Unicode spaces. RE2's `(?m)$` matches only
 * before \n: patch.ts matches files whose every line ends in CRLF as LF text for that reason.
 *
 * The result is plain data (`ModelPattern`): it crosses to a worker thread, which compiles it.
 */
import { RE2JS } from 're2js';
import { shedError, showValue } from '../errors.js';

export interface ModelPattern {
  /** As the model wrote it (for messages and the "did you mean literally" hint). */
  text: string;
  /** RE2 syntax. */
  source: string;
  /** JavaScript-style letters among i, m, s. */
  flags: string;
}

/** Longest pattern accepted: RE2's cost grows with the pattern's size, and no edit needs more. */
export const MAX_PATTERN_CHARS = 2000;

const LINE_TERMINATORS = '\\n\\r\\x{2028}\\x{2029}';
// JavaScript's \s: ASCII whitespace, \v, no-break spaces, the BOM and the Unicode space separators.
const JS_SPACE = '\\t\\n\\v\\f\\r \\x{A0}\\x{FEFF}\\p{Zs}\\x{2028}\\x{2029}';

/**
 * Checks the model's pattern and flags and translates the pattern to RE2 syntax. Accepts Python
 * habits: `(?P<name>…)` groups and a leading `(?i)`/`(?m)`/`(?s)`; flag "g" means match_all.
 */
export function translatePattern(pattern: string, flags: string): { pattern: ModelPattern; matchAll: boolean } {
  let body = pattern;
  let wanted = flags;
  const inline = /^\(\?([ims]+)\)/.exec(body);
  if (inline) {
    wanted += inline[1];
    body = body.slice(inline[0].length);
  }
  const bad = [...wanted].filter((f) => !'imsg'.includes(f));
  if (bad.length > 0) {
    throw shedError('INVALID_PARAMETER', `'regex_flags' may only contain i (ignore case), m (multi-line ^ $), s (dot matches newline); got ${showValue(flags)}.`, {
      details: { parameter: 'regex_flags', received: flags, expected: 'letters from "ims"' },
      hint: 'Example: regex_flags="i"',
    });
  }
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw shedError('INVALID_PARAMETER', `'pattern' is ${pattern.length} characters long; at most ${MAX_PATTERN_CHARS} are accepted.`, {
      details: { parameter: 'pattern', length: pattern.length, max: MAX_PATTERN_CHARS },
      hint: 'Match a shorter, distinctive part of the text, or replace by line numbers (position="replace", line=..., end_line=...).',
    });
  }
  const unique = [...new Set(wanted.replace(/g/g, ''))].sort().join('');
  const source = RE2JS.translateRegExp(toRe2(body, pattern, unique.includes('s')));
  const out: ModelPattern = { text: pattern, source, flags: unique };
  compileModelPattern(out); // syntax errors now, with the parameter named
  return { pattern: out, matchAll: wanted.includes('g') };
}

/** JavaScript syntax to RE2 syntax, refusing what RE2 has no linear-time equivalent for. */
function toRe2(body: string, original: string, dotAll: boolean): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\') {
      const next = body[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || (next === 'k' && body[i + 2] === '<'))) throw unsupported(original, 'a backreference', `\\${next}`);
      if (next === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (next === 'S' && !inClass) out += `[^${JS_SPACE}]`;
      else out += c + next;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      // JavaScript's `[]` matches nothing and `[^]` anything; in RE2 a ']' there would be a literal.
      const empty = /^\[(\^?)\]/.exec(body.slice(i));
      if (empty) {
        out += empty[1] ? '[\\x{0}-\\x{10FFFF}]' : '[^\\x{0}-\\x{10FFFF}]';
        i += empty[0].length - 1;
        continue;
      }
      inClass = true;
      out += c;
      continue;
    }
    if (c === '(' && body[i + 1] === '?') {
      const look = /^\(\?(<?[=!])/.exec(body.slice(i));
      if (look) throw unsupported(original, look[1]!.startsWith('<') ? 'a lookbehind' : 'a lookahead', look[0]);
      if (body.startsWith('(?P=', i)) throw unsupported(original, 'a backreference', body.slice(i, body.indexOf(')', i) + 1) || '(?P=');
    }
    out += c === '.' && !dotAll ? `[^${LINE_TERMINATORS}]` : c;
  }
  return out;
}

function unsupported(pattern: string, what: string, piece: string): Error {
  return shedError('INVALID_PARAMETER', `'pattern' uses ${what} (${piece}), which is not supported: patterns run on a linear-time engine (RE2) so that no pattern can stall the server; got ${showValue(pattern)}.`, {
    details: { parameter: 'pattern', received: pattern, unsupported: piece },
    hint:
      what === 'a backreference'
        ? 'Spell the repeated text out, e.g. pattern="(ab)ab" instead of "(ab)\\1". The replacement is literal anyway (no $1).'
        : 'Include the context in the match and repeat it in content, e.g. pattern="foo bar" with content="baz bar" instead of pattern="foo(?= bar)".',
  });
}

const compiled = new Map<string, RE2JS>();

/** The engine's compiled form (cached: the same pattern is often used for several calls). */
export function compileModelPattern(p: Pick<ModelPattern, 'text' | 'source' | 'flags'>): RE2JS {
  const key = `${p.flags}\u0000${p.source}`;
  let re = compiled.get(key);
  if (re !== undefined) return re;
  let bits = 0;
  if (p.flags.includes('i')) bits |= RE2JS.CASE_INSENSITIVE;
  if (p.flags.includes('m')) bits |= RE2JS.MULTILINE;
  if (p.flags.includes('s')) bits |= RE2JS.DOTALL;
  try {
    re = RE2JS.compile(p.source, bits);
  } catch (err) {
    const why = (err as Error).message.replace(/^error parsing regexp: /, '');
    throw shedError('INVALID_PARAMETER', `'pattern' is not a valid regular expression: ${why}; got ${showValue(p.text)}.`, {
      details: { parameter: 'pattern', received: p.text },
      hint: `To match text literally, escape special characters: pattern=${JSON.stringify(escapeRegExp(p.text))}`,
    });
  }
  if (compiled.size > 64) compiled.clear();
  compiled.set(key, re);
  return re;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
