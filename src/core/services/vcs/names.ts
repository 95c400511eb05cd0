/**
 * Which names can live in the history (how they are carried inside tree objects is a format:
 * formats/git/names.ts).
 */
import { TEMP_SUFFIX } from '../../base/fs/atomic.js';
import { isDotGitName } from '../../base/paths/dot-git.js';

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
