/**
 * A small SQLite tokeniser (same lexical rules as SQLite: comments, '' strings, "" `` [] quoted
 * identifiers, x'..' blobs, parameters) and the decisions built on it: which statement verb a query
 * runs, whether it only reads, whether it uses a forbidden keyword, whether it has its own LIMIT.
 * Decisions are taken on tokens, never on substrings: a column named `attachment`, or the word
 * ATTACH inside a string or a comment, is not the ATTACH statement.
 */
import { FORBIDDEN_FUNCTIONS, PRAGMA_HIDDEN, PRAGMA_READS_WITH_ARG, pragmaAllowed } from './pragmas.js';

export type TokenKind = 'word' | 'quoted' | 'string' | 'blob' | 'number' | 'param' | 'punct';

export interface Token {
  kind: TokenKind;
  /** Source text of the token. */
  text: string;
  /** Upper-cased text for words, the unquoted name for quoted identifiers. */
  value: string;
  start: number;
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 12 || c === 13;
const isDigit = (c: number) => c >= 48 && c <= 57;
// SQLite treats every non-ASCII character as an identifier character.
const isIdStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c > 127;
const isIdChar = (c: number) => isIdStart(c) || isDigit(c) || c === 36;

export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  const n = sql.length;
  let i = 0;
  const push = (kind: TokenKind, start: number, end: number, value?: string) => {
    const text = sql.slice(start, end);
    out.push({ kind, text, value: value ?? text, start });
  };
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    const next = i + 1 < n ? sql.charCodeAt(i + 1) : 0;
    if (c === 45 && next === 45) {
      // -- comment to end of line
      const nl = sql.indexOf('\n', i);
      i = nl === -1 ? n : nl + 1;
      continue;
    }
    if (c === 47 && next === 42) {
      // /* comment */ (an unterminated one runs to the end, as in SQLite)
      const close = sql.indexOf('*/', i + 2);
      i = close === -1 ? n : close + 2;
      continue;
    }
    const start = i;
    if (c === 39) {
      i = closeQuote(sql, i, "'");
      push('string', start, i);
      continue;
    }
    if (c === 34 || c === 96) {
      const q = c === 34 ? '"' : '`';
      i = closeQuote(sql, i, q);
      push('quoted', start, i, sql.slice(start + 1, Math.max(start + 1, i - 1)).split(q + q).join(q));
      continue;
    }
    if (c === 91) {
      const close = sql.indexOf(']', i + 1);
      i = close === -1 ? n : close + 1;
      push('quoted', start, i, sql.slice(start + 1, close === -1 ? n : close));
      continue;
    }
    if ((c === 120 || c === 88) && next === 39) {
      i = closeQuote(sql, i + 1, "'");
      push('blob', start, i);
      continue;
    }
    if (isDigit(c) || (c === 46 && isDigit(next))) {
      i++;
      while (i < n && (isIdChar(sql.charCodeAt(i)) || sql.charCodeAt(i) === 46)) {
        const d = sql.charCodeAt(i);
        // exponent sign: 1e+5
        if ((d === 101 || d === 69) && (sql[i + 1] === '+' || sql[i + 1] === '-')) i++;
        i++;
      }
      push('number', start, i);
      continue;
    }
    if (c === 63) {
      i++;
      while (i < n && isDigit(sql.charCodeAt(i))) i++;
      push('param', start, i);
      continue;
    }
    if ((c === 58 || c === 64 || c === 36) && i + 1 < n && isIdChar(next)) {
      i++;
      while (i < n && isIdChar(sql.charCodeAt(i))) i++;
      push('param', start, i);
      continue;
    }
    if (isIdStart(c)) {
      while (i < n && isIdChar(sql.charCodeAt(i))) i++;
      push('word', start, i, sql.slice(start, i).toUpperCase());
      continue;
    }
    // Operators: keep two-character ones together so '=' tests stay simple.
    const two = sql.slice(i, i + 2);
    const len = ['||', '<=', '>=', '==', '!=', '<>', '<<', '>>', '->'].includes(two) ? (sql.slice(i, i + 3) === '->>' ? 3 : 2) : 1;
    i += len;
    push('punct', start, i);
  }
  return out;
}

/** Index just past the closing quote (a doubled quote is an escaped one); the end of text if unterminated. */
function closeQuote(sql: string, open: number, q: string): number {
  let i = open + 1;
  for (;;) {
    const close = sql.indexOf(q, i);
    if (close === -1) return sql.length;
    if (sql[close + 1] === q) {
      i = close + 2;
      continue;
    }
    return close + 1;
  }
}

/** Words that may never appear as bare tokens, and function names that may never be called. */
const FORBIDDEN_WORDS = new Set(['ATTACH', 'DETACH']);
const FORBIDDEN_NAMES = new Set([...FORBIDDEN_FUNCTIONS, 'sqlite_attach', 'sqlite_detach', ...[...PRAGMA_HIDDEN].map((p) => `pragma_${p}`)]);

