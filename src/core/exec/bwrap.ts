/**
 * The bubblewrap sandbox (bwrap mode): a command sees only its zone (at /zone), read-only system
 * folders, a private /tmp (its home folder and temp files, fresh for each call: the inner launcher
 * mounts it, size-bounded), no network unless allowed, its own PID namespace, and dies with us.
 * bubblewrap leaves the inner launcher (launcher.ts) its capabilities, which it needs for its own
 * mounts and drops, every one, before the program starts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ETC_NETWORK, ETC_READONLY } from './system.js';

/** Where the zone appears inside the sandbox (and how disk paths are shown in output). */
export const SANDBOX_ZONE = '/zone';
/** The sandbox's private temp folder, and the call's home folder in it (empty). */
export const SANDBOX_TMP = '/tmp';
export const SANDBOX_HOME = '/tmp/home';

export interface BwrapOptions {
  zoneRoot: string;
  readonly: boolean;
  network: boolean;
  /** Entries inside the zone that stay read-only even in a writable zone (.git of versioned zones, group files the caller may not change). */
  protect: readonly string[];
  /** Blocked entries (valve blocked_patterns): files get an empty read-only file over them, folders an empty read-only folder. */
  mask?: { files: readonly string[]; dirs: readonly string[] } | undefined;
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
  args.push('--dev', '/dev', '--proc', '/proc', '--dir', SANDBOX_TMP);
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
  args.push(...maskArgs(opts));
  args.push('--chdir', SANDBOX_ZONE);
  args.push('--unshare-all');
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

/**
 * Mounts that hide blocked entries: /dev/null (read-only) over a file, an empty read-only tmpfs over
 * a folder. Only entries that are really what the walk saw (no links) are masked; shallow first.
 */
function maskArgs(opts: BwrapOptions): string[] {
  if (!opts.mask) return [];
  const out: string[] = [];
  const depth = (rel: string) => rel.split('/').length;
  for (const rel of [...opts.mask.dirs].sort((a, b) => depth(a) - depth(b))) {
    if (!fs.lstatSync(path.join(opts.zoneRoot, rel), { throwIfNoEntry: false })?.isDirectory()) continue;
    const inside = path.posix.join(SANDBOX_ZONE, rel);
    out.push('--tmpfs', inside, '--remount-ro', inside);
  }
  for (const rel of opts.mask.files) {
    if (!fs.lstatSync(path.join(opts.zoneRoot, rel), { throwIfNoEntry: false })?.isFile()) continue;
    out.push('--ro-bind', '/dev/null', path.posix.join(SANDBOX_ZONE, rel));
  }
  return out;
}
