/**
 * The sandbox (SPEC section 8): bubblewrap when it works, so a command sees only its zone (at
 * /zone), read-only system folders, a private /tmp, no network unless allowed, its own PID
 * namespace, no capabilities, and dies with us. Valve `sandbox`: auto (probe once, fall back to
 * validated), bwrap (required), validated (argument policy only).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shedError } from '../errors.js';
import { packageFor } from './commands.js';

export type SandboxSetting = 'auto' | 'bwrap' | 'validated';

export interface SandboxStatus {
  configured: SandboxSetting;
  active: 'bwrap' | 'validated';
  reason: string;
}

/** Where the zone appears inside the sandbox (and how disk paths are shown in output). */
export const SANDBOX_ZONE = '/zone';

const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Read-only files and folders of /etc that common tools need (alternatives for awk, certificates for curl). */
const ETC_READONLY = ['/etc/alternatives', '/etc/ssl', '/etc/ca-certificates', '/etc/localtime', '/etc/mime.types', '/etc/magic'];
const ETC_NETWORK = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/gai.conf'];

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
  args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
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
  args.push('--chdir', SANDBOX_ZONE, '--unshare-all');
  if (opts.network) args.push('--share-net');
  // No --new-session: the runner starts bwrap in a session of its own (setsid, no controlling terminal,
  // no terminal descriptor passed), and the sandbox stays in it, so one process group and one
  // scheduling group (autogroup) hold the whole command.
  args.push('--die-with-parent', '--cap-drop', 'ALL');
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

let probe: Promise<{ ok: boolean; reason: string }> | undefined;

/** Runs `true` in a throwaway sandbox once per process. */
function probeBwrap(): Promise<{ ok: boolean; reason: string }> {
  probe ??= new Promise((resolve) => {
    const bwrap = findProgram('bwrap');
    if (bwrap === undefined) {
      resolve({ ok: false, reason: 'bubblewrap (bwrap) is not installed (Debian package: bubblewrap)' });
      return;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-probe-'));
    const child = spawn(bwrap, [...bwrapArgs({ zoneRoot: dir, readonly: false, network: false, protect: [] }), '--', '/usr/bin/true'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: SYSTEM_PATH },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    const done = (ok: boolean, reason: string) => {
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ ok, reason });
    };
    child.on('error', (err) => done(false, `bwrap could not start: ${err.message}`));
    child.on('close', (code) => done(code === 0, code === 0 ? 'bubblewrap works on this server' : `bubblewrap failed its test run: ${stderr.trim().split('\n')[0] ?? `exit ${code}`}`));
  });
  return probe;
}

export async function sandboxStatus(configured: SandboxSetting): Promise<SandboxStatus> {
  if (configured === 'validated') return { configured, active: 'validated', reason: 'the admin chose argument validation only (valve sandbox="validated")' };
  const { ok, reason } = await probeBwrap();
  if (ok) return { configured, active: 'bwrap', reason };
  if (configured === 'bwrap') {
    throw shedError('SANDBOX_UNAVAILABLE', `Commands are disabled: the admin requires the bubblewrap sandbox, but ${reason}.`, {
      details: { sandbox: configured },
      hint: 'An admin must install bubblewrap or set the valve sandbox to "auto". File functions (shed_read, shed_create_file, ...) still work.',
    });
  }
  return { configured, active: 'validated', reason: `${reason}; falling back to argument validation` };
}

/** For shed_parameters and shed_allowed_commands: the same answer as sandboxStatus, never an error. */
export async function sandboxReport(configured: SandboxSetting): Promise<{ configured: SandboxSetting; active: string; reason: string }> {
  try {
    return await sandboxStatus(configured);
  } catch {
    const { reason } = await probeBwrap();
    return { configured, active: 'none (commands refused)', reason: `the admin requires bubblewrap, but ${reason}` };
  }
}

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

export { SYSTEM_PATH };

/** The program's absolute path, or COMMAND_NOT_FOUND naming the Debian package to install. */
export function requireProgram(cmd: string): string {
  const found = findProgram(cmd);
  if (found !== undefined) return found;
  throw shedError('COMMAND_NOT_FOUND', `The command '${cmd}' is allowed but not installed on this server.`, {
    details: { parameter: 'cmd', received: cmd, package: packageFor(cmd) },
    hint: `An admin can install the Debian package '${packageFor(cmd)}'. shed_allowed_commands() lists what is available.`,
  });
}
