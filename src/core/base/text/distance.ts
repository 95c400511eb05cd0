/**
 * Edit distance and "did you mean": for unknown parameter names (the dispatcher) and unknown
 * function names (the hosts' 404 and MCP errors).
 */

/** Levenshtein distance (insert, delete, substitute: cost 1 each). */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const keep = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = keep;
    }
  }
  return row[b.length]!;
}

/** The `count` names closest to `name` (case and a `shed_` prefix ignored), nearest first. */
export function closestNames(name: string, names: readonly string[], count = 3): string[] {
  const bare = (n: string) => n.toLowerCase().replace(/^shed_/, '');
  const target = bare(name);
  return names
    .map((n) => ({ n, d: editDistance(target, bare(n)) }))
    .sort((a, b) => a.d - b.d || a.n.localeCompare(b.n))
    .slice(0, count)
    .map((x) => x.n);
}
