/**
 * Glob expansion for shed_exec. There is no shell, so `ls data/*.csv` would reach ls literally;
 * the policy expands the arguments its parse identifies as file operands the way a shell would,
 * inside the zone only: component by component from the zone root, `*`, `?` and `[...]` never
 * matching a leading dot unless the pattern's component starts with one, names sorted in byte
 * order (the C locale), no `..` above the root, no absolute patterns, and never through a symbolic
 * link that leads outside the zone. Every name produced is then checked like any other path.
 * Blocked entries are not in the zone while a command runs (exec/guards/hide-blocked.ts), so a pattern
 * never stands for one, as a shell in that zone would not see one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError, showValue } from '../../../base/errors.js';
import { walkInside } from '../../../base/paths/walk.js';

/** At most this many names from one call's patterns (a shell has no limit; a command line does). */
export const MAX_EXPANSION = 10_000;
/** Folder entries read at most while expanding (a pattern like *\/*\/* over a huge tree). */
const MAX_ENTRIES_READ = 200_000;

/** Holds an unescaped *, ? or a [...] bracket expression. */
export function isGlob(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') i++;
    else if (c === '*' || c === '?') return true;
    else if (c === '[' && bracketEnd(text, i) > 0) return true;
  }
  return false;
}

/** Index of the `]` closing the bracket expression opening at `start`, or -1. */
function bracketEnd(text: string, start: number): number {
  let j = start + 1;
  if (text[j] === '!' || text[j] === '^') j++;
  if (text[j] === ']') j++;
  for (; j < text.length; j++) {
    if (text[j] === '/') return -1;
    if (text[j] === '[' && text[j + 1] === ':') {
      const close = text.indexOf(':]', j + 2);
      if (close > 0) j = close + 1;
      continue;
    }
    if (text[j] === ']') return j;
  }
  return -1;
}

const CLASSES: Record<string, string> = {
  alpha: 'A-Za-z', digit: '0-9', alnum: 'A-Za-z0-9', upper: 'A-Z', lower: 'a-z', space: ' \\t\\n\\r\\f\\v', punct: '!-\\/:-@\\[-`{-~', xdigit: '0-9A-Fa-f', blank: ' \\t', cntrl: '\\x00-\\x1f\\x7f', print: '\\x20-\\x7e', graph: '\\x21-\\x7e',
};

/** One path component's pattern as an anchored regular expression (linear: no nested quantifiers). */
function componentRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) re += escapeRe(pattern[++i]!);
    else if (c === '*') re += re.endsWith('.*') ? '' : '.*';
    else if (c === '?') re += '.';
    else if (c === '[' && bracketEnd(pattern, i) > 0) {
      const end = bracketEnd(pattern, i);
      let body = pattern.slice(i + 1, end);
      let negate = false;
      if (body.startsWith('!') || body.startsWith('^')) (negate = true), (body = body.slice(1));
      let set = '';
      for (let k = 0; k < body.length; k++) {
        if (body[k] === '[' && body[k + 1] === ':') {
          const close = body.indexOf(':]', k + 2);
          set += CLASSES[body.slice(k + 2, close)] ?? '';
          k = close + 1;
        } else if (body[k] === '-' && k > 0 && k < body.length - 1) set += '-';
        else set += escapeRe(body[k]!);
      }
      re += `[${negate ? '^' : ''}${set}]`;
      i = end;
    } else re += escapeRe(c);
  }
  return new RegExp(`^${re}$`, 's');
}

const escapeRe = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** A component without wildcards, with its backslash escapes removed. */
const unescape = (text: string) => text.replace(/\\(.)/g, '$1');

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

export interface Expansion {
  pattern: string;
  names: string[];
}

/**
 * The names `pattern` matches inside `root`, sorted; `budget` caps how many may still be produced.
 * Returns undefined when the pattern cannot be expanded inside the zone (absolute, `..` above the
 * root, through a link leading out): the caller checks it as a literal path, which refuses it.
 */
