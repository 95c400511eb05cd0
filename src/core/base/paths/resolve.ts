/**
 * The one path resolver (SPEC section 5). Every path parameter of every function goes through
 * `resolvePath`; nothing else turns user text into a disk path.
 *
 * Step 1 (`normalizeRelative`, pure): NFC, control characters refused, leading `/` stripped,
 * `.`/empty parts dropped, `..` popped but never above the root, zone-name prefix refused.
 * Step 2 (`resolvePath`, on disk): the real path of the deepest existing ancestor must be inside the
 * zone's real root; a final symbolic link is judged by where it leads. Reads get the real target;
 * writes through a final link are refused (the error names the real file); deletes and renames get
 * the link's own location, so they act on the link, never on what it points to.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError, showValue } from '../errors.js';
import type { Zone } from '../zones/zones.js';
import { walkInside } from './walk.js';
import { DirCursor } from '../fs/dircursor.js';
import { requireNotBlocked } from '../blocked/rules.js';
import { hasDotGitComponent } from './dot-git.js';

export type Intent = 'read' | 'write' | 'delete';

export interface PathOptions {
  /** Parameter name, for error messages. */
  param: string;
  intent: Intent;
  /** true: a first component named like the zone is a real folder; false: refused, and the error names the
   * allow_zone_in_path parameter; undefined: refused, for callers that have no such parameter. */
  allowZoneInPath?: boolean;
}

export interface ResolvedPath {
  /** Normalised path relative to the zone root ('' is the root). */
  rel: string;
  /** Absolute disk path to operate on. */
  abs: string;
  /** What is at `abs` (lstat for write/delete, stat of the target for read), undefined if nothing. */
  stat: fs.Stats | undefined;
}

// C0/C1 controls, DEL, and bidirectional overrides that make names display differently from what they are.
const FORBIDDEN_CHARS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;
const MAX_COMPONENT_BYTES = 255;
const MAX_PATH_BYTES = 4096;

