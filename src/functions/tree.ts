import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { shedError, showValue } from '../core/base/errors.js';
import { TEMP_SUFFIX } from '../core/base/fs/atomic.js';
import { blockedPattern } from '../core/base/blocked/rules.js';
import { isInside } from '../core/base/paths/resolve.js';
import { ZONE_NAMES, type Zone } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, zoneParam } from '../registry/params.js';
import { locate, requireFolder, shownPath } from '../core/base/files/located.js';
import { outputLimit, plural } from '../core/base/text/format.js';
import { formatSize } from '../core/base/text/size.js';
import { listSliced } from '../core/base/fs/list.js';
import { sortSliced, TimeSlice } from '../core/base/fs/slice.js';

const MAX_ENTRIES = 100;
const MAX_DEPTH = 10;


/** Case-insensitive name order, exact order as tie-break so the output is always the same. */
function byName(a: fs.Dirent, b: fs.Dirent): number {
  const x = a.name.toLowerCase();
  const y = b.name.toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

interface Walk {
  zone: Zone;
  depth: number;
  budget: number;
  lines: string[];
  chars: number;
  truncated: boolean;
  folders: number;
  files: number;
  /** Entries left out because they match blocked_patterns (hidden, only counted: their names can be secrets too). */
  hidden: number;
  slice: TimeSlice;
}

/** Adds a line if it fits in the character budget; false once the budget is spent. */
function push(walk: Walk, line: string): boolean {
  if (walk.truncated) return false;
  const cost = line.length + (walk.lines.length > 0 ? 1 : 0);
  if (walk.chars + cost > walk.budget) {
    walk.truncated = true;
    return false;
  }
  walk.lines.push(line);
  walk.chars += cost;
  return true;
}

/**
 * What a link is shown pointing to. Only a link that leads inside the zone shows where: its own
 * text when that text never climbs out of the zone, else the zone path it reaches. A link leading
 * outside shows no target at all (its text could name disk folders or other users' files).
 */
function linkText(walk: Walk, abs: string): string {
  let text: string;
  try {
    text = fs.readlinkSync(abs);
  } catch {
    return '?';
  }
  const root = walk.zone.root;
  let leads = path.resolve(path.dirname(abs), text); // a dangling link or a loop is judged by its text
  try {
    leads = fs.realpathSync(abs);
  } catch {
    // keep the lexical reading
  }
  if (!isInside(leads, root)) return '(outside the zone)';
  if (!path.isAbsolute(text) && staysInside(path.relative(root, path.dirname(abs)), text)) return text;
  return shownPath(walk.zone, path.relative(root, leads).split(path.sep).join('/'));
}

/** True when a relative link text, read from folder `fromRel`, never climbs above the zone root. */
function staysInside(fromRel: string, text: string): boolean {
  let level = fromRel === '' ? 0 : fromRel.split(path.sep).length;
  for (const part of text.split('/')) {
    if (part === '' || part === '.') continue;
    level += part === '..' ? -1 : 1;
    if (level < 0) return false;
  }
  return true;
}

/** A folder's entries to show; sliced per entry (a folder can hold 30,000). */
async function visibleEntries(walk: Walk, dir: string): Promise<fs.Dirent[]> {
  const rules = walk.zone.blocked;
  const relDir = path.relative(walk.zone.root, dir).split(path.sep).join('/');
  const out: fs.Dirent[] = [];
  for (const e of await listSliced(dir, walk.slice)) {
    await walk.slice.tick();
    if (e.name.endsWith(TEMP_SUFFIX)) continue;
    if (rules && blockedPattern(rules, relDir ? `${relDir}/${e.name}` : e.name) !== undefined) {
      walk.hidden++;
      continue;
    }
    out.push(e);
  }
  return out;
}

async function listFolder(walk: Walk, dir: string, prefix: string, level: number, entries: fs.Dirent[]): Promise<void> {
  const folders = await sortSliced(entries.filter((e) => e.isDirectory()), byName, walk.slice);
  const others = await sortSliced(entries.filter((e) => !e.isDirectory()), byName, walk.slice);
  const ordered = [...folders, ...others];
  const shown = ordered.slice(0, MAX_ENTRIES);
  const more = ordered.length - shown.length;
  for (let i = 0; i < shown.length; i++) {
    const entry = shown[i]!;
    const last = i === shown.length - 1 && more === 0;
    const lead = prefix + (last ? '└── ' : '├── ');
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!push(walk, `${lead}${entry.name}/`)) return;
      walk.folders++;
      if (level < walk.depth) {
        const inner = prefix + (last ? '    ' : '│   ');
        let children: fs.Dirent[];
        try {
          children = await visibleEntries(walk, abs);
        } catch {
          if (!push(walk, `${inner}└── (cannot be read)`)) return;
          continue;
        }
        await listFolder(walk, abs, inner, level + 1, children);
        if (walk.truncated) return;
      }
      continue;
    }
    let line: string;
    if (entry.isSymbolicLink()) {
      line = `${lead}${entry.name} -> ${linkText(walk, abs)}`;
    } else {
      let st: fs.Stats | undefined;
      try {
        st = fs.lstatSync(abs);
      } catch {
        st = undefined; // removed (or its folder replaced) since the listing
      }
      line = st === undefined ? `${lead}${entry.name}` : `${lead}${entry.name} (${formatSize(st.size)})`;
    }
    if (!push(walk, line)) return;
    walk.files++;
  }
  if (more > 0) push(walk, `${prefix}└── ... and ${more} more`);
}

