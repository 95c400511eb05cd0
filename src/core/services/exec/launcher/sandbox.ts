/**
 * Which sandbox commands run in (SPEC section 8), valve `sandbox`:
 * - `auto`: bubblewrap if it works here, else Landlock if it works, else commands are refused;
 * - `bwrap`, `landlock`: that one, or commands are refused;
 * - `validated`: the argument policy alone, no kernel confinement (weaker; only by the admin's choice).
 * Each kernel sandbox is tried once per process: a real command must run in it, and (Landlock) a
 * read outside its zone must be refused. Both need Landlock: bubblewrap applies it inside the sandbox
 * (only the command's programs are executable there too).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shedError } from '../../../base/errors.js';
import { writeBytes } from '../../../base/fs/read.js';
import { executablesFor } from './executables.js';
import { archCalls, launcherPerl } from './launcher.js';
import { run } from './runner.js';
import type { RunRequest } from './run-types.js';
import { findProgram } from './system.js';
import type { SandboxMode, SandboxSetting } from '../modes.js';


export interface SandboxStatus {
  configured: SandboxSetting;
  active: SandboxMode;
  reason: string;
  /** The Landlock ABI in force (bwrap and landlock modes). */
  landlockAbi?: number;
}

export interface Probe {
  ok: boolean;
  reason: string;
  abi?: number;
}

const probes = new Map<'bwrap' | 'landlock', Promise<Probe>>();

function probe(mode: 'bwrap' | 'landlock'): Promise<Probe> {
  let p = probes.get(mode);
  if (p === undefined) {
    p = (mode === 'bwrap' ? probeBwrap() : probeLandlock()).catch((err: unknown) => ({ ok: false, reason: `its test run failed: ${(err as Error).message}` }));
    probes.set(mode, p);
  }
  return p;
}

