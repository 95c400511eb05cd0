/**
 * Where shed_import may read attached files from. A host gives local paths of uploads; those are
 * read only under the admin's allowed folders (valve import_allowed_paths) and the storage base
 * (there, only outside users/ and groups/, or inside the caller's own folder). The final
 * component is opened without following links, must be a regular file, and the opened file's
 * real location (/proc/self/fd) is checked again, so a link swapped in between is caught.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError, type ErrorCode } from '../../base/errors.js';
import { errnoCode, isInside } from '../../base/paths/resolve.js';
import type { Valves } from '../../base/valves.js';
import { formatSize } from '../../base/text/size.js';

/** A per-file refusal: reported for that file, the others are still imported. */
export class Refusal extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The host's inline content may be used instead (the path was unusable, not hostile). */
    readonly fallback = false,
  ) {
    super(message);
  }
}

export interface Area {
  /** Real paths of folders everything below which may be read. */
  allowed: string[];
  /** Real path of the storage base, with its own rule. */
  base: string | undefined;
  ownHome: string;
}

export function importArea(valves: Valves, userId: string): Area {
  const allowed: string[] = [];
  for (const raw of valves.import_allowed_paths.split(/[,\n]/)) {
    const dir = raw.trim();
    if (dir === '') continue;
    if (!path.isAbsolute(dir)) {
      throw shedError('INVALID_VALVES', `The valve 'import_allowed_paths' must list absolute folders; '${dir}' is not one.`, {
        details: { valve: 'import_allowed_paths' },
        hint: 'An admin must correct it, e.g. import_allowed_paths="/app/backend/data/uploads".',
      });
    }
    const real = realOrUndefined(dir);
    if (real !== undefined && real !== '/') allowed.push(real); // "/" would allow everything: ignored
  }
  const base = realOrUndefined(path.resolve(valves.storage_base_path));
  return { allowed, base, ownHome: base === undefined ? '' : path.join(base, 'users', userId) };
}

function realOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

export function mayRead(area: Area, real: string): boolean {
  if (area.allowed.some((dir) => isInside(real, dir) && real !== dir)) return true;
  if (area.base === undefined || !isInside(real, area.base) || real === area.base) return false;
  const first = path.relative(area.base, real).split(path.sep)[0]!;
  if (first === 'users' || first === 'groups') return isInside(real, area.ownHome) && real !== area.ownHome;
  return !first.startsWith('access_auth'); // the ownership database and its journals
}

export interface Source {
  fd: number;
  size: number;
  close(): void;
}

/** Opens a host-given local path for reading, or throws a Refusal saying why not. */
export function openSource(area: Area, given: string, maxBytes: number): Source {
  if (given.includes('\0') || !path.isAbsolute(given)) throw new Refusal('IMPORT_REFUSED', 'its path is not a local absolute path', true);
  let parent: string;
  try {
    parent = fs.realpathSync(path.dirname(given));
  } catch {
    throw new Refusal('FILE_NOT_FOUND', 'the file the host names does not exist', true);
  }
  const candidate = path.join(parent, path.basename(given));
  if (!mayRead(area, candidate)) throw new Refusal('IMPORT_REFUSED', 'its path is outside the folders imports may read (admin setting import_allowed_paths)', true);
  const st = fs.lstatSync(candidate, { throwIfNoEntry: false });
  if (st === undefined) throw new Refusal('FILE_NOT_FOUND', 'the file the host names does not exist', true);
  if (st.isSymbolicLink()) throw new Refusal('IMPORT_REFUSED', 'it is a symbolic link (links are never imported)');
  if (!st.isFile()) throw new Refusal('NOT_A_FILE', 'it is not a regular file (a folder, device, pipe or socket)');
  let fd: number;
  try {
    fd = fs.openSync(candidate, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ELOOP') throw new Refusal('IMPORT_REFUSED', 'it is a symbolic link (links are never imported)');
    throw new Refusal('IMPORT_REFUSED', `it cannot be read (${code ?? 'error'})`);
  }
  const close = () => fs.closeSync(fd);
  try {
    const opened = fs.fstatSync(fd);
    if (!opened.isFile() || opened.ino !== st.ino || opened.dev !== st.dev) throw new Refusal('IMPORT_REFUSED', 'it changed while being opened');
    const real = openedPath(fd);
    if (real !== undefined && !mayRead(area, real)) throw new Refusal('IMPORT_REFUSED', 'its path is outside the folders imports may read (admin setting import_allowed_paths)');
    if (opened.size > maxBytes) throw new Refusal('FILE_TOO_LARGE', `it is too large (${formatSize(opened.size)} > ${formatSize(maxBytes)} per file)`);
    return { fd, size: opened.size, close };
  } catch (err) {
    close();
    throw err;
  }
}

function openedPath(fd: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined; // no /proc: the checks before opening stand
  }
}