const TRANSACTION_VERBS = new Set(['BEGIN', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT', 'RELEASE']);

/** PRAGMAs without argument that change the database. */
const PRAGMA_WRITES_NO_ARG = new Set(['optimize', 'incremental_vacuum', 'wal_checkpoint']);


export interface SqlAnalysis {
  tokens: Token[];
  /** First keyword of the statement that actually runs (after WITH ...), e.g. SELECT, INSERT, PRAGMA. */
  verb: string;
  read: boolean;
  /** A forbidden keyword, function or PRAGMA (sql-policy.ts), with its source text. */
  forbidden: string | undefined;
  /** True when the statement is BEGIN/COMMIT/ROLLBACK/SAVEPOINT/RELEASE/END. */
  transaction: boolean;
  /** True when the statement has its own LIMIT at the top level. */
  hasLimit: boolean;
  /** Placeholders: number of plain `?`, and whether named or numbered ones appear. */
  placeholders: { plain: number; other: boolean };
}

export function analyzeSql(sql: string): SqlAnalysis {
  const tokens = tokenize(sql);
  let forbidden: string | undefined;
  let plain = 0;
  let other = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (forbidden === undefined && t.kind === 'word' && FORBIDDEN_WORDS.has(t.value)) forbidden = t.text;
    if (forbidden === undefined && (t.kind === 'word' || t.kind === 'quoted') && FORBIDDEN_NAMES.has(t.value.toLowerCase())) forbidden = t.text;
    if (t.kind === 'param') {
      if (t.text === '?') plain++;
      else other = true;
    }
  }
  const main = mainVerbIndex(tokens);
  const verb = main === -1 ? '' : tokens[main]!.value;
  if (forbidden === undefined && verb === 'PRAGMA') {
    const p = pragmaAt(tokens, main);
    if (!pragmaAllowed(p.name, p.after === '=' || p.after === '(')) forbidden = `PRAGMA ${p.name}`;
  }
  return {
    tokens,
    verb,
    read: main !== -1 && isRead(tokens, main),
    forbidden,
    transaction: TRANSACTION_VERBS.has(verb),
    hasLimit: hasTopLevelLimit(tokens),
    placeholders: { plain, other },
  };
}

/** Index of the verb that runs: the first token, or for WITH the one after the common table expressions. */
function mainVerbIndex(tokens: Token[]): number {
  let i = 0;
  while (i < tokens.length && tokens[i]!.kind === 'punct' && tokens[i]!.text === ';') i++;
  const first = tokens[i];
  if (first === undefined) return -1;
  if (first.kind !== 'word' || first.value !== 'WITH') return first.kind === 'word' ? i : -1;
  i++;
  if (tokens[i]?.value === 'RECURSIVE') i++;
  // Each CTE: name [(columns)] AS [NOT] [MATERIALIZED] ( body ) then ',' or the main statement.
  for (;;) {
    i++; // past the CTE name
    if (tokens[i]?.text === '(') i = skipParens(tokens, i);
    if (tokens[i]?.value !== 'AS') return -1;
    i++;
    if (tokens[i]?.value === 'NOT') i++;
    if (tokens[i]?.value === 'MATERIALIZED') i++;
    if (tokens[i]?.text !== '(') return -1;
    i = skipParens(tokens, i);
    if (tokens[i]?.text === ',') {
      i++; // to the next CTE's name
      continue;
    }
    return tokens[i]?.kind === 'word' ? i : -1;
  }
}

/** From an opening parenthesis, the index after its matching close. */
function skipParens(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const t = tokens[i]!.text;
    if (tokens[i]!.kind !== 'punct') continue;
    if (t === '(') depth++;
    else if (t === ')' && --depth === 0) return i + 1;
  }
  return tokens.length;
}

/** PRAGMA [schema.]name [= value | (value)]: the name (lower case) and the token after it. */
function pragmaAt(tokens: Token[], at: number): { name: string; after: string | undefined } {
  let i = at + 1;
  if (tokens[i + 1]?.text === '.') i += 2;
  const name = tokens[i]?.kind === 'word' || tokens[i]?.kind === 'quoted' ? tokens[i]!.value.toLowerCase() : '';
  return { name, after: tokens[i + 1]?.text };
}

function isRead(tokens: Token[], at: number): boolean {
  const verb = tokens[at]!.value;
  if (verb === 'SELECT' || verb === 'VALUES' || verb === 'EXPLAIN') return true;
  if (verb !== 'PRAGMA') return false;
  const { name, after } = pragmaAt(tokens, at);
  if (after === '=') return false;
  if (after === '(') return PRAGMA_READS_WITH_ARG.has(name);
  return !PRAGMA_WRITES_NO_ARG.has(name);
}

function hasTopLevelLimit(tokens: Token[]): boolean {
  let depth = 0;
  for (const t of tokens) {
    if (t.kind === 'punct') {
      if (t.text === '(') depth++;
      else if (t.text === ')') depth--;
    } else if (depth === 0 && t.kind === 'word' && t.value === 'LIMIT') {
      return true;
    }
  }
  return false;
}

/** True when the text holds no statement: only whitespace, comments and semicolons. */
export function isTrivia(sql: string): boolean {
  return tokenize(sql).every((t) => t.kind === 'punct' && t.text === ';');
}

/** An SQL identifier in double quotes, safe whatever the name. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
