/**
 * Scanners for program text handed to whitelisted commands whose languages can run programs or
 * write files: sed (e w W r R commands, s///e and s///w), awk (system, pipes, getline, print
 * redirection, ENVIRON), dc (!), sqlite3 (dot-commands, ATTACH, load_extension, readfile/writefile,
 * VACUUM INTO), jq (module imports). Each returns the reason for refusal, or undefined.
 * The sandbox is the real wall; these stop the known escapes even without it.
 */
import type { ScriptLanguage } from './rules.js';

export function scanScript(language: ScriptLanguage, text: string): string | undefined {
  switch (language) {
    case 'sed':
      return scanSed(text);
    case 'awk':
      return scanAwk(text);
    case 'dc':
      return text.includes('!') ? "dc's ! runs a shell command" : undefined;
    case 'sqlite3':
      return scanSqliteCli(text);
    case 'jq':
      return /\b(import|include)\b/.test(stripQuoted(text, '"')) ? 'jq modules (import/include) load files from outside the zone' : undefined;
  }
}

/** GNU sed commands that run programs or touch files other than the input. */
const SED_FORBIDDEN: Record<string, string> = {
  e: "the sed command 'e' runs a shell command",
  w: "the sed command 'w' writes to a file",
  W: "the sed command 'W' writes to a file",
  r: "the sed command 'r' reads another file",
  R: "the sed command 'R' reads another file",
};

/**
 * Walks a sed script command by command the way GNU sed parses it: addresses (numbers, $, /re/,
 * \cREc, first~step, ranges, !), then the command. The text of a/i/c (to the first unescaped
 * newline), labels (to whitespace or ';') and the parts of s and y are skipped, so a 'w' inside a
 * regex, a replacement or appended text is not mistaken for a command; the flags of s are checked
 * for e and w. GNU sed treats the delimiter inside a bracket expression ([/]) as literal; the script
 * is scanned both with and without that rule, and refused if either reading finds a command that
 * runs or writes.
 */
export function scanSed(script: string): string | undefined {
  return scanSedOnce(script, true) ?? scanSedOnce(script, false);
}

function scanSedOnce(script: string, brackets: boolean): string | undefined {
  let i = 0;
  const n = script.length;
  /** Skips to just after the closing delimiter; `regex`: a bracket expression may contain the delimiter. */
  const skipDelimited = (delim: string, regex: boolean): void => {
    while (i < n && script[i] !== delim) {
      if (script[i] === '\\') i++;
      else if (script[i] === '\n' && delim !== '\n') return; // unterminated: let sed report it
      else if (regex && brackets && script[i] === '[') skipBracket();
      i++;
    }
    i++; // the closing delimiter
  };
  /** From '[' to its ']' (a leading ']' or '^]' is literal, [:class:] may contain ']'). */
  const skipBracket = (): void => {
    let j = i + 1;
    if (script[j] === '^') j++;
    if (script[j] === ']') j++;
    while (j < n && script[j] !== ']') {
      if (script[j] === '[' && ':.='.includes(script[j + 1] ?? '')) {
        const close = script.indexOf(`${script[j + 1]}]`, j + 2);
        if (close < 0) break;
        j = close + 2;
        continue;
      }
      if (script[j] === '\n') break;
      j++;
    }
    if (j < n && script[j] === ']') i = j; // the loop's i++ steps over ']'
  };
  const skipWhile = (re: RegExp): void => {
    while (i < n && re.test(script[i]!)) i++;
  };
  while (i < n) {
    const c = script[i]!;
    if (' \t\n;{}!'.includes(c)) {
      i++;
      continue;
    }
    // Addresses.
    if (/[0-9$,~+]/.test(c)) {
      i++;
      continue;
    }
    if (c === '/') {
      i++;
      skipDelimited('/', true);
      skipWhile(/[IM]/);
      continue;
    }
    if (c === '\\') {
      const delim = script[i + 1] ?? '';
      i += 2;
      skipDelimited(delim, true);
      skipWhile(/[IM]/);
      continue;
    }
    if (c === '#') {
      skipWhile(/[^\n]/);
      continue;
    }
    // Commands.
    if (c === 's' || c === 'y') {
      const delim = script[i + 1];
      if (delim === undefined) return undefined;
      i += 2;
      skipDelimited(delim, c === 's');
      skipDelimited(delim, false);
      if (c === 's') {
        const flags = /^[0-9gpiImMeEw]*/.exec(script.slice(i))![0];
        if (flags.includes('e')) return "the s command's 'e' flag runs the result as a shell command";
        if (flags.includes('w')) return "the s command's 'w' flag writes to a file";
        i += flags.length;
      }
      continue;
    }
    const reason = SED_FORBIDDEN[c];
    if (reason) return reason;
    i++;
    if ('aic'.includes(c)) {
      // Text up to the first newline that is not escaped (a backslash continues the text).
      while (i < n && script[i] !== '\n') i += script[i] === '\\' ? 2 : 1;
    } else if (':btTv'.includes(c)) {
      // A label: GNU sed ends it at whitespace or ';' and parses what follows as the next command.
      skipWhile(/[ \t]/);
      skipWhile(/[^\s;]/);
    } else if ('qQlL'.includes(c)) {
      skipWhile(/[ \t0-9]/); // optional exit code or line length
    }
    // Anything else is a one-character command: d D p P n N g G h H x = z F
  }
  return undefined;
}

