/**
 * How names are carried inside git tree objects, and git's tree order. Entry names are "byte
 * strings" (each char = one byte, latin1) so a tree with a name that is not valid UTF-8 is written
 * back byte for byte; UTF-8 paths convert at that boundary with `toKey` / `fromKey`.
 */
export const toKey = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
export const fromKey = (key: string): string => Buffer.from(key, 'latin1').toString('utf8');

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
