/**
 * Where a captured tree lives, from the user's home: records and journals name trees ('storage',
 * 'uploads', 'documents', 'group:<id>'), never absolute paths, so instances that mount the shared
 * storage at different places read the same records (and the records stay small).
 */
import path from 'node:path';
import { scopeStateDir } from '../../base/locks/state-dir.js';

/** The capture store of a user home (users/{id}). */
export function undoDir(home: string): string {
  return path.join(path.dirname(scopeStateDir(home)), 'undo');
}

/** The work tree and repository of a captured tree. */
export function whereIs(home: string, tree: string): { root: string; gitdir: string } {
  const shadows = path.join(undoDir(home), 'shadow');
  if (tree === 'storage') return { root: path.join(home, 'Storage', 'data'), gitdir: path.join(shadows, 'storage.git') };
  if (tree === 'uploads') return { root: path.join(home, 'Uploads'), gitdir: path.join(shadows, 'uploads.git') };
  if (tree === 'documents') return { root: path.join(home, 'Documents', 'data'), gitdir: path.join(home, 'Documents', 'git') };
  const id = tree.startsWith('group:') ? tree.slice(6) : '';
  if (!/^[A-Za-z0-9_.-]+$/.test(id) || id === '.' || id === '..') throw new Error(`unknown captured tree '${tree}'`);
  const group = path.join(path.dirname(path.dirname(home)), 'groups', id);
  return { root: path.join(group, 'data'), gitdir: path.join(group, 'git') };
}