export function normalizeRelative(input: string, zone: Pick<Zone, 'name' | 'label'>, opts: Omit<PathOptions, 'intent'>): string {
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(input)) {
    // A lone surrogate would reach the disk as U+FFFD: a file named differently from the request.
    throw shedError('INVALID_PATH', `${opts.param} contains invalid Unicode (a lone UTF-16 surrogate).`, {
      details: { parameter: opts.param },
      hint: `Use a plain relative path, e.g. ${opts.param}="reports/summary.txt"`,
    });
  }
  const text = input.normalize('NFC');
  const bad = FORBIDDEN_CHARS.exec(text);
  if (bad) {
    const what = bad[0] === '\u0000' ? 'a NUL byte' : `the control character U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    throw shedError('INVALID_PATH', `${opts.param} contains ${what}: ${showValue(input)}. Paths may only contain printable characters.`, {
      details: { parameter: opts.param },
      hint: `Use a plain relative path, e.g. ${opts.param}="reports/summary.txt"`,
    });
  }
  const parts: string[] = [];
  for (const part of text.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) {
        throw shedError('PATH_ESCAPE', `${opts.param} ${showValue(input)} climbs above the zone root with '..'.`, {
          details: { parameter: opts.param, received: input },
          hint: `Paths are relative to the ${zone.label} root and cannot leave it, e.g. ${opts.param}="notes/todo.txt"`,
        });
      }
      parts.pop();
      continue;
    }
    if (Buffer.byteLength(part) > MAX_COMPONENT_BYTES) {
      throw shedError('INVALID_PATH', `${opts.param} has a name longer than ${MAX_COMPONENT_BYTES} bytes.`, {
        details: { parameter: opts.param },
        hint: 'Use shorter file and folder names.',
      });
    }
    parts.push(part);
  }
  const rel = parts.join('/');
  if (Buffer.byteLength(rel) > MAX_PATH_BYTES) {
    throw shedError('INVALID_PATH', `${opts.param} is longer than ${MAX_PATH_BYTES} bytes.`, { details: { parameter: opts.param } });
  }
  const first = parts[0];
  if (first !== undefined && first.toLowerCase() === zone.name && !opts.allowZoneInPath) {
    const rest = parts.slice(1).join('/') || '.';
    throw shedError(
      'PATH_STARTS_WITH_ZONE',
      `${opts.param} ${showValue(input)} starts with the zone name '${first}'. Paths are relative to the zone root, so the zone name must not be repeated.`,
      {
        details: { parameter: opts.param, zone: zone.label, path: input, first_component: first, suggested: rest },
        // The escape hatch is named only to callers that take it (allowZoneInPath given, true or false):
        // it is left out of the specs, so the hint says it is real.
        hint:
          opts.allowZoneInPath === undefined
            ? `Use ${opts.param}="${rest}".`
            : `Use ${opts.param}="${rest}". Only if the user really has a folder named '${first}' inside ${zone.label}, add allow_zone_in_path=true (accepted by this function, though its spec leaves it out).`,
      },
    );
  }
  return rel;
}

export function isInside(candidate: string, root: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * A path inside a folder named `.git` (any spelling, any depth) of a versioned zone: such a folder
 * is the user's own data (the zone's repository lives outside it, at `git/`), but git can never
 * store it, so it would never be versioned: named writes there are refused (PROTECTED_PATH).
 */
export function isProtected(zone: Pick<Zone, 'versioned'>, rel: string): boolean {
  return zone.versioned && hasDotGitComponent(rel);
}

export function resolvePath(zone: Zone, input: string, opts: PathOptions): ResolvedPath {
  const resolved = resolveLocation(zone, input, opts);
  // Sensitive files (valves blocked_patterns, allowed_extensions): judged on the path as written and on where it really leads.
  if (zone.blocked) requireNotBlocked(zone.blocked, zone.root, resolved.rel, resolved.abs, resolved.stat, opts.param, input);
  return resolved;
}

function resolveLocation(zone: Zone, input: string, opts: PathOptions): ResolvedPath {
  const escape = (why: string) =>
    shedError('PATH_ESCAPE', `${opts.param} ${showValue(input)} ${why}, which leads outside ${zone.label}.`, {
      details: { parameter: opts.param, received: input },
      hint: 'Symbolic links may only point inside the zone. Use a path to a regular file or folder.',
    });
  let rel = normalizeRelative(input, zone, opts);
  if (hasDotDot(input)) rel = kernelRel(zone, input, escape);
  if (opts.intent === 'write' && isProtected(zone, rel)) throw protectedPath(zone, opts, input);
  if (rel === '') return { rel, abs: zone.root, stat: fs.statSync(zone.root) };

  const parent = realParent(zone, rel, opts, escape);
  const abs = path.join(parent, path.basename(rel));
  // The same .git rule on the real location (a folder link to a .git folder).
  if (opts.intent === 'write' && isProtected(zone, path.relative(zone.root, abs).split(path.sep).join('/'))) throw protectedPath(zone, opts, input);
  const own = lstat(abs);
  if (!own?.isSymbolicLink()) return { rel, abs, stat: own };

  // The final component is a symbolic link: judge it by its destination.
  let target: string | undefined;
  try {
    target = fs.realpathSync(abs);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ELOOP') {
      if (opts.intent === 'delete') return { rel, abs, stat: own };
      throw escape('is a symbolic link loop');
    }
    // Dangling: judge the text of the link lexically.
    const dest = path.resolve(parent, fs.readlinkSync(abs));
    if (!isInside(dest, zone.root) && opts.intent !== 'delete') throw escape('is a broken symbolic link pointing');
    if (opts.intent === 'write') throw linkWrite(zone, opts, input, undefined);
    return { rel, abs, stat: opts.intent === 'read' ? undefined : own };
  }
  if (!isInside(target, zone.root)) {
    if (opts.intent === 'delete') return { rel, abs, stat: own };
    throw escape('is a symbolic link');
  }
  if (opts.intent === 'write') throw linkWrite(zone, opts, input, path.relative(zone.root, target));
  return opts.intent === 'read' ? { rel, abs: target, stat: fs.statSync(target) } : { rel, abs, stat: own };
}

function hasDotDot(input: string): boolean {
  return input.split('/').includes('..');
}

/**
 * A path with '..' means what the kernel would make of it: '..' applies to the folder reached, links
 * on the way followed (with `a -> .`, `a/a/../../x` is two levels above the root, not `x`). The
 * text was already checked by normalizeRelative; a final link is left for the caller to judge.
 */
function kernelRel(zone: Zone, input: string, escape: (why: string) => Error): string {
  const walked = walkInside(zone.root, input.normalize('NFC').replace(/^\/+/, ''), { followLast: false });
  if (!walked.inside) throw escape(walked.why);
  return walked.parts.join('/');
}

function protectedPath(zone: Zone, opts: PathOptions, input: string): Error {
  return shedError('PROTECTED_PATH', `${opts.param} ${showValue(input)} is inside a folder named .git. ${zone.label} records every change in its history, and git can never hold a .git folder, so nothing written there could be versioned; writes there are refused (reading and deleting work).`, {
    details: { parameter: opts.param, received: input },
    hint: `Keep a git repository (a .git folder) in zone="storage", e.g. shed_create_file(zone="storage", path="project/.git/config", content="..."). The history of ${zone.label} itself is read with shed_exec(zone="${zone.name}", cmd="git", args=["log"]).`,
  });
}

/** Writes never go through a final symbolic link, even one that stays in the zone: name the real file instead. */
function linkWrite(zone: Zone, opts: PathOptions, input: string, targetRel: string | undefined): Error {
  return shedError('INVALID_PATH', `${opts.param} ${showValue(input)} is a symbolic link${targetRel ? ` to '${targetRel}'` : ''}; writes do not go through links.`, {
    details: { parameter: opts.param, received: input, link_target: targetRel, ...(targetRel ? { suggested: targetRel } : {}) },
    hint: targetRel ? `Write to the real file: ${opts.param}="${targetRel}"` : `Remove the link first with shed_delete(zone="${zone.name}", path="${input}").`,
  });
}

/**
 * Real path of the folder that holds `rel`'s final component. Missing folders are allowed (writes
 * create them), but the deepest existing one must be inside the zone, and no folder on the way may
 * be a broken link or a file.
 */
function realParent(zone: Zone, rel: string, opts: PathOptions, escape: (why: string) => Error): string {
  const parts = rel.split('/');
  parts.pop();
  // One component at a time at constant cost (dircursor.ts): a folder 2,000 levels deep is 2,000 lookups, not 2 million.
  const cursor = new DirCursor(zone.root);
  try {
    for (let i = 0; i < parts.length; i++) {
      const st = cursor.lstat(parts[i]!);
      if (st === undefined) return path.join(cursor.here, ...parts.slice(i)); // the rest does not exist yet
      if (st.isSymbolicLink()) {
        const next = path.join(cursor.here, parts[i]!);
        let real: string;
        try {
          real = fs.realpathSync(next);
        } catch {
          throw escape(`goes through '${parts.slice(0, i + 1).join('/')}', a broken symbolic link`);
        }
        if (!isInside(real, zone.root)) throw escape(`goes through '${parts.slice(0, i + 1).join('/')}', a symbolic link`);
        if (!fs.statSync(real).isDirectory()) throw notAFolder(opts, parts.slice(0, i + 1).join('/'));
        cursor.reset(real);
        continue;
      }
      if (!st.isDirectory()) throw notAFolder(opts, parts.slice(0, i + 1).join('/'));
      cursor.enter(parts[i]!);
    }
    return cursor.here;
  } finally {
    cursor.close();
  }
}

function notAFolder(opts: PathOptions, prefix: string): Error {
  return shedError('INVALID_PATH', `${opts.param} uses '${prefix}' as a folder, but it is a file.`, {
    details: { parameter: opts.param, file: prefix },
    hint: `Pick a path whose folders are folders; shed_tree shows what exists.`,
  });
}

function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

export function errnoCode(err: unknown): string | undefined {
  return err !== null && typeof err === 'object' && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}
