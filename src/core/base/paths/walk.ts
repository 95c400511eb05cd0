/**
 * Where a path really leads, decided the way the kernel resolves it: component by component from
 * the zone root, following every symbolic link that exists on disk (its text is spliced in front
 * of what is left, an absolute one restarts from its target), applying `..` to the folder reached
 * so far, never to the text. Counting `..` on the text is wrong as soon as a link points at its own
 * folder or an ancestor: with `a -> .`, `a/a/../../x` is `x` on paper but two levels above the
 * root for the kernel.
 *
 * Components that do not exist (yet) are taken as plain folders (a write may create them). The walk
 * never leaves the root: `..` at the root, a link leading outside, or more than MAX_LINK_HOPS links
 * (a loop) ends it with a reason instead of a location.
 */
import path from 'node:path';
import { DirCursor, realLocation } from '../fs/dircursor.js';

/** Linux's own limit (MAXSYMLINKS): beyond it the kernel answers ELOOP. */
export const MAX_LINK_HOPS = 40;

export type WalkResult =
  | { inside: true; /** Components from the root to where the path leads (links followed). */ parts: string[] }
  | { inside: false; /** Why it leaves the root, to finish a sentence: "… climbs above the zone root with '..'". */ why: string };

export interface WalkOptions {
  /** Follow a link that is the last component too (open, cat, cp's destination do; rm, mv of the link do not). */
  followLast: boolean;
}

/**
 * Resolves `text` (relative to `root`, or to the folder `start` components below it) inside
 * `root`, which must be a real path (no links in it). Absolute `text` is refused: the caller turns
 * an absolute link target into text relative to the root first (see linkProblem).
 */
export function walkInside(root: string, text: string, opts: WalkOptions, start: readonly string[] = []): WalkResult {
  if (path.isAbsolute(text)) return { inside: false, why: 'is an absolute path' };
  // Most paths exist and hold no link: one kernel walk proves it (its real location is its text).
  const written = [...start, ...split(text)];
  if (!written.includes('..')) {
    const lexical = path.join(root, ...written);
    if (realLocation(lexical, opts.followLast) === lexical) return { inside: true, parts: written };
  }
  // The folder reached so far, one component at a time at constant cost (a path thousands of
  // levels deep must not cost a kernel walk per level). `parts` beyond `depth` do not exist on disk
  // (or are not folders): no link can be there, so they are taken as written.
  const cursor = new DirCursor(root);
  try {
    const parts: string[] = [];
    let depth = 0;
    const push = (name: string) => {
      parts.push(name);
      if (parts.length === depth + 1) {
        cursor.enter(name);
        depth++;
      }
    };
    for (const name of start) push(name);
    const queue = split(text);
    let hops = 0;
    let via: string | undefined; // the last link followed, to name it when the climb goes out
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (name === '..') {
        if (parts.length === 0) return { inside: false, why: via === undefined ? "climbs above the zone root with '..'" : `climbs above the zone root through the symbolic link '${via}'` };
        parts.pop();
        if (parts.length < depth) {
          cursor.up();
          depth--;
        }
        continue;
      }
      const st = parts.length === depth ? cursor.lstat(name) : undefined;
      if (st?.isSymbolicLink() && (queue.length > 0 || opts.followLast)) {
        if (++hops > MAX_LINK_HOPS) return { inside: false, why: `goes through more than ${MAX_LINK_HOPS} symbolic links (a loop)` };
        const target = cursor.readlink(name);
        via = [...parts, name].join('/');
        if (path.isAbsolute(target)) {
          const real = path.normalize(target);
          if (real !== root && !real.startsWith(root + path.sep)) return { inside: false, why: `goes through '${[...parts, name].join('/')}', a symbolic link leading outside the zone` };
          parts.length = 0;
          depth = 0;
          cursor.reset(root);
          queue.unshift(...split(path.relative(root, real)));
        } else {
          queue.unshift(...split(target));
        }
        continue;
      }
      if (st?.isDirectory()) push(name);
      else parts.push(name); // missing, a file, or below one: nothing further down exists
    }
    return { inside: true, parts };
  } finally {
    cursor.close();
  }
}

function split(text: string): string[] {
  return text.split('/').filter((p) => p !== '' && p !== '.');
}
