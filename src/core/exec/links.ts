/**
 * Without the sandbox, an archive extraction or a copy can leave symbolic links that lead outside
 * the zone, and a later command would follow them. After such commands in validated mode, every
 * link whose destination is outside the zone is removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../paths/resolve.js';

export function outwardLinkSweep(root: string): string[] {
  const removed: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!(dir === root && entry.name === '.git')) stack.push(full);
        continue;
      }
      if (!entry.isSymbolicLink()) continue;
      const dest = path.resolve(dir, fs.readlinkSync(full));
      let real: string | undefined;
      try {
        real = fs.realpathSync(full);
      } catch {
        real = undefined; // dangling or looping: judged by its text
      }
      if (!isInside(dest, root) || (real !== undefined && !isInside(real, root))) {
        fs.rmSync(full, { force: true });
        removed.push(path.relative(root, full));
      }
    }
  }
  return removed;
}
