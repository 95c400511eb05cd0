/**
 * The spellings of `.git`: a folder of that name in a versioned zone is user data that can never be
 * versioned (git refuses it in a tree), so path rules and the history both ask here.
 */

// Code points HFS+ ignores when comparing names: ".g\u200cit" is ".git" there, so git refuses it everywhere.
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;
// NTFS spellings of .git: trailing dots/spaces, alternate data streams, the 8.3 short name.
const NTFS_DOTGIT = /^(?:\.git|git~1)[. ]*(?::.*)?$/i;

/** True for every spelling of `.git` that git refuses in a tree (`git fsck`: hasDotgit), on any system. */
export function isDotGitName(name: string): boolean {
  return name.replace(HFS_IGNORABLE, '').toLowerCase() === '.git' || NTFS_DOTGIT.test(name);
}

/** True when some component of a zone-relative path is a spelling of `.git`. */
export function hasDotGitComponent(rel: string): boolean {
  return rel !== '' && rel.split('/').some(isDotGitName);
}
