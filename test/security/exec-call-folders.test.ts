/**
 * The call's own folders (HOME and TMPDIR in landlock and validated modes) do not outlive it: removed
 * after the command (also what it left without write permission), at exit if the process ends before
 * the background removal, and, for a process that was killed, by the next process once a day old.
 * A folder left behind would hand the next call whatever an earlier one wrote there.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const BUNDLE = path.resolve('dist/fileshed.mjs');

/** Runs shed_exec calls in a server process whose system temp folder is `tmp`; returns their responses. */
async function serverWith(tmp: string, mode: string, calls: { cmd: string; args: string[] }[]): Promise<{ success: boolean; data?: { returncode: number; stderr: string } }[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-folders-base-'));
  try {
    fs.mkdirSync(path.join(base, 'users', 'u', 'Storage', 'data'), { recursive: true });
    const script = `
      const { Tools } = await import(${JSON.stringify(BUNDLE)});
      const t = new Tools();
      t.valves = { ...t.valves, storage_base_path: ${JSON.stringify(base)}, sandbox: ${JSON.stringify(mode)} };
      const who = { __user__: { id: 'u', name: 'U' }, __metadata__: { chat_id: 'c' } };
      const out = [];
      for (const c of ${JSON.stringify(calls)}) out.push(JSON.parse(await t.shed_exec({ ...who, zone: 'storage', ...c })));
      process.stdout.write(JSON.stringify(out));
      process.exit(0); // at once: background removals have not finished`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise((r) => child.on('close', r));
    expect(out, err).not.toBe('');
    return JSON.parse(out);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

describe.each(['landlock', 'validated'])('%s mode', (mode) => {
  it('no call folder is left once the process exits, even right after the call (also what the command made in TMPDIR)', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-folders-tmp-'));
    fs.chmodSync(tmp, 0o711); // passable, as /tmp is: commands run as the user's own uid (identity separation)
    try {
      // mktemp -d without arguments makes a folder in TMPDIR; sort -T names it for its temp files.
      const rs = await serverWith(tmp, mode, [{ cmd: 'mktemp', args: ['-d'] }, { cmd: 'mktemp', args: [] }, { cmd: 'true', args: [] }]);
      for (const r of rs) expect(r.data?.returncode, JSON.stringify(r)).toBe(0);
      expect(fs.readdirSync(tmp).filter((n) => n.startsWith('shed-call-'))).toEqual([]);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('call folders of a killed process are removed by the next process once a day old; recent ones are not', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-folders-tmp-'));
    fs.chmodSync(tmp, 0o711); // passable, as /tmp is (identity separation)
    try {
      const old = path.join(tmp, 'shed-call-killed');
      const recent = path.join(tmp, 'shed-call-running');
      for (const dir of [old, recent]) fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
      fs.writeFileSync(path.join(old, 'tmp', 'left.txt'), 'x');
      const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
      fs.utimesSync(old, twoDaysAgo, twoDaysAgo);
      // The sweep runs in the background from the first command; a few calls give it time.
      await serverWith(tmp, mode, Array.from({ length: 5 }, () => ({ cmd: 'true', args: [] })));
      expect(fs.existsSync(old)).toBe(false);
      expect(fs.existsSync(recent)).toBe(true);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
