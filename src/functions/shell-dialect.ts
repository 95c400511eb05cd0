/**
 * shed_run_shell runs POSIX sh (dash on Debian), while models write bash. The bash constructs a
 * script uses, each with its POSIX spelling, so a failed run says why in one sentence instead of
 * "[[: not found". A heuristic on the text: quoted strings and comments are left out first, so
 * "[[" in an echo does not count.
 */

interface Bashism {
  /** What the note calls it. */
  name: string;
  pattern: RegExp;
  posix: string;
  /** Words dash reports as "not found" for it (kept out of the "Not installed here" note). */
  words?: readonly string[];
}

const BASHISMS: readonly Bashism[] = [
  { name: '[[ ]]', pattern: /(^|[\s;&|(!])\[\[(\s|$)/m, posix: '[ ] (test), with = not ==', words: ['[['] },
  { name: '==', pattern: /(^|[\s;&|(!])\[\s[^\]\n]*\s==\s/m, posix: '= inside [ ]' },
  { name: 'arrays', pattern: /(^|[\s;&|])[A-Za-z_]\w*(\[[^\]]*\])?\+?=\(|\$\{[A-Za-z_]\w*\[|\$\{#[A-Za-z_]\w*\[|(^|[\s;&|])(declare|typeset|local)\s+-[aA]\b|(^|[\s;&|])(readarray|mapfile)\s/m, posix: 'set -- a b c and "$@", or one variable per value', words: ['declare', 'typeset', 'readarray', 'mapfile'] },
  { name: 'source', pattern: /(^|[\s;&|])source\s/m, posix: '. FILE', words: ['source'] },
  { name: 'function f', pattern: /(^|[\s;&|])function\s+[A-Za-z_][\w-]*/m, posix: 'f() { ...; }', words: ['function'] },
  { name: 'brace expansion {a,b} / {1..5}', pattern: /(^|[^$\w\\])\{[^\s{}$,]*(,[^\s{}$]*)+\}|(^|[^$\w\\])\{-?\d+\.\.-?\d+\}/m, posix: 'write each name, or for i in $(seq 1 5)' },
  { name: 'here-string <<<', pattern: /<<</, posix: `printf '%s\\n' "$x" | cmd` },
  { name: '&>', pattern: /&>/, posix: '> FILE 2>&1' },
  { name: "$'...' quoting", pattern: /\$'/, posix: "printf '\\t'" },
  { name: '${var//x/y} and ${var:0:3}', pattern: /\$\{[A-Za-z_]\w*(\/\/?|:-?\d)/, posix: 'sed or cut in a $(...)' },
  { name: '(( ))', pattern: /(^|[\s;&|!])\(\(/m, posix: '[ $((x + 1)) -gt 3 ]', words: ['(('] },
  { name: 'declare', pattern: /(^|[\s;&|])(declare|typeset)\s/m, posix: 'a plain assignment x=1', words: ['declare', 'typeset'] },
  { name: 'echo -e', pattern: /(^|[\s;&|])echo\s+-e\b/m, posix: "printf 'a\\tb\\n'" },
];

/** Here-document bodies left out: their text is data (JSON braces, "[[" in a template), not syntax. */
function withoutHereDocs(script: string): string {
  const out: string[] = [];
  let end: string | undefined;
  for (const line of script.split('\n')) {
    if (end !== undefined) {
      if (line.replace(/^\t+/, '') === end) end = undefined;
      continue;
    }
    out.push(line);
    end = /<<-?\s*['"]?([A-Za-z_]\w*)['"]?/.exec(line.replace(/<<</g, ''))?.[1];
  }
  return out.join('\n');
}

/** Quoted strings, comments and here-documents blanked out, so that only the code's own syntax is looked at. */
function codeOnly(script: string): string {
  return withoutHereDocs(script)
    .replace(/'[^'\n]*'/g, "''")
    .replace(/"(?:[^"\\\n]|\\.)*"/g, '""')
    .replace(/(^|\s)#[^\n]*/g, '$1');
}

export interface DialectReport {
  /** "[[ ]] → [ ] (test) ...": one entry per construct found. */
  found: string[];
  /** Words dash would report as "not found" because of them. */
  words: Set<string>;
  /** True when dash would take the construct silently and literally (brace expansion). */
  silent: boolean;
}

export function bashisms(script: string): DialectReport {
  const text = codeOnly(script);
  // $'..' is looked for before quotes are blanked: it starts like a single-quoted string.
  const found: string[] = [];
  const words = new Set<string>();
  let silent = false;
  for (const b of BASHISMS) {
    const on = b.name === "$'...' quoting" ? script : text;
    if (!b.pattern.test(on)) continue;
    if (b.name === 'declare' && found.some((f) => f.startsWith('arrays'))) continue;
    found.push(`${b.name} → ${b.posix}`);
    for (const w of b.words ?? []) words.add(w);
    if (b.name.startsWith('brace')) silent = true;
  }
  return { found, words, silent };
}

/** The note for a shell script's answer, or undefined when it needs none. */
export function dialectNote(script: string, failed: boolean): { note: string; words: Set<string> } | undefined {
  const report = bashisms(script);
  if (report.found.length === 0 || (!failed && !report.silent)) return undefined;
  return {
    note: `shed_run_shell runs POSIX sh (dash), not bash; this script uses bash syntax: ${report.found.join('; ')}.`,
    words: report.words,
  };
}
