/**
 * The range kernel ids are allocated from (valves identity_id_first / identity_id_count), and whether
 * the server's user namespace can use it: a uid outside /proc/self/uid_map cannot be switched to
 * (setresuid fails with EINVAL) nor own a file, so a rootless or user-namespaced container must pick
 * its range inside its own map.
 */
import { readBytes } from '../../base/fs/read.js';

/** Largest valid id: (uid_t)-1 means "no change" to the kernel, and -2 is often the overflow id. */
export const MAX_KERNEL_ID = 4_294_967_293;

export interface IdRange {
  first: number;
  /** The last id of the range, included. */
  last: number;
}

/** The range the valves describe; throws with the valves to change when it leaves the kernel's ids. */
export function idRange(valves: { identity_id_first: number; identity_id_count: number }): IdRange {
  const first = valves.identity_id_first;
  const last = first + valves.identity_id_count - 1;
  if (last > MAX_KERNEL_ID) {
    throw new Error(`identity_id_first ${first} + identity_id_count ${valves.identity_id_count} ends past the largest kernel id ${MAX_KERNEL_ID}: lower one of them, e.g. identity_id_first=2000000 identity_id_count=1000000`);
  }
  return { first, last };
}

/** One line of /proc/self/{uid,gid}_map: ids [inside, inside + count) here. */
interface MapLine {
  inside: number;
  count: number;
}

function readMap(file: string): MapLine[] | undefined {
  let text: string;
  try {
    text = readBytes(file).toString('utf8');
  } catch {
    return undefined;
  }
  return text
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number))
    .filter((f) => f.length === 3 && f.every(Number.isFinite))
    .map(([inside, , count]) => ({ inside: inside!, count: count! }));
}

/**
 * Whether every id of the range is mapped in this process's user namespace, for uids and gids alike
 * (undefined when the maps cannot be read: not Linux).
 */
export function rangeMapped(range: IdRange, maps = { uid: '/proc/self/uid_map', gid: '/proc/self/gid_map' }): boolean | undefined {
  const covered = (lines: MapLine[]) => {
    // Map lines never overlap: walk the range through the lines that hold its next id.
    let next = range.first;
    for (let moved = true; moved && next <= range.last; ) {
      moved = false;
      for (const l of lines) {
        if (next >= l.inside && next < l.inside + l.count) {
          next = l.inside + l.count;
          moved = true;
        }
      }
    }
    return next > range.last;
  };
  const uid = readMap(maps.uid);
  const gid = readMap(maps.gid);
  if (!uid || !gid) return undefined;
  return covered(uid) && covered(gid);
}
