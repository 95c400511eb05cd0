/**
 * The parts of the server's system a command may use, whatever the sandbox: programs found on the
 * system PATH (never in a zone), the system folders they load from, and the few /etc files and
 * devices they need. bubblewrap mounts these read-only; Landlock grants read on them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../../base/errors.js';
import { packageFor } from '../policy/commands.js';

export const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Folders of programs and their libraries (links to /usr on merged-/usr systems). */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'];

/** Folders that hold programs (not their libraries or data). */
const PROGRAM_DIRS = new Set(['bin', 'sbin', 'games', 'libexec']);

let withoutPrograms: { files: string[]; listed: string[] } | undefined;

/**
 * The system folders split for a script (code.ts): `files`, every part of SYSTEM_DIRS but the
 * program folders of /usr and /usr/local (and /bin, /sbin), whose files it may read; `listed`, those
 * program folders, which it may only list. A script then reads no program file outside its
 * executable set, so the dynamic loader, which it must be able to execute, cannot map an installed
 * program it may not start (`ld.so /usr/bin/perl`). Read once: a few names.
 */
export function systemDirsWithoutPrograms(): { files: string[]; listed: string[] } {
  if (withoutPrograms !== undefined) return withoutPrograms;
  const files: string[] = [];
  const listed: string[] = [];
  const split = (dir: string, depth: number) => {
    let names: fs.Dirent[];
    try {
      names = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of names) {
      const full = path.join(dir, e.name);
      if (PROGRAM_DIRS.has(e.name)) listed.push(full);
      else if (depth === 0 && e.name === 'local' && e.isDirectory()) split(full, 1);
      else files.push(full);
    }
  };
  split('/usr', 0);
  for (const dir of SYSTEM_DIRS) if (dir !== '/usr') (PROGRAM_DIRS.has(path.basename(dir)) ? listed : files).push(dir);
  withoutPrograms = { files, listed };
  return withoutPrograms;
}

/**
 * /etc files and folders common tools read: the loader cache, alternatives (awk), certificates (curl,
 * git), time zone, MIME and magic data (file), the admin's git defaults (git stops when it exists
 * but cannot be read), ImageMagick's own policy, fonts, XML catalogs, matplotlib's defaults (Debian's
 * python3-matplotlib reads them there).
 */
export const ETC_READONLY = [
  '/etc/ld.so.cache', '/etc/alternatives', '/etc/ssl', '/etc/ca-certificates', '/etc/localtime', '/etc/mime.types', '/etc/magic',
  '/etc/gitconfig', '/etc/ImageMagick-6', '/etc/ImageMagick-7', '/etc/fonts', '/etc/xml', '/etc/matplotlibrc',
];
/** Name resolution, only for a command allowed on the network. */
export const ETC_NETWORK = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/gai.conf', '/etc/host.conf'];
/** Devices a command may write (a sink, a source of zeros, a full disk) and read (randomness). */
export const DEVICES_RW = ['/dev/null', '/dev/zero', '/dev/full'];
export const DEVICES_RO = ['/dev/urandom', '/dev/random'];

const programCache = new Map<string, string>();

/** Absolute path of an installed program on the system PATH (never the zone), or undefined. Misses are not cached: an admin may install it. */
export function findProgram(name: string): string | undefined {
  const cached = programCache.get(name);
  if (cached !== undefined) return cached;
  let found: string | undefined;
  for (const dir of SYSTEM_PATH.split(':')) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) {
        found = candidate;
        break;
      }
    } catch {
      // not here
    }
  }
  if (found !== undefined) programCache.set(name, found);
  return found;
}

/** The program's absolute path, or COMMAND_NOT_FOUND naming the Debian package to install. */
export function requireProgram(cmd: string): string {
  const found = findProgram(cmd);
  if (found !== undefined) return found;
  throw shedError('COMMAND_NOT_FOUND', `The command '${cmd}' is allowed but not installed on this server.`, {
    details: { parameter: 'cmd', received: cmd, package: packageFor(cmd) },
    hint: `An admin can install the Debian package '${packageFor(cmd)}'. shed_allowed_commands() lists what is available.`,
  });
}
