/**
 * Stat calls for trees a user shapes while we look at them. `throwIfNoEntry: false` only covers
 * ENOENT; a name whose folder was just replaced by a file gives ENOTDIR, a looping or overlong
 * name ELOOP/ENAMETOOLONG, and so on. Each of those means "nothing usable there now", which the
 * caller already handles as a missing entry: none of them may escape (in a watcher callback it
 * would end the process).
 */
import fs from 'node:fs';

/** lstat, or undefined when there is nothing to stat there (whatever the reason). */
export function lstatIfAny(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** stat (following links), or undefined when there is nothing to stat there (whatever the reason). */
export function statIfAny(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
