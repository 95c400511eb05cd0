/**
 * The bubblewrap sandbox (bwrap mode): a command sees only its zone (at /zone), read-only system
 * folders, a private /tmp (its home folder and temp files, fresh for each call), no network unless
 * allowed, its own PID namespace, no capabilities, and dies with us.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ETC_NETWORK, ETC_READONLY } from './system.js';

/** Where the zone appears inside the sandbox (and how disk paths are shown in output). */
export const SANDBOX_ZONE = '/zone';
/** The call's home folder inside the sandbox: empty, in the private /tmp. */
export const SANDBOX_HOME = '/tmp/home';

export interface BwrapOptions {
  zoneRoot: string;
  readonly: boolean;
  network: boolean;
  /** Entries inside the zone that stay read-only even in a writable zone. */
  protect: readonly string[];
}

export function bwrapArgs(opts: BwrapOptions): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of ['bin', 'sbin', 'lib', 'lib64', 'lib32']) {
    const host = `/${dir}`;
    const st = fs.lstatSync(host, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(host), host);
    else if (st?.isDirectory()) args.push('--ro-bind', host, host);
  }
  for (const p of [...ETC_READONLY, ...(opts.network ? ETC_NETWORK : [])]) args.push('--ro-bind-try', p, p);
  args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--dir', SANDBOX_HOME);
  args.push(opts.readonly ? '--ro-bind' : '--bind', opts.zoneRoot, SANDBOX_ZONE);
  // Each folder above a protected entry is bound onto itself (still writable): a mount point cannot
  // be renamed or removed, so `mv folder elsewhere` cannot carry a protected file away. These come
  // first, shallowest first: a later bind would hide the read-only mounts below it.
  const pins = new Set<string>();
  for (const rel of opts.protect) {
    const parts = rel.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) pins.add(parts.slice(0, i).join('/'));
  }
  for (const rel of [...pins].sort((a, b) => a.split('/').length - b.split('/').length)) {
    const inside = path.join(opts.zoneRoot, rel);
    if (!fs.lstatSync(inside, { throwIfNoEntry: false })?.isDirectory()) continue;
    // Bind only what really lies inside the zone (a folder swapped for a link must not pull in an outside folder).
    const real = fs.realpathSync(inside);
    if (real !== inside || !real.startsWith(`${opts.zoneRoot}${path.sep}`)) continue;
    args.push(opts.readonly ? '--ro-bind' : '--bind', real, path.posix.join(SANDBOX_ZONE, rel));
  }
  for (const rel of opts.protect) {
    const inside = path.join(opts.zoneRoot, rel);
    if (fs.existsSync(inside)) args.push('--ro-bind', inside, path.posix.join(SANDBOX_ZONE, rel));
  }
  args.push('--chdir', SANDBOX_ZONE, '--unshare-all');
  if (opts.network) args.push('--share-net');
  // No --new-session: the runner starts the launcher (which runs bwrap) in a session of its own (setsid,
  // no controlling terminal, no terminal descriptor passed), and the sandbox stays in it, so one
  // process group and one scheduling group (autogroup) hold the whole command.
  args.push('--die-with-parent', '--cap-drop', 'ALL');
  return args;
}
