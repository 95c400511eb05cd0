/**
 * From `/files/{token}[/{subpath}]` to the one disk entry it may open, re-checking everything at
 * every request: the token's signature, the link record (revoked, expired), the group membership
 * of the link's creator, and the path through the one path resolver (a link swapped in after the
 * link was created that leads outside the zone, or outside the linked folder, is refused) with the
 * valves in force now (blocked_patterns, allowed_extensions: a blocked file is 404, hidden from
 * folder pages and left out of folder zips; a link to a file blocked since stops working).
 * Every refusal is a status (404 or 410) and never says which check failed. The HTTP handler
 * (src/hosts/http/files) reads disk only through the functions here.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { GroupDirectory } from '../groups/directory.js';
import { standaloneDirectory } from '../groups/directory.js';
import { walkEntriesSliced } from '../../base/fs/walk.js';
import { BlockJudge, blockedPattern } from '../../base/blocked/rules.js';
import { readAccess } from '../groups/accessdb.js';
import { loadKeys } from './secret.js';
import { linkRow, type LinkRecord } from './store.js';
import { verifyToken } from './tokens.js';
import { isInside, resolvePath } from '../../base/paths/resolve.js';
import { listSliced } from '../../base/fs/list.js';
import { sortSliced, TimeSlice } from '../../base/fs/slice.js';
import { parseValves, ValvesSchema, type Valves } from '../../base/valves.js';
import { groupHome, openGroupZone, openZone, userHome, type Zone } from '../../base/zones/zones.js';

export type Refusal = { status: 404 | 410; reason: 'unknown' | 'expired' | 'revoked' | 'not-member' | 'missing' | 'path' };

export interface Target {
  link: LinkRecord;
  zone: Zone;
  /** Real path of what the link itself points at (the linked file, or the linked folder). */
  linkRoot: string;
  /** Real path of the requested entry (the linked file, or something inside the linked folder). */
  abs: string;
  /** Path below the linked folder ('' for the linked entry itself), '/'-separated. */
  sub: string;
  /** Display name of the requested entry. */
  name: string;
  isFolder: boolean;
  /** The URL ended with '/'. */
  slash: boolean;
}

export interface TargetOptions {
  storageBase: string;
  /**
   * The server's valves now (its config file, re-read when it changes, as calls read them): links are
   * served with the same sensitive-file rules as calls. Default: the defaults.
   */
  valves?: () => Record<string, unknown>;
  now?: () => number;
  /** Group membership (default: the standalone directory in access_auth.sqlite). */
  groups?: (storageBase: string) => GroupDirectory;
}

const refuse = (status: 404 | 410, reason: Refusal['reason']): Refusal => ({ status, reason });

/**
 * Splits the raw (percent-encoded) rest of the URL into the token and decoded subpath segments.
 * Refused outright: malformed escapes, empty, '.', '..' segments (encoded or not), backslashes,
 * slashes hidden as %2f, NUL and every other control character.
 */
