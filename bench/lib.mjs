// Helpers shared by the bench scripts: medians and the aligned result table.

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Prints rows {scenario, ours, anchor, anchorValue, ratio, target, result} as one aligned table. */
export function printTable(list) {
  const cols = [
    ['scenario', 'Scenario'],
    ['ours', 'Fileshed'],
    ['anchor', 'Anchor'],
    ['anchorValue', 'Anchor median'],
    ['ratio', 'Ratio'],
    ['target', 'Target'],
    ['result', 'Result'],
  ];
  const width = cols.map(([key, title]) => Math.max(title.length, ...list.map((r) => String(r[key]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(width[i]) : String(c).padStart(width[i]))).join('  ');
  console.log(line(cols.map(([, title]) => title)));
  console.log(width.map((w) => '-'.repeat(w)).join('  '));
  for (const r of list) console.log(line(cols.map(([key]) => r[key])));
}

/**
 * `npm run bench:smoke` sets BENCH_SMOKE=1: every script runs on tiny sizes, so CI proves the
 * scripts still work (imports, build, calls) without spending minutes measuring.
 */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/** The full-size value, or the tiny one in smoke mode. */
export function sized(full, tiny) {
  return SMOKE ? tiny : full;
}
