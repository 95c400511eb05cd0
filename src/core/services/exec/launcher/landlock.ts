/**
 * The Landlock ruleset of a command (SPEC section 8): in landlock mode on the server's paths, in
 * bwrap mode inside the sandbox on the paths it shows (/zone, /tmp, its own /proc). Every access
 * right the running kernel's ABI knows is handled, so whatever no rule grants is refused by the
 * kernel, for the command and every process it starts:
 *
 * - read on the system folders and the few /etc files commands need (system.ts); execute only on
 *   the command's own programs (executables.ts);
 * - read and write on the zone (read only for a read-only zone) and the call's private temp folder;
 *   read on the call's empty home folder (landlock mode; bwrap's lies in its /tmp); a few devices;
 *   read on /proc in bwrap mode (the sandbox's own processes only: it has its own PID namespace);
 * - TCP bind refused, and connect unless the command may use the network (ABI 4 and later);
 * - signals and abstract Unix sockets scoped to the command's own processes (ABI 6 and later).
 *
 * Nothing else: not the storage base, other users or groups, the server's files, or (landlock mode)
 * /proc; in bwrap mode not the sandbox's root, /dev/shm or anything else bubblewrap made writable.
 */
import { DEVICES_RO, DEVICES_RW, ETC_NETWORK, ETC_READONLY, SYSTEM_DIRS, systemDirsWithoutPrograms } from './system.js';
import { magickPolicyDir, SANDBOX_MAGICK_DIR } from './magick.js';

// Filesystem rights (linux/landlock.h) and the ABI that introduced each beyond the first thirteen.
const FS = {
  EXECUTE: 1 << 0,
  WRITE_FILE: 1 << 1,
  READ_FILE: 1 << 2,
  READ_DIR: 1 << 3,
  REMOVE_DIR: 1 << 4,
  REMOVE_FILE: 1 << 5,
  MAKE_CHAR: 1 << 6,
  MAKE_DIR: 1 << 7,
  MAKE_REG: 1 << 8,
  MAKE_SOCK: 1 << 9,
  MAKE_FIFO: 1 << 10,
  MAKE_BLOCK: 1 << 11,
  MAKE_SYM: 1 << 12,
  REFER: 1 << 13, // ABI 2
  TRUNCATE: 1 << 14, // ABI 3
  IOCTL_DEV: 1 << 15, // ABI 5
} as const;
const NET_BIND_TCP = 1; // ABI 4
const NET_CONNECT_TCP = 2;
const SCOPE_ABSTRACT_UNIX_SOCKET = 1; // ABI 6
const SCOPE_SIGNAL = 2;

const READ = FS.READ_FILE | FS.READ_DIR;
const EXECUTE = FS.EXECUTE | FS.READ_FILE;
/** Everything a command does to its own files; never devices, sockets or execution. */
const WRITE = READ | FS.WRITE_FILE | FS.TRUNCATE | FS.REMOVE_DIR | FS.REMOVE_FILE | FS.MAKE_DIR | FS.MAKE_REG | FS.MAKE_SYM | FS.MAKE_FIFO | FS.REFER;
const DEVICE_RW = FS.READ_FILE | FS.WRITE_FILE | FS.TRUNCATE | FS.IOCTL_DEV;

/** The filesystem rights ABI `abi` knows: all of them are handled (refused unless granted). */
function handledFs(abi: number): number {
  let rights = (1 << 13) - 1;
  if (abi >= 2) rights |= FS.REFER;
  if (abi >= 3) rights |= FS.TRUNCATE;
  if (abi >= 5) rights |= FS.IOCTL_DEV;
  return rights;
}

export interface LandlockScope {
  abi: number;
  /** The command's working folder (the zone root, or a locked edit's scratch folder). */
  zoneRoot: string;
  readonly: boolean;
  network: boolean;
  /** The call's private temp folder (absolute), and its empty home folder if it lies elsewhere. */
  tmp: string;
  home?: string;
  /** The home folder is writable too (a script's libraries keep caches there), not only readable. */
  writableHome?: boolean;
  /** Read on /proc (bwrap mode: the sandbox's own). */
  proc?: boolean;
  /** Program folders may be listed, but only `executables` read among their files (a script: system.ts). */
  hidePrograms?: boolean;
  executables: readonly string[];
}

export interface Ruleset {
  handledFs: number;
  handledNet: number;
  scoped: number;
  /** [rights, path]: a path that does not exist is skipped (it grants nothing). */
  rules: [number, string][];
}

export function landlockRuleset(s: LandlockScope): Ruleset {
  const fs = handledFs(s.abi);
  const rules: [number, string][] = [];
  const grant = (rights: number, paths: readonly string[]) => {
    for (const p of paths) rules.push([rights & fs, p]);
  };
  if (s.hidePrograms) {
    const system = systemDirsWithoutPrograms();
    grant(READ, system.files);
    grant(FS.READ_DIR, system.listed);
  } else grant(READ, SYSTEM_DIRS);
  grant(READ, [...ETC_READONLY, ...(s.network ? ETC_NETWORK : [])]);
  // ImageMagick's policy (magick.ts): the host folder, or where bubblewrap shows it (the other is skipped: absent).
  grant(READ, [s.proc ? SANDBOX_MAGICK_DIR : magickPolicyDir()]);
  grant(DEVICE_RW, DEVICES_RW);
  grant(FS.READ_FILE, DEVICES_RO);
  grant(EXECUTE, s.executables);
  grant(s.readonly ? READ : WRITE, [s.zoneRoot]);
  grant(WRITE, [s.tmp]);
  if (s.home !== undefined) grant(s.writableHome ? WRITE : READ, [s.home]);
  if (s.proc) grant(READ, ['/proc']);
  return {
    handledFs: fs,
    // Bind is never needed; connect only by a command allowed on the network.
    handledNet: s.abi >= 4 ? NET_BIND_TCP | (s.network ? 0 : NET_CONNECT_TCP) : 0,
    scoped: s.abi >= 6 ? SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL : 0,
    rules,
  };
}
