/**
 * Which sandbox a server gets, on the kernels it meets: the server (the built bundle, in a child
 * process) runs under a seccomp filter that takes away what a deployment may lack. Docker's default
 * profile refuses user namespaces (bubblewrap cannot start) but allows Landlock: `auto` must pick
 * landlock there. Without Landlock either, `auto` refuses commands with SANDBOX_UNAVAILABLE saying
 * what to enable, unless the admin chose `validated`; a required mode that does not work refuses.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { archCalls } from '../../src/core/services/exec/launcher/launcher.js';
import { INNER_SCRIPT } from '../../src/core/services/exec/launcher/launcher-script.js';
import { encodeFilter, type Insn } from '../../src/core/services/exec/launcher/seccomp.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';

const BUNDLE = path.resolve('dist/fileshed.mjs');
const CLONE_NEWUSER = 0x10000000;
const EPERM = 1;
const ENOSYS = 38;
// System call numbers (x86_64 / arm64).
const CALLS = process.arch === 'arm64' ? { unshare: 97, clone: 220, clone3: 435 } : { unshare: 272, clone: 56, clone3: 435 };

/** A seccomp filter (hex) refusing user namespaces (as Docker's default profile does) and, if asked, Landlock. */
function filter(noLandlock: boolean): string {
  const insns: Insn[] = [
    [0x20, 0, 0, 0], // load nr
    [0x15, 0, 1, CALLS.clone3], [0x06, 0, 0, 0x00050000 | ENOSYS], // clone3: flags out of reach, so ENOSYS (glibc falls back to clone)
    [0x15, 1, 0, CALLS.unshare], [0x15, 0, 3, CALLS.clone], // unshare or clone:
    [0x20, 0, 0, 16], // load args[0] (flags)
    [0x45, 0, 1, CLONE_NEWUSER], [0x06, 0, 0, 0x00050000 | EPERM], // refuse CLONE_NEWUSER
    [0x20, 0, 0, 0], // load nr again
  ];
  if (noLandlock) insns.push([0x35, 0, 2, 444], [0x35, 1, 0, 447], [0x06, 0, 0, 0x00050000 | ENOSYS]); // 444..446 → ENOSYS
  insns.push([0x06, 0, 0, 0x7fff0000]);
  return encodeFilter(insns);
}

/** Runs shed_parameters and shed_exec(cat) in a server process under the filter; returns both responses. */
async function server(sandbox: string, noLandlock: boolean): Promise<{ parameters: any; exec: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON responses
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-select-'));
  try {
    fs.mkdirSync(path.join(base, 'users', 'u', 'Storage', 'data'), { recursive: true });
    fs.writeFileSync(path.join(base, 'users', 'u', 'Storage', 'data', 'a.txt'), 'inside\n');
    const script = `
      const { Tools } = await import(${JSON.stringify(BUNDLE)});
      const t = new Tools();
      t.valves = { ...t.valves, storage_base_path: ${JSON.stringify(base)}, sandbox: ${JSON.stringify(sandbox)} };
      const who = { __user__: { id: 'u', name: 'U', role: 'admin' }, __metadata__: { chat_id: 'c' } };
      const parameters = JSON.parse(await t.shed_parameters(who));
      const exec = JSON.parse(await t.shed_exec({ ...who, zone: 'storage', cmd: 'cat', args: ['a.txt'] }));
      process.stdout.write(JSON.stringify({ parameters, exec }));`;
    // The launcher's inner script confines the server as a container would: no capabilities, no new privileges, the filter.
    const nr = Object.entries(archCalls()!.nr).flatMap(([name, n]) => ['nr', `${name}=${n}`]);
    const child = spawn(findProgram('perl')!, ['-e', INNER_SCRIPT, ...nr, 'bpf', filter(noLandlock), '--', process.execPath, '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise((r) => child.on('close', r));
    expect(out, err).not.toBe('');
    return JSON.parse(out);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

describe('sandbox selection', () => {
  it('Docker default (no user namespaces, Landlock allowed): auto picks landlock, and commands run', async () => {
    const { parameters, exec } = await server('auto', false);
    expect(parameters.data.sandbox).toMatchObject({ configured: 'auto', active: 'landlock' });
    expect(parameters.data.sandbox.landlock_abi).toBeGreaterThanOrEqual(1);
    expect(parameters.data.sandbox.reason).toMatch(/Landlock \(ABI \d+\) works.*bubblewrap/);
    expect(exec.data).toMatchObject({ stdout: 'inside\n', returncode: 0, sandbox: 'landlock' });
  });

  it('no user namespaces and no Landlock: auto refuses commands with SANDBOX_UNAVAILABLE saying what to enable', async () => {
    const { parameters, exec } = await server('auto', true);
    expect(parameters.data.sandbox).toMatchObject({ configured: 'auto', active: 'none (commands refused)', landlock_abi: null });
    expect(exec.success).toBe(false);
    expect(exec.error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(exec.error.message).toMatch(/bubblewrap: .*Landlock: /);
    expect(exec.error.hint).toMatch(/bubblewrap/);
    expect(exec.error.hint).toMatch(/Landlock \(Linux 5\.13/);
    expect(exec.error.hint).toContain('sandbox="validated"');
  });

  it('the same server with sandbox="validated" (the admin accepts the weaker mode) runs commands', async () => {
    const { parameters, exec } = await server('validated', true);
    expect(parameters.data.sandbox).toMatchObject({ configured: 'validated', active: 'validated' });
    expect(exec.data).toMatchObject({ stdout: 'inside\n', returncode: 0, sandbox: 'validated' });
  });

  it.each([
    ['bwrap', false, /bubblewrap/],
    ['landlock', true, /Landlock/],
  ] as const)('sandbox="%s" required where it does not work: commands refused, never run weaker', async (mode, noLandlock, named) => {
    const { exec } = await server(mode, noLandlock);
    expect(exec.error?.code).toBe('SANDBOX_UNAVAILABLE');
    expect(exec.error.message).toMatch(named);
  });
});
