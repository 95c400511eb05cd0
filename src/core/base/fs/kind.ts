/**
 * What filesystem the storage base is on: a local disk, a network filesystem (NFS, CephFS, SMB...)
 * or a FUSE filesystem (GlusterFS's native client, ceph-fuse, sshfs...). Several instances on
 * separate hosts are only correct on a shared filesystem mounted with coherent client caches
 * (README "Several instances"), so the server reports it at start (/healthz, shed_parameters, the
 * admin page). Read from statfs(2)'s type magic; for FUSE the subtype ("fuse.glusterfs") and the
 * mount options come from /proc/self/mountinfo (the mount holding the base's real path).
 */
import fs from 'node:fs';
import path from 'node:path';
import { readTextIfAny } from './read.js';

export interface StorageKind {
  /** "local", "network" (kernel network client), "fuse" (userspace filesystem, often networked) or "unknown". */
  kind: 'local' | 'network' | 'fuse' | 'unknown';
  /** Filesystem type: ext4, xfs, nfs, ceph, cifs, fuse.glusterfs, overlay, tmpfs... */
  type: string;
  /** The mount point holding the base, and its options (from /proc/self/mountinfo), when known. */
  mount?: string;
  options?: string;
  /** True when several hosts may share it (network or FUSE). */
  shared: boolean;
}

/** statfs f_type magic numbers (linux/magic.h) → [type, kind]. */
const MAGIC: Record<number, [string, StorageKind['kind']]> = {
  0xef53: ['ext4', 'local'],
  0x58465342: ['xfs', 'local'],
  0x9123683e: ['btrfs', 'local'],
  0x2fc12fc1: ['zfs', 'local'],
  0x01021994: ['tmpfs', 'local'],
  0x794c7630: ['overlay', 'local'],
  0xf2f52010: ['f2fs', 'local'],
  0x65735546: ['fuse', 'fuse'],
  0x6969: ['nfs', 'network'],
  0x00c36400: ['ceph', 'network'],
  0xff534d42: ['cifs', 'network'],
  0xfe534d42: ['smb2', 'network'],
  0x517b: ['smb', 'network'],
  0x0bd00bd0: ['lustre', 'network'],
  0x47504653: ['gpfs', 'network'],
  0x01021997: ['9p', 'network'],
  0x6b414653: ['afs', 'network'],
  0x5346414f: ['afs', 'network'],
  0x013111a8: ['ibrix', 'network'],
  0x19830326: ['beegfs', 'network'],
};

const cache = new Map<string, StorageKind>();

/** The storage kind of `dir` (the nearest existing ancestor is looked at), cached per folder. */
export function storageKind(dir: string): StorageKind {
  const key = path.resolve(dir);
  const known = cache.get(key);
  if (known !== undefined) return known;
  const found = detect(key);
  cache.set(key, found);
  return found;
}

function detect(dir: string): StorageKind {
  let at = dir;
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  let real = at;
  try {
    real = fs.realpathSync(at);
  } catch {
    // keep the name as given
  }
  let magic: number | undefined;
  try {
    magic = Number(fs.statfsSync(real).type);
  } catch {
    magic = undefined;
  }
  const mount = mountOf(real);
  const [type, kind] = magic !== undefined && MAGIC[magic] !== undefined ? MAGIC[magic]! : [mount?.type ?? 'unknown', 'unknown' as const];
  // FUSE names its real filesystem in the mount table: fuse.glusterfs, fuse.sshfs, fuse.ceph-fuse.
  const shown = kind === 'fuse' && mount?.type !== undefined ? mount.type : type;
  return {
    kind,
    type: shown,
    ...(mount ? { mount: mount.point, options: mount.options } : {}),
    shared: kind === 'network' || kind === 'fuse',
  };
}

/** The mountinfo line whose mount point is the longest prefix of `real`. */
function mountOf(real: string): { point: string; type: string; options: string } | undefined {
  const text = readTextIfAny('/proc/self/mountinfo');
  if (text === undefined) return undefined;
  let best: { point: string; type: string; options: string } | undefined;
  for (const line of text.split('\n')) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    const point = unescape(fields[4] ?? '');
    const [type = '', , superOptions = ''] = right.split(' ');
    const inside = point === '/' || real === point || real.startsWith(`${point}/`);
    if (inside && (best === undefined || point.length >= best.point.length)) best = { point, type, options: [fields[5] ?? '', superOptions].filter(Boolean).join(',') };
  }
  return best;
}

/** mountinfo escapes space, tab, newline and backslash as octal (\040). */
function unescape(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}
