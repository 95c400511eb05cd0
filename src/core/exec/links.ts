/**
 * Without the sandbox, an archive extraction or a copy can leave symbolic links that lead outside
 * the zone, and a later command would follow them. After such commands in validated mode, every
 * link whose destination is outside the zone is removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { walkEntries } from '../fs/walk.js';
import { isInside } from '../paths/resolve.js';

export function outwardLinkSweep(root: string): string[] {
  const removed: string[] = [];
  for (const { full, dir, entry } of walkEntries(root, (d, name) => d === root && name === '.git')) {
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
  return removed;
}