/**
 * The code of an awk program with comments, strings and regex literals blanked out, so keywords
 * and operators inside them are not mistaken for code (and code is not hidden inside what only
 * looks like a string: a '"' inside /re/ does not open a string). A '/' starts a regex where an
 * operand is expected. `brackets`: a '/' inside [...] does not end the regex (gawk) or does (mawk).
 */
function awkCode(program: string, brackets: boolean): string {
  let out = '';
  let i = 0;
  const n = program.length;
  let operand = false; // the last token ends an operand, so '/' is division
  while (i < n) {
    const c = program[i]!;
    if (c === '#') {
      while (i < n && program[i] !== '\n') i++;
      continue;
    }
    if (c === '"') {
      i++;
      while (i < n && program[i] !== '"' && program[i] !== '\n') i += program[i] === '\\' ? 2 : 1;
      i++;
      out += ' "" ';
      operand = true;
      continue;
    }
    if (c === '/' && !operand) {
      i++;
      while (i < n && program[i] !== '/' && program[i] !== '\n') {
        if (program[i] === '\\') i++;
        else if (brackets && program[i] === '[') {
          const close = program.indexOf(']', program[i + 1] === ']' ? i + 2 : program[i + 1] === '^' && program[i + 2] === ']' ? i + 3 : i + 1);
          const line = program.indexOf('\n', i);
          if (close > 0 && (line < 0 || close < line)) i = close;
        }
        i++;
      }
      i++;
      out += ' // ';
      operand = true;
      continue;
    }
    if (c === '\\' && program[i + 1] === '\n') {
      i += 2; // line continuation: the expression goes on
      continue;
    }
    if ((c === '+' || c === '-') && program[i + 1] === c) {
      out += c + c;
      i += 2; // ++ and -- leave an operand an operand (x++ / 2) and a prefix a prefix
      continue;
    }
    if (/[A-Za-z0-9_$.]/.test(c)) {
      let j = i;
      while (j < n && /[A-Za-z0-9_.]/.test(program[j]!)) j++;
      if (j === i) j++; // '$'
      const word = program.slice(i, j);
      out += word;
      i = j;
      // After these keywords an operand is expected, so '/' opens a regex.
      operand = word !== '$' && !['print', 'printf', 'return', 'in', 'case', 'do', 'else', 'getline'].includes(word);
      continue;
    }
    out += c;
    i++;
    if (c === ')' || c === ']') operand = true;
    else if (!/\s/.test(c)) operand = false;
  }
  return out;
}

