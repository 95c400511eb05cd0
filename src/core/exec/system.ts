/**
 * The parts of the server's system a command may use, whatever the sandbox: programs found on the
 * system PATH (never in a zone), the system folders they load from, and the few /etc files and
 * devices they need. bubblewrap mounts these read-only; Landlock grants read on them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../errors.js';
import { packageFor } from './commands.js';

export const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Folders of programs and their libraries (links to /usr on merged-/usr systems). */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'];

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
