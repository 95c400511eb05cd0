import fs from 'node:fs';
import path from 'node:path';

const DAY_MS = 86_400_000;

/** Writes `root/rel` and dates it and its folder `days` ago (for retention tests). */
export function putAged(root: string, rel: string, days: number): void {
  const p = path.join(root, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, 'x');
  const t = new Date(Date.now() - days * DAY_MS);
  fs.utimesSync(p, t, t);
  fs.utimesSync(path.dirname(p), t, t);
}
