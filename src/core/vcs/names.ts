/**
 * Which names can live in the history, and how names are carried inside tree objects.
 *
 * Tree entry names are kept as "byte strings" (each char = one byte, latin1) so a tree read from an
 * older repository with a name that is not valid UTF-8 is written back byte for byte. Paths coming
 * from the disk or the user are UTF-8 and converted at that boundary with `toKey` / `fromKey`.
 */
import { TEMP_SUFFIX } from '../fs/atomic.js';
import { isDotGitName } from '../paths/dot-git.js';

export const toKey = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
export const fromKey = (key: string): string => Buffer.from(key, 'latin1').toString('utf8');

// Leftovers of an interrupted atomicWrite: ".name.<12 hex>.shedtmp".
const TEMP_LEFTOVER = new RegExp(`^\\..*\\.[0-9a-f]{12}${TEMP_SUFFIX.replace('.', '\\.')}$`);

/**
 * False for names that never enter the history: every spelling of `.git` (at any depth; `git fsck`
 * rejects them), names that are not single path components, and temp files of interrupted writes.
 */
export function isTrackableName(name: string): boolean {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) return false;
  if (isDotGitName(name)) return false;
  return !TEMP_LEFTOVER.test(name);
}

/** True when every component of a zone-relative path is trackable ('' is the root). */
export function isTrackablePath(rel: string): boolean {
  return rel === '' || rel.split('/').every(isTrackableName);
}

/** Git's tree order: byte order of the names, a folder compared as if its name ended with '/'. */
export function compareTreeNames(a: { name: string; mode: string }, b: { name: string; mode: string }): number {
  const ka = a.mode === TREE_MODE ? `${a.name}/` : a.name;
  const kb = b.mode === TREE_MODE ? `${b.name}/` : b.name;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

export const TREE_MODE = '40000';
export const FILE_MODE = '100644';
export const EXEC_MODE = '100755';
export const LINK_MODE = '120000';
