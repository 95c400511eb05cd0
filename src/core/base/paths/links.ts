/**
 * The one rule for symbolic links inside a zone: a link may stay only if it leads somewhere inside
 * the zone that is neither the link's own folder nor one of its ancestors. A link to itself or an
 * ancestor (`a -> .`, `sub/a -> ..`, an absolute link to the zone root) makes `a/a/..` climb
 * above the place its text suggests, and lets recursive tools loop; a link leading outside opens
 * the server. Used by the post-command sweep, history restores and renames.
 */
import fs from 'node:fs';
import path from 'node:path';
import { walkInside } from './walk.js';

/**
 * Why a link at `linkAbs` (a path inside `root`, whose folders are real) with text `target`
 * (default: what is on disk) may not exist, or undefined if it may.
 */
export function linkProblem(root: string, linkAbs: string, target: string = fs.readlinkSync(linkAbs)): string | undefined {
  const folder = path.relative(root, path.dirname(linkAbs));
  if (folder.startsWith('..') || path.isAbsolute(folder)) return 'it is not inside the zone';
  const own = folder === '' ? [] : folder.split(path.sep);
  let text = target;
  let start = own;
  if (path.isAbsolute(target)) {
    const normal = path.normalize(target);
    if (normal !== root && !normal.startsWith(root + path.sep)) return 'it leads outside the zone';
    text = path.relative(root, normal);
    start = [];
  }
  const walked = walkInside(root, text, { followLast: true }, start);
  if (!walked.inside) return walked.why.includes('loop') ? 'it is a symbolic link loop' : 'it leads outside the zone';
  const dest = walked.parts.join('/');
  // Through itself (`a -> a`, `a -> a/b`): judged before it exists on disk too (history restores).
  const linkRel = [...own, path.basename(linkAbs)].join('/');
  if (dest === linkRel || dest.startsWith(`${linkRel}/`)) return 'it points at itself';
  // The destination is the link's own folder or an ancestor of it (only folders can be).
  const ownRel = own.join('/');
  if (dest === '' || ownRel === dest || ownRel.startsWith(`${dest}/`)) return dest === '' ? 'it points at the zone root, an ancestor of itself' : `it points at '${dest}', its own folder or an ancestor of it`;
  return undefined;
}
