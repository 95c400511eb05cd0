/**
 * The plan of a script (src/core/services/exec/code/plan.ts), for what the real runs cannot show on this kernel:
 * Landlock below ABI 6 refuses scripts, validated refuses them, and the shell's executable set holds
 * sh and the whitelist but no program whose chain holds an interpreter; Python's only the interpreter
 * and its loader.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { planScript, shellExecutables } from '../../src/core/services/exec/code/plan.js';
import type { SandboxStatus } from '../../src/core/services/exec/launcher/sandbox.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';
import { defaultValves } from '../../src/core/base/valves.js';

const status = (active: SandboxStatus['active'], landlockAbi?: number): SandboxStatus => ({ configured: active, active, reason: 'test', ...(landlockAbi !== undefined ? { landlockAbi } : {}) });
const refusal = async (fn: () => Promise<unknown>) => {
  try {
    await fn();
  } catch (err) {
    return err as { code: string; message: string; hint?: string };
  }
  throw new Error('not refused');
};

describe('planScript', () => {
  const valves = defaultValves();

  it('refuses validated mode and Landlock below ABI 6, saying what to enable', async () => {
    for (const kind of ['python', 'shell'] as const) {
      const v = await refusal(() => planScript({ kind, code: 'x' }, valves, false, status('validated')));
      expect(v.code).toBe('SANDBOX_UNAVAILABLE');
      expect(v.hint).toMatch(/sandbox/);
      const old = await refusal(() => planScript({ kind, code: 'x' }, valves, false, status('landlock', 5)));
      expect(old.code).toBe('SANDBOX_UNAVAILABLE');
      expect(old.message).toContain('ABI 6');
    }
    expect((await planScript({ kind: 'shell', code: 'x' }, valves, false, status('landlock', 6))).program).toBe(findProgram('sh'));
  });

  it('Python executes only its interpreter and the loader; the network only with network_mode "all"', async () => {
    const plan = await planScript({ kind: 'python', code: 'pass' }, valves, false, status('bwrap', 7));
    const real = fs.realpathSync(findProgram('python3')!);
    expect(plan.executables).toContain(real);
    expect(plan.executables.every((p) => p === real || p === findProgram('python3') || /ld-linux|ld\.so|\/lib/.test(p))).toBe(true);
    expect(plan.policy.network).toBe(false);
    expect((await planScript({ kind: 'python', code: 'pass' }, { ...valves, network_mode: 'safe' }, false, status('bwrap', 7))).policy.network).toBe(false);
    expect((await planScript({ kind: 'python', code: 'pass' }, { ...valves, network_mode: 'all' }, false, status('bwrap', 7))).policy.network).toBe(true);
    const missing = await refusal(() => planScript({ kind: 'python', code: 'pass' }, { ...valves, python_command: 'python-not-here' }, false, status('bwrap', 7)));
    expect(missing.code).toBe('COMMAND_NOT_FOUND');
  });

  it('the shell executes sh and whitelisted programs, never an interpreter or a program that starts one', async () => {
    const sh = findProgram('sh')!;
    const set = await shellExecutables(sh, false, false);
    expect(set).toContain(fs.realpathSync(sh));
    expect(set).toContain(fs.realpathSync(findProgram('ls')!));
    for (const name of ['python3', 'perl', 'bash', 'node', 'curl']) {
      const p = findProgram(name);
      if (p !== undefined) expect(set, name).not.toContain(fs.realpathSync(p));
    }
    // yq is a Python program on Debian: left out with its whole chain.
    const yq = findProgram('yq');
    if (yq !== undefined && fs.readFileSync(yq, 'utf8').startsWith('#!') && /python/.test(fs.readFileSync(yq, 'utf8').split('\n')[0]!)) expect(set).not.toContain(fs.realpathSync(yq));
    // Uploads: the read-only list (no rm); curl only with the network on.
    expect(await shellExecutables(sh, true, false)).not.toContain(fs.realpathSync(findProgram('rm')!));
    const curl = findProgram('curl');
    if (curl !== undefined) expect(await shellExecutables(sh, false, true)).toContain(fs.realpathSync(curl));
  });
});
