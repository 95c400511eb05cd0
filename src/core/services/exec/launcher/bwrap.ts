/**
 * The bubblewrap sandbox (bwrap mode): a command sees only its zone (at /zone), read-only system
 * folders, a private /tmp (its home folder and temp files, fresh for each call: the inner launcher
 * mounts it, size-bounded), no network unless allowed, its own PID namespace, and dies with us.
 * bubblewrap leaves the inner launcher (launcher.ts) its capabilities, which it needs for its own
 * mounts and drops, every one, before the program starts.
 */
import fs from 'node:fs';
import { ETC_NETWORK, ETC_READONLY } from './system.js';
import { magickPolicyDir, SANDBOX_MAGICK_DIR } from './magick.js';

/** Where the zone appears inside the sandbox (and how disk paths are shown in output). */
export const SANDBOX_ZONE = '/zone';
/** The sandbox's private temp folder, and the call's home folder in it (empty). */
export const SANDBOX_TMP = '/tmp';
export const SANDBOX_HOME = '/tmp/home';

export interface BwrapOptions {
  zoneRoot: string;
  readonly: boolean;
  network: boolean;
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
  args.push('--ro-bind', magickPolicyDir(), SANDBOX_MAGICK_DIR); // ImageMagick's policy (magick.ts), outside the private /tmp
  args.push('--dev', '/dev', '--proc', '/proc', '--dir', SANDBOX_TMP);
  args.push(opts.readonly ? '--ro-bind' : '--bind', opts.zoneRoot, SANDBOX_ZONE);
  args.push('--chdir', SANDBOX_ZONE, '--unshare-all');
  if (opts.network) args.push('--share-net');
  // One user namespace, in which the sandbox runs as uid 0 (the server's uid outside) and keeps its
  // capabilities: the inner launcher needs them for its mounts (with another uid inside, bubblewrap
  // would nest a second namespace that does not own the mounts) and drops every one before the
  // program starts. That namespace is also where RLIMIT_NPROC counts the command's own tasks.
  args.push('--uid', '0', '--gid', '0', '--cap-add', 'ALL');
  // No --new-session: the launcher starts bwrap in a session of its own (setsid, no controlling
  // terminal, no terminal descriptor passed), and the sandbox stays in it, so one scheduling group
  // (autogroup) holds the whole command.
  args.push('--die-with-parent');
  return args;
}
