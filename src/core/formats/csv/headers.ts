/**
 * Column names from a CSV header: trimmed, runs of characters other than letters, digits and _
 * become one _, a leading digit gets a _ prefix, empty names become col_N, and duplicates (SQLite
 * compares names case-insensitively) get _2, _3. Names are always double-quoted in SQL, so keywords
 * are fine as they are.
 */
const MAX_NAME = 128;

export interface Headers {
  names: string[];
  /** Original → sanitised, for the names that changed. */
  renamed: Record<string, string>;
}

export function sanitizeHeaders(raw: string[]): Headers {
  const names: string[] = [];
  const renamed: Record<string, string> = {};
  const seen = new Set<string>();
  raw.forEach((original, i) => {
    let name = original
      .replace(/^\uFEFF/, '')
      .replace(/^[^\p{L}\p{N}_]+|[^\p{L}\p{N}_]+$/gu, '')
      .replace(/[^\p{L}\p{N}_]+/gu, '_')
      .slice(0, MAX_NAME);
    if (name === '' || /^_+$/.test(name)) name = `col_${i + 1}`;
    if (/^\p{N}/u.test(name)) name = `_${name}`;
    let unique = name;
    for (let k = 2; seen.has(unique.toLowerCase()); k++) unique = `${name}_${k}`;
    seen.add(unique.toLowerCase());
    names.push(unique);
    if (unique !== original) renamed[original] = unique;
  });
  return { names, renamed };
}

export function generatedNames(width: number): string[] {
  return Array.from({ length: width }, (_, i) => `col_${i + 1}`);
}