export function expandGlob(root: string, pattern: string, budget: number, hidden?: (rel: string) => boolean): string[] | undefined {
  if (path.isAbsolute(pattern)) return undefined;
  const parts = pattern.split('/');
  // `..` may not climb above the root on the text, even to come back (as for every path).
  let depth = 0;
  for (const part of parts) if ((depth += part === '..' ? -1 : part !== '' && part !== '.' ? 1 : 0) < 0) return undefined;
  let found: string[] = [''];
  let read = 0;
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k]!;
    const last = k === parts.length - 1;
    const next: string[] = [];
    for (const prefix of found) {
      const join = (name: string) => (prefix === '' ? name : prefix.endsWith('/') ? prefix + name : `${prefix}/${name}`);
      if (part === '' || !isGlob(part)) {
        // A literal component: kept as written (a trailing slash too); it must exist below a wildcard.
        const text = part === '' ? (prefix === '' ? '' : `${prefix}/`) : join(unescape(part));
        if (part !== '' && !found.includes('') && !existsInside(root, text)) continue;
        next.push(text);
        continue;
      }
      const walked = walkInside(root, prefix === '' ? '.' : prefix, { followLast: true });
      if (!walked.inside) return undefined;
      const dir = path.join(root, ...walked.parts);
      let names: string[];
      try {
        names = fs.readdirSync(dir);
      } catch {
        continue; // not a folder: nothing below it matches
      }
      read += names.length;
      if (read > MAX_ENTRIES_READ) throw tooMany(pattern, `more than ${MAX_ENTRIES_READ} folder entries`);
      const re = componentRegex(part);
      const dotOk = part.startsWith('.');
      for (const name of names.sort(byBytes)) {
        if (name.startsWith('.') && !dotOk) continue;
        if (!re.test(name)) continue;
        const text = join(name);
        if (hidden?.(text)) continue;
        if (!last && !isFolder(root, text)) continue;
        next.push(text);
        if (next.length > budget) throw tooMany(pattern, `more than ${MAX_EXPANSION} names`);
      }
    }
    found = next;
    if (found.length === 0) break;
  }
  return found.filter((f) => f !== '').sort(byBytes);
}

/** An entry exists at `rel` inside the zone (a link counts as itself; nothing outside is looked at). */
export function existsInside(root: string, rel: string): boolean {
  const walked = walkInside(root, rel, { followLast: false });
  return walked.inside && fs.lstatSync(path.join(root, ...walked.parts), { throwIfNoEntry: false }) !== undefined;
}

function isFolder(root: string, rel: string): boolean {
  const walked = walkInside(root, rel, { followLast: true });
  return walked.inside && fs.statSync(path.join(root, ...walked.parts), { throwIfNoEntry: false })?.isDirectory() === true;
}

function tooMany(pattern: string, what: string) {
  return shedError('INVALID_PARAMETER', `The pattern ${showValue(pattern)} matches ${what}; one command takes at most ${MAX_EXPANSION} names from patterns.`, {
    details: { parameter: 'args', pattern, limit: MAX_EXPANSION },
    hint: 'Narrow the pattern (e.g. "data/2024-*.csv"), or let the program walk the folder itself: shed_exec(cmd="grep", args=["-r", "--include=*.csv", "word", "data"]).',
  });
}

/** The error for a pattern that matches nothing (a shell would pass it on literally; the program would then fail). */
export function noMatch(pattern: string, position: number) {
  const dir = pattern.includes('/') ? pattern.slice(0, pattern.lastIndexOf('/')) || '.' : '.';
  return shedError('FILE_NOT_FOUND', `No file matches the pattern ${showValue(pattern)} (args[${position}]). Patterns (*, ?, [...]) are expanded inside the zone like a shell does; names starting with a dot need a pattern starting with a dot.`, {
    details: { parameter: 'args', pattern, position },
    hint: `See what is there: shed_exec(zone=..., cmd="ls", args=["-a", ${JSON.stringify(dir)}]).`,
  });
}