/** A throwaway zone, and a file outside it. */
async function withProbeFolders<T>(fn: (zone: string, outside: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-probe-'));
  try {
    fs.mkdirSync(path.join(dir, 'zone'));
    writeBytes(path.join(dir, 'outside.txt'), 'outside\n');
    return await fn(path.join(dir, 'zone'), path.join(dir, 'outside.txt'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function probeRequest(zone: string, sandbox: RunRequest['sandbox'], program: string, args: string[] = []): RunRequest {
  return {
    program, args, zoneRoot: zone, readonly: false, sandbox, network: false,
    timeoutSec: 10, memoryMb: 0, cpuSec: 0, maxFileBytes: 1 << 20, maxProcesses: 64, captureBytes: 4096, mergeStderr: true,
  };
}

const firstLine = (b: Buffer) => b.toString().trim().split('\n')[0] ?? '';

const landlockFor = (abi: number, program: string) => ({ abi, executables: executablesFor(path.basename(program), program) });

async function probeBwrap(): Promise<Probe> {
  if (findProgram('bwrap') === undefined) return { ok: false, reason: 'bubblewrap (bwrap) is not installed (Debian package: bubblewrap)' };
  const truePath = findProgram('true') ?? '/usr/bin/true';
  const { abi, reason } = await kernelLandlock();
  if (abi < 1) return { ok: false, reason: `${reason} (bubblewrap applies Landlock inside the sandbox, so that only the command's programs can run)` };
  const r = await withProbeFolders((zone) => run({ ...probeRequest(zone, 'bwrap', truePath), landlock: landlockFor(abi, truePath) }));
  if (r.refused !== undefined) return { ok: false, reason: `bubblewrap failed its test run: ${r.refused} (user namespaces may be disabled, or forbidden by a container's seccomp profile)` };
  if (r.returncode !== 0) return { ok: false, reason: `bubblewrap failed its test run: ${firstLine(r.stdout.bytes) || `exit ${r.returncode}`}` };
  return { ok: true, abi, reason: 'bubblewrap works on this server' };
}

let abiProbe: Promise<{ abi: number; reason: string }> | undefined;

/** The kernel's Landlock ABI (0 when it has none, with the reason), asked once by a Perl one-liner run like any command. */
function kernelLandlock(): Promise<{ abi: number; reason: string }> {
  abiProbe ??= (async () => {
    if (archCalls() === undefined) return { abi: 0, reason: `commands cannot be confined on this processor architecture (${process.arch})` };
    const perl = launcherPerl();
    if (perl === undefined) return { abi: 0, reason: 'perl (Debian package perl-base), which applies the Landlock rules, is not installed' };
    const r = await withProbeFolders((zone) => run(probeRequest(zone, 'validated', perl, ['-e', 'my $v = syscall(444, 0, 0, 1); print $v < 0 ? "0 $!" : $v'])));
    const [abi, ...why] = r.stdout.bytes.toString().trim().split(' ');
    const error = r.refused ?? why.join(' ');
    return Number(abi) >= 1
      ? { abi: Number(abi), reason: '' }
      : { abi: 0, reason: `the kernel offers no Landlock (${error || 'unknown'}): it needs Linux 5.13 or later with "landlock" in its LSM list (boot option lsm=)` };
  })();
  return abiProbe;
}

async function probeLandlock(): Promise<Probe> {
  const cat = findProgram('cat');
  const truePath = findProgram('true');
  if (cat === undefined || truePath === undefined) return { ok: false, reason: 'coreutils (cat, true) are not installed' };
  const { abi, reason } = await kernelLandlock();
  if (abi < 1) return { ok: false, reason };
  return withProbeFolders(async (zone, outside) => {
    const landlock = (program: string) => landlockFor(abi, program);
    const ok = await run({ ...probeRequest(zone, 'landlock', truePath), landlock: landlock(truePath) });
    if (ok.refused !== undefined) return { ok: false, reason: `Landlock could not be applied: ${ok.refused}` };
    if (ok.returncode !== 0) return { ok: false, reason: `a command did not run under Landlock: ${firstLine(ok.stdout.bytes) || `exit ${ok.returncode}`}` };
    const denied = await run({ ...probeRequest(zone, 'landlock', cat, [outside]), landlock: landlock(cat) });
    if (denied.returncode === 0) return { ok: false, reason: 'Landlock did not refuse a read outside the zone' };
    return { ok: true, abi, reason: `Landlock (ABI ${abi}) works on this server` };
  });
}

function unavailable(configured: SandboxSetting, why: string): Error {
  const fix =
    configured === 'bwrap'
      ? 'install bubblewrap and allow unprivileged user namespaces (in Docker: a seccomp profile that allows them), or set the valve sandbox to "auto"'
      : configured === 'landlock'
        ? 'run a kernel with Landlock (Linux 5.13 or later, "landlock" in the lsm= boot list), or set the valve sandbox to "auto"'
        : 'install bubblewrap with unprivileged user namespaces allowed, or run a kernel with Landlock (Linux 5.13 or later, "landlock" in the lsm= boot list), or set the valve sandbox="validated" to accept the argument checks alone (weaker)';
  return shedError('SANDBOX_UNAVAILABLE', `Commands are disabled: ${why}.`, {
    details: { sandbox: configured },
    hint: `An admin must ${fix}. File functions (shed_read, shed_create_file, ...) still work.`,
  });
}

/** Each kernel sandbox's own verdict on this machine (fileshed doctor): the probes sandboxStatus uses. */
export async function kernelSandboxes(): Promise<{ bwrap: Probe; landlock: Probe }> {
  const [bwrap, landlock] = await Promise.all([probe('bwrap'), probe('landlock')]);
  return { bwrap, landlock };
}

/**
 * The sandbox commands run in. `unconfinedAllowed` false (a server for several users started
 * without --allow-unconfined): valve sandbox="validated" refuses commands instead.
 */
export async function sandboxStatus(configured: SandboxSetting, unconfinedAllowed = true): Promise<SandboxStatus> {
  if (configured === 'validated') {
    if (!unconfinedAllowed) {
      throw shedError('SANDBOX_UNAVAILABLE', 'Commands are disabled: the valve sandbox is "validated" (argument checks only, no kernel confinement), which is meant for one local user, and this server serves several users without --allow-unconfined.', {
        details: { sandbox: configured },
        hint: 'An admin must set the valve sandbox back to "auto" (or "bwrap"/"landlock"), or restart fileshed serve with --allow-unconfined to accept running commands unconfined. File functions (shed_read, shed_create_file, ...) still work.',
      });
    }
    return { configured, active: 'validated', reason: 'UNCONFINED: the admin chose argument validation only (valve sandbox="validated"): no kernel confinement, weaker' };
  }
  if (configured !== 'landlock') {
    const bwrap = await probe('bwrap');
    if (bwrap.ok) return { configured, active: 'bwrap', reason: bwrap.reason, landlockAbi: bwrap.abi! };
    if (configured === 'bwrap') throw unavailable(configured, `the admin requires the bubblewrap sandbox, but ${bwrap.reason}`);
    const landlock = await probe('landlock');
    if (landlock.ok) return { configured, active: 'landlock', reason: `${landlock.reason} (bubblewrap: ${bwrap.reason})`, landlockAbi: landlock.abi! };
    throw unavailable(configured, `no kernel sandbox works on this server (bubblewrap: ${bwrap.reason}; Landlock: ${landlock.reason})`);
  }
  const landlock = await probe('landlock');
  if (landlock.ok) return { configured, active: 'landlock', reason: landlock.reason, landlockAbi: landlock.abi! };
  throw unavailable(configured, `the admin requires the Landlock sandbox, but ${landlock.reason}`);
}

export interface SandboxReport {
  configured: SandboxSetting;
  active: string;
  reason: string;
  /** The Landlock ABI in force (bwrap and landlock modes), or null when commands do not run under Landlock. */
  landlock_abi: number | null;
  /** Commands run without kernel confinement (validated mode): said plainly wherever the mode is shown. */
  unconfined: boolean;
}

/** For shed_parameters, shed_allowed_commands, /healthz and the admin page: sandboxStatus, never an error. */
export async function sandboxReport(configured: SandboxSetting, unconfinedAllowed = true): Promise<SandboxReport> {
  try {
    const s = await sandboxStatus(configured, unconfinedAllowed);
    return { configured, active: s.active, reason: s.reason, landlock_abi: s.landlockAbi ?? null, unconfined: s.active === 'validated' };
  } catch (err) {
    return { configured, active: 'none (commands refused)', reason: (err as Error).message, landlock_abi: null, unconfined: false };
  }
}