export const shedTree = defineFunction({
  name: 'shed_tree',
  category: 'files',
  summary: 'Show the folders and files of a zone (or one folder) as a tree, with sizes.',
  description: 'List a zone or folder as a tree with sizes; at most 100 entries per folder.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    path: z.string().default('.').describe('Folder; "." is the zone root'),
    depth: z.number().int().default(3).describe('Levels shown (at most 10)'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  example: { zone: 'storage', path: '.', depth: 2 },
  async handler(args, ctx) {
    if (args.depth < 0) {
      throw shedError('INVALID_PARAMETER', `'depth' cannot be negative: it is the number of levels to show, 1 to 10; got ${showValue(args.depth)}.`, {
        details: { parameter: 'depth', received: args.depth, expected: 'an integer from 1 to 10' },
        hint: `Example: shed_tree(zone="${args.zone}", path="${args.path}", depth=2)`,
      });
    }
    const depth = Math.min(MAX_DEPTH, Math.max(1, args.depth));
    const zone = ctx.zone(args.zone, args.group);
    const target = locate(zone, args.path, 'path', 'read', args.allow_zone_in_path);
    requireFolder(target);

    const limit = outputLimit(ctx, undefined);
    const notice = `... [TRUNCATED at ${limit} characters: show a sub-folder with path=... or use a smaller depth]`;
    const walk: Walk = {
      zone,
      depth,
      budget: Math.max(0, limit - notice.length - 1),
      lines: [],
      chars: 0,
      truncated: false,
      folders: 0,
      files: 0,
      hidden: 0,
      slice: new TimeSlice(),
    };
    const rootName = target.rel === '' ? zone.label : path.posix.basename(target.rel);
    if (push(walk, `${rootName}/`)) {
      const entries = await visibleEntries(walk, target.abs);
      if (entries.length === 0) push(walk, '(empty)');
      else await listFolder(walk, target.abs, '', 1, entries);
    }
    const tree = walk.truncated ? [...walk.lines, notice].join('\n') : walk.lines.join('\n');

    const where = shownPath(zone, target.rel);
    const counts = `${plural(walk.folders, 'folder')}, ${plural(walk.files, 'file')}${walk.hidden > 0 ? ` (${walk.hidden} hidden by blocked_patterns)` : ''}`;
    const message = walk.truncated
      ? `Tree of ${where} (depth=${depth}) TRUNCATED at ${limit} characters after ${counts}; show a sub-folder with path=... or lower depth.`
      : `Tree of ${where} (depth=${depth}): ${counts}.`;
    return {
      data: { zone: zone.label, path: target.rel || '.', depth, tree, folders: walk.folders, files: walk.files, truncated: walk.truncated, ...(walk.hidden > 0 ? { hidden_blocked: walk.hidden } : {}) },
      message,
    };
  },
});