export function scanAwk(program: string): string | undefined {
  return scanAwkCode(awkCode(program, true)) ?? scanAwkCode(awkCode(program, false));
}

function scanAwkCode(code: string): string | undefined {
  if (/\bsystem\s*\(/.test(code)) return "awk's system() runs a shell command";
  if (/\bgetline\b/.test(code)) return "awk's getline can read commands' output or other files";
  if (/\b(ENVIRON|PROCINFO)\b/.test(code)) return 'awk may not read the environment';
  if (/\bARGV\b/.test(code)) return 'awk may not change its list of input files (ARGV)';
  if (code.includes('@')) return 'gawk directives and indirect calls (@load, @include, @name()) are not allowed';
  if (/(^|[^|])\|(?!\|)/.test(code.replace(/\|\|/g, '  '))) return "a single '|' in awk pipes output into a shell command";
  // print/printf followed by a top-level '>' is output redirection to a file (comparisons there need parentheses).
  for (const m of code.matchAll(/\bprintf?\b/g)) {
    let depth = 0;
    for (let j = m.index + m[0].length; j < code.length; j++) {
      const c = code[j]!;
      if (c === '(') depth++;
      else if (c === ')') depth--;
      else if (depth <= 0 && (c === ';' || c === '}' || c === '\n')) break;
      else if (depth <= 0 && c === '>') return "'print > file' in awk writes to a file: use stdout_file instead (write comparisons in print as (a > b))";
    }
  }
  return undefined;
}

/** Removes quoted strings so keywords inside them are not mistaken for code (SQL has no backslash escapes). */
function stripQuoted(text: string, quotes: string, backslash = true): string {
  let out = '';
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\' && backslash) i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (quotes.includes(c)) {
      quote = c;
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

/** SQL with comments, string literals and quoted identifiers blanked, in one pass (a '--' inside a string is not a comment). */
function sqlCode(sql: string): string {
  let out = '';
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++;
      out += ' ';
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      out += ' ';
      continue;
    }
    const close = c === "'" || c === '"' || c === '`' ? c : c === '[' ? ']' : '';
    if (close) {
      const end = sql.indexOf(close, i + 1); // SQL doubles quotes to escape them: 'it''s' is two literals back to back
      i = end < 0 ? n : end + 1;
      out += ' ';
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

const SQLITE_SAFE_DOT = new Set(['.tables', '.schema', '.headers', '.header', '.mode', '.indexes', '.indices', '.dump', '.help', '.width', '.nullvalue', '.separator', '.show', '.fullschema', '.stats', '.timer', '.eqp', '.changes', '.print']);

export function scanSqliteCli(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith('.')) {
    const word = trimmed.split(/\s+/)[0]!.toLowerCase();
    return SQLITE_SAFE_DOT.has(word) ? undefined : `the sqlite3 dot-command '${word}' is not allowed (it runs programs or touches other files); allowed: ${[...SQLITE_SAFE_DOT].join(' ')}`;
  }
  const code = sqlCode(text).toLowerCase();
  if (/\b(attach|detach)\b/.test(code)) return 'ATTACH/DETACH open other database files';
  if (/\b(load_extension|readfile|writefile|edit|fts3_tokenizer|zipfile|sqlar_compress|sqlar_uncompress)\b/.test(code)) return 'this SQL function reads or writes files or loads code';
  if (/\bvacuum\b[\s\S]*\binto\b/.test(code)) return 'VACUUM INTO writes another file';
  if (/\bpragma\b[\s\S]*\b(trusted_schema|writable_schema)\b/.test(code)) return 'this PRAGMA weakens database safety';
  // The database list holds the file's absolute server path (encodable past the output scrubber).
  if (/database_list\b/.test(code)) return 'PRAGMA database_list shows where the server stores the file; .tables and .schema describe the database';
  return undefined;
}
