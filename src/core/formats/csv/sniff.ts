/**
 * Delimiter sniffing: among , ; TAB |, the one that splits the first lines into the same number
 * of fields most consistently (quotes respected); ties go to that order. No candidate at all → ','.
 */
export const DELIMITER_CANDIDATES = [',', ';', '\t', '|'] as const;

export function sniffDelimiter(sample: string): string {
  const lines = sample.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.length > 1) lines.pop(); // the sample may cut the last line
  const useful = lines.filter((l) => l.trim() !== '').slice(0, 30);
  if (useful.length === 0) return ',';
  let best = ',';
  let bestScore = -1;
  for (const cand of DELIMITER_CANDIDATES) {
    const counts = useful.map((l) => countOutsideQuotes(l, cand));
    if (counts[0] === 0) continue; // the first line (header) must be split by it
    const freq = new Map<number, number>();
    for (const c of counts) freq.set(c, (freq.get(c) ?? 0) + 1);
    let mode = 0;
    let modeFreq = 0;
    for (const [c, f] of freq) {
      if (c > 0 && (f > modeFreq || (f === modeFreq && c > mode))) {
        mode = c;
        modeFreq = f;
      }
    }
    if (mode === 0) continue;
    const score = modeFreq / counts.length;
    if (score > bestScore + 1e-9) {
      best = cand;
      bestScore = score;
    }
  }
  return best;
}

function countOutsideQuotes(line: string, delim: string): number {
  let n = 0;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') quoted = !quoted;
    else if (c === delim && !quoted) n++;
  }
  return n;
}

/** Shows a delimiter readably in results: "," ";" "\t" "|". */
export function showDelimiter(d: string): string {
  return d === '\t' ? '\\t' : d;
}
