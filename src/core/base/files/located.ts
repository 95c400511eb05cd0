/**
 * A path parameter located in a zone (through the one path resolver), insisting on a file or a
 * folder, and the user-facing name of a path.
 */
import type fs from 'node:fs';
import { shedError } from '../errors.js';
import { resolvePath, type Intent, type ResolvedPath } from '../paths/resolve.js';
import type { Zone } from '../zones/zones.js';

export interface ZonedPath extends ResolvedPath {
  zone: Zone;
  /** What users see: "Storage/notes.txt". */
  shown: string;
}

/** allowZoneInPath: the function's allow_zone_in_path argument; left out by functions without that parameter. */
export function locate(zone: Zone, input: string, param: string, intent: Intent, allowZoneInPath?: boolean): ZonedPath {
  const resolved = resolvePath(zone, input, { param, intent, ...(allowZoneInPath !== undefined ? { allowZoneInPath } : {}) });
  return { ...resolved, zone, shown: shownPath(zone, resolved.rel) };
}

export function shownPath(zone: Zone, rel: string): string {
  return rel ? `${zone.label}/${rel}` : `${zone.label}/`;
}

export function notFound(p: ZonedPath, param = 'path'): Error {
  return shedError('FILE_NOT_FOUND', `${p.shown} does not exist.`, {
    details: { parameter: param, path: p.rel, zone: p.zone.label },
    hint: `Check the name with shed_tree(zone="${p.zone.name}"); paths are case-sensitive.`,
  });
}

/** The stat of an existing regular file, or a clear error. */
export function requireFile(p: ZonedPath, param = 'path'): fs.Stats {
  if (p.stat === undefined) throw notFound(p, param);
  if (p.stat.isDirectory()) {
    throw shedError('NOT_A_FILE', `${p.shown} is a folder, not a file.`, {
      details: { parameter: param, path: p.rel },
      hint: `List it with shed_tree(zone="${p.zone.name}", path="${p.rel || '.'}").`,
    });
  }
  if (!p.stat.isFile()) {
    throw shedError('NOT_A_FILE', `${p.shown} is not a regular file.`, { details: { parameter: param, path: p.rel } });
  }
  return p.stat;
}

export function requireFolder(p: ZonedPath, param = 'path'): fs.Stats {
  if (p.stat === undefined) throw notFound(p, param);
  if (!p.stat.isDirectory()) {
    throw shedError('NOT_A_DIRECTORY', `${p.shown} is a file, not a folder.`, {
      details: { parameter: param, path: p.rel },
      hint: 'Give the folder that contains it, or omit path for the zone root.',
    });
  }
  return p.stat;
}

/** Refuses the zone root where a file or entry is needed. */
export function requireNotRoot(p: ZonedPath, param = 'path'): void {
  if (p.rel !== '') return;
  throw shedError('INVALID_PATH', `${param} points at the root of ${p.zone.label}; name a file or folder inside it.`, {
    details: { parameter: param },
    hint: `Example: ${param}="notes.txt"`,
  });
}