export function splitRest(rest: string): { token: string; segments: string[]; slash: boolean } | undefined {
  const raw = rest.split('/');
  const token = raw.shift() ?? '';
  const slash = raw.length > 0 && raw[raw.length - 1] === '';
  if (slash) raw.pop();
  const segments: string[] = [];
  for (const part of raw) {
    let seg: string;
    try {
      seg = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    if (seg === '' || seg === '.' || seg === '..' || /[/\\]/.test(seg) || /[\u0000-\u001f\u007f-\u009f]/.test(seg)) return undefined;
    segments.push(seg.normalize('NFC'));
  }
  return { token, segments, slash };
}

function exists(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Opens the link's zone without creating anything (a vanished zone is a missing link). */
async function linkZone(link: LinkRecord, opts: TargetOptions): Promise<Zone | Refusal> {
  let valves: Valves;
  try {
    valves = parseValves(ValvesSchema, { ...(opts.valves?.() ?? {}), storage_base_path: opts.storageBase }, 'valve');
  } catch {
    return refuse(404, 'unknown'); // broken valves: the rules in force are unknown, so nothing is served
  }
  if (link.zone === 'group') {
    if (link.groupId === undefined) return refuse(404, 'unknown');
    const dir = (opts.groups ?? standaloneDirectory)(opts.storageBase);
    const group = await dir.byId(link.groupId);
    // The creator must still belong to the group: leaving it ends every link they made there.
    if (group === undefined || !(await dir.members(group.id)).includes(link.userId)) return refuse(404, 'not-member');
    if (!exists(path.join(groupHome(valves, group.id), 'data'))) return refuse(404, 'missing');
    return openGroupZone(valves, group);
  }
  const home = userHome(valves, link.userId);
  const dirs = { uploads: ['Uploads', link.convId], storage: ['Storage', 'data'], documents: ['Documents', 'data'] }[link.zone];
  if (dirs === undefined || !exists(path.join(home, ...dirs))) return refuse(404, 'missing');
  return openZone({ valves, user: { id: link.userId, name: link.userId, email: '', role: 'user' }, convId: link.convId }, link.zone, undefined);
}

function relToZone(zone: Zone, real: string): string {
  return path.relative(zone.root, real).split(path.sep).join('/');
}

export async function resolveTarget(rest: string, opts: TargetOptions): Promise<Target | Refusal> {
  const parts = splitRest(rest);
  if (parts === undefined) return refuse(404, 'path');
  const now = (opts.now ?? Date.now)();
  // One read of the access database: the keys and the record together.
  const found = await readAccess(opts.storageBase, (db) => {
    const keys = loadKeys(db, now);
    const id = keys === undefined ? undefined : verifyToken(keys, parts.token);
    return id === undefined ? undefined : linkRow(db, id);
  });
  if (found === undefined) return refuse(404, 'unknown');
  const link = found;
  if (link.revokedAt !== undefined) return refuse(410, 'revoked');
  if (Date.parse(link.expiresAt) <= now) return refuse(410, 'expired');
  if (link.kind === 'file' && (parts.segments.length > 0 || parts.slash)) return refuse(404, 'path');

  const zone = await linkZone(link, opts);
  if ('status' in zone) return zone;
  let linkRoot: string;
  let abs: string;
  try {
    const base = resolvePath(zone, link.path, { param: 'path', intent: 'read', allowZoneInPath: true });
    if (base.stat === undefined || base.stat.isDirectory() !== (link.kind === 'folder')) return refuse(404, 'missing');
    linkRoot = fs.realpathSync(base.abs);
    abs = linkRoot;
    if (parts.segments.length > 0) {
      const full = [link.path, ...parts.segments].filter((s) => s !== '').join('/');
      const sub = resolvePath(zone, full, { param: 'path', intent: 'read', allowZoneInPath: true });
      if (sub.stat === undefined) return refuse(404, 'missing');
      abs = fs.realpathSync(sub.abs);
    }
  } catch {
    return refuse(404, 'path');
  }
  // Inside the linked folder (not merely the zone).
  if (!isInside(abs, linkRoot) || !isInside(abs, zone.root)) return refuse(404, 'path');
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch {
    return refuse(404, 'missing');
  }
  if (!st.isDirectory() && !st.isFile()) return refuse(404, 'missing');
  const name = parts.segments.at(-1) ?? (link.path === '' ? zone.label : path.posix.basename(link.path));
  return { link, zone, linkRoot, abs, sub: parts.segments.join('/'), name, isFolder: st.isDirectory(), slash: parts.slash };
}

/**
 * Opens `abs` without following a final link, then checks through /proc where the descriptor
 * really points: a swap between the path check and the open cannot smuggle another file in.
 */
export function openChecked(abs: string, root: string): number | undefined {
  let fd: number;
  try {
    fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    let real: string | undefined;
    try {
      real = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      real = undefined; // no /proc (not Linux): the resolver's check stands alone
    }
    if ((real === undefined || isInside(real, root)) && fs.fstatSync(fd).isFile()) return fd;
  } catch {
    // fall through: refused
  }
  fs.closeSync(fd);
  return undefined;
}

export interface FolderEntry {
  name: string;
  isFolder: boolean;
  size: number;
  mtimeMs: number;
}

/**
 * A folder's entries, judged like the resolver judges them: links must lead inside `root`. Sliced
 * per entry: a folder page of 30,000 entries must not hold the other users' calls.
 */
export async function readEntries(target: Target, order: EntryOrder = { key: 'name', desc: false }): Promise<FolderEntry[]> {
  const out: FolderEntry[] = [];
  const judge = target.zone.blocked && new BlockJudge(target.zone.blocked, target.zone.root);
  const folderRel = relToZone(target.zone, target.abs);
  const slice = new TimeSlice();
  let dirents: fs.Dirent[];
  try {
    dirents = await listSliced(target.abs, slice);
  } catch {
    return out;
  }
  for (const d of dirents) {
    await slice.tick();
    const full = `${target.abs}${path.sep}${d.name}`;
    try {
      const real = d.isSymbolicLink() ? fs.realpathSync(full) : full;
      if (!isInside(real, target.linkRoot)) continue;
      const st = real === full ? fs.lstatSync(full, { throwIfNoEntry: false }) : fs.statSync(real, { throwIfNoEntry: false });
      if (st === undefined || (!st.isDirectory() && !st.isFile())) continue;
      // Blocked entries are not listed at all (their names can be secrets too).
      if (judge && judge.why(folderRel === '' ? d.name : `${folderRel}/${d.name}`, real, st)) continue;
      out.push({ name: d.name, isFolder: st.isDirectory(), size: st.isDirectory() ? 0 : st.size, mtimeMs: st.mtimeMs });
    } catch {
      // vanished or unreadable meanwhile: not listed
    }
  }
  return sortEntries(out, order, slice);
}

export type SortKey = 'name' | 'size' | 'date';
export interface EntryOrder {
  key: SortKey;
  desc: boolean;
}

/** Folders first, then by the key (ties by name); sliced, a page can list 30,000 entries. */
function sortEntries(entries: FolderEntry[], order: EntryOrder, slice: TimeSlice): Promise<FolderEntry[]> {
  const byName = (a: FolderEntry, b: FolderEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const cmp = order.key === 'size' ? (a: FolderEntry, b: FolderEntry) => a.size - b.size || byName(a, b) : order.key === 'date' ? (a: FolderEntry, b: FolderEntry) => a.mtimeMs - b.mtimeMs || byName(a, b) : byName;
  return sortSliced(entries, (a, b) => (a.isFolder !== b.isFolder ? (a.isFolder ? -1 : 1) : order.desc ? cmp(b, a) : cmp(a, b)), slice);
}

/**
 * The regular files below a folder target, for "download all": links are never followed (so
 * nothing outside can be packed), blocked entries are left out. Each comes with its path relative
 * to the folder and an open, checked descriptor (the caller closes it). The walk yields to the event
 * loop between entries (a user shapes the tree).
 */
export async function* filesBelow(target: Target): AsyncGenerator<{ rel: string; fd: number }> {
  const { zone } = target;
  const rules = zone.blocked;
  const judge = rules && new BlockJudge(rules, zone.root);
  const prune = (dir: string, name: string) => rules !== undefined && blockedPattern(rules, relToZone(zone, `${dir}${path.sep}${name}`)) !== undefined;
  for await (const { full, entry } of walkEntriesSliced(target.abs, prune)) {
    if (!entry.isFile()) continue;
    const fd = openChecked(full, target.abs);
    if (fd === undefined) continue;
    if (judge?.why(relToZone(zone, full), full, fs.fstatSync(fd))) {
      fs.closeSync(fd);
      continue;
    }
    yield { rel: path.relative(target.abs, full).split(path.sep).join('/'), fd };
  }
}
