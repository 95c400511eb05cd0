/**
 * Text editing for shed_patch_text, as pure functions over strings.
 *
 * The newline rule (the Python original merged lines when content lacked a final newline):
 * line-based positions (start, end, before, after, replace by line) treat `content` as a block of
 * whole lines, and a missing final newline is added, in the file's own line-ending style. Replacing
 * a pattern substitutes exactly the matched text with `content`, literally (no $1 or \1 templates).
 * Overwrite is handled by the caller and writes `content` exactly as given.
 *
 * Patterns are the model's (see regex.ts): they run on a linear-time engine, and the caller runs a
 * patch that uses one on a worker thread with a deadline (`runTextPatch`), never on the event loop.
 */
import { shedError, showValue } from '../errors.js';
import { compileModelPattern, escapeRegExp, type ModelPattern } from './regex.js';

export type Position = 'start' | 'end' | 'before' | 'after' | 'replace';

export interface TextPatch {
  position: Position;
  line?: number;
  endLine?: number;
  pattern?: ModelPattern;
  matchAll: boolean;
}

export interface PatchOutcome {
  text: string;
  linesAffected: number;
  /** Where the change happened, for the response message. */
  where: string;
  matches?: number;
}

/** Splits into lines that keep their line ending; a final line without one is kept as is. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

export function detectEol(text: string): '\n' | '\r\n' {
  const first = text.indexOf('\n');
  return first > 0 && text[first - 1] === '\r' ? '\r\n' : '\n';
}

function asBlock(content: string, eol: string): string[] {
  if (content === '') return [];
  return splitLines(content.endsWith('\n') ? content : content + eol);
}

function terminate(lines: string[], index: number, eol: string): void {
  const line = lines[index];
  if (line !== undefined && !line.endsWith('\n')) lines[index] = line + eol;
}

export function applyTextPatch(original: string, content: string, patch: TextPatch): PatchOutcome {
  const eol = detectEol(original);
  const lines = splitLines(original);
  const block = asBlock(content, eol);
  const { position } = patch;

  if (position === 'start' || position === 'end') {
    if (position === 'end') terminate(lines, lines.length - 1, eol);
    const out = position === 'start' ? [...block, ...lines] : [...lines, ...block];
    return { text: out.join(''), linesAffected: block.length, where: position === 'start' ? 'at the start' : 'at the end' };
  }

  if (patch.pattern !== undefined && patch.line === undefined) {
    return position === 'replace' ? replacePattern(original, content, patch.pattern, patch.matchAll) : insertAtPattern(lines, block, patch, eol);
  }

  const line = patch.line!;
  const count = lines.length;
  const limit = position === 'before' ? count + 1 : count;
  if (line > limit) {
    throw shedError('INVALID_PARAMETER', `'line' ${line} is beyond the file, which has ${count} line${count === 1 ? '' : 's'} (largest allowed here: ${limit}).`, {
      details: { parameter: 'line', received: line, total_lines: count },
      hint: count === 0 ? 'The file is empty: use position="end" to add lines.' : `Use a line between 1 and ${limit}, or position="end" to append.`,
    });
  }
  if (position === 'before') {
    if (line === count + 1) terminate(lines, count - 1, eol);
    lines.splice(line - 1, 0, ...block);
    return { text: lines.join(''), linesAffected: block.length, where: `before line ${line}` };
  }
  if (position === 'after') {
    terminate(lines, line - 1, eol);
    lines.splice(line, 0, ...block);
    return { text: lines.join(''), linesAffected: block.length, where: `after line ${line}` };
  }
  // replace lines line..endLine (clamped to the file)
  const last = Math.min(patch.endLine ?? line, count);
  const replacesEnd = last === count && !lines[count - 1]!.endsWith('\n');
  if (replacesEnd && block.length > 0) {
    // Keep the file's "no final newline" when its last line is replaced.
    block[block.length - 1] = block[block.length - 1]!.replace(/\r?\n$/, '');
  }
  lines.splice(line - 1, last - line + 1, ...block);
  const range = last === line ? `line ${line}` : `lines ${line}-${last}`;
  return { text: lines.join(''), linesAffected: last - line + 1, where: `replaced ${range}` };
}

function insertAtPattern(lines: string[], block: string[], patch: TextPatch, eol: string): PatchOutcome {
  const re = compileModelPattern(patch.pattern!);
  const hits: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (re.test(lines[i]!.replace(/\r?\n$/, ''))) {
      hits.push(i);
      if (!patch.matchAll) break;
    }
  }
  if (hits.length === 0) throw patternNotFound(patch.pattern!, lines.join(''));
  // Insert from the bottom up so earlier indexes stay valid.
  for (const i of [...hits].reverse()) {
    if (patch.position === 'after') {
      terminate(lines, i, eol);
      lines.splice(i + 1, 0, ...block);
    } else {
      lines.splice(i, 0, ...block);
    }
  }
  const where = `${patch.position} ${hits.length === 1 ? `line ${hits[0]! + 1}` : `${hits.length} matching lines`}`;
  return { text: lines.join(''), linesAffected: block.length * hits.length, where, matches: hits.length };
}

/**
 * A file whose every line ends in CRLF is matched as LF text (RE2's multi-line `$` only stops
 * before \n, JavaScript's before \r too), then written back with CRLF; a pattern that names \r
 * itself sees the file as it is.
 */
function replacePattern(original: string, content: string, pattern: ModelPattern, matchAll: boolean): PatchOutcome {
  const crlf = allCrlf(original) && !/\\r|\r/.test(pattern.text);
  const text = crlf ? original.replace(/\r\n/g, '\n') : original;
  const literal = crlf ? content.replace(/\r\n/g, '\n') : content;
  const matcher = compileModelPattern(pattern).matcher(text);
  let matches = 0;
  const replacer = () => {
    matches++;
    return literal; // literally: no $1 or \\1 templates
  };
  const replaced = matchAll ? matcher.replaceAll(replacer) : matcher.replaceFirst(replacer);
  if (matches === 0) throw patternNotFound(pattern, original);
  return { text: crlf ? replaced.replace(/\n/g, '\r\n') : replaced, linesAffected: matches, where: `replaced ${matches} match${matches === 1 ? '' : 'es'}`, matches };
}

function allCrlf(text: string): boolean {
  let at = text.indexOf('\n');
  if (at <= 0) return false;
  for (; at !== -1; at = text.indexOf('\n', at + 1)) if (text[at - 1] !== '\r') return false;
  return true;
}

function patternNotFound(pattern: ModelPattern, text: string): Error {
  const literal = pattern.text;
  const escaped = escapeRegExp(literal);
  const looksLiteral = escaped !== literal && text.includes(literal);
  return shedError('PATTERN_NOT_FOUND', `The pattern ${showValue(literal)} matches nothing in the file.${looksLiteral ? ' The text occurs literally, but the pattern is a regular expression and its special characters change its meaning.' : ''}`, {
    details: { parameter: 'pattern', received: literal, flags: pattern.flags },
    hint: looksLiteral
      ? `Escape the special characters: pattern=${JSON.stringify(escaped)}`
      : 'The pattern is a regular expression (JavaScript syntax, run by a linear-time engine). Check spelling and case (regex_flags="i" ignores case), or read the file first with shed_read.',
  });
}
