/**
 * Helpers for versioning tests: the real git binary, isolated from any user or system config, run
 * on the repositories our code writes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import type { Identity } from '../../src/core/base/identity.js';
import type { Zone } from '../../src/core/base/zones/zones.js';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-git-home-'));
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));
export const GIT_ENV = {
  ...process.env,
  HOME: home,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: path.join(home, 'none'),
  GIT_TERMINAL_PROMPT: '0',
  LC_ALL: 'C',
  TZ: 'UTC',
  // Fileshed prints UTF-8 names as they are (git's core.quotePath=false); compare with the same setting.
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'core.quotepath',
  GIT_CONFIG_VALUE_0: 'false',
};

/**
 * Where real git looks: for a versioned zone's work tree (`…/data` with `…/git` beside it, the
 * layout of SPEC section 4) `--git-dir=…/git --work-tree=…/data`, as an admin would type it;
 * for any other folder, the folder itself (`-C dir`).
 */
export function gitWhere(dir: string): string[] {
  const gitdir = path.join(path.dirname(dir), 'git');
  return path.basename(dir) === 'data' && fs.existsSync(gitdir) ? [`--git-dir=${gitdir}`, `--work-tree=${dir}`, '-C', dir] : ['-C', dir];
}

/** The repository of a zone's work tree `data`: `git/` beside it (this layout), or `data/.git` (the layout of earlier versions). */
export function repoOf(data: string): string {
  const beside = path.join(path.dirname(data), 'git');
  return fs.existsSync(beside) ? beside : path.join(data, '.git');
}

/** Runs real git on `dir` (see gitWhere); throws on a non-zero exit. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', [...gitWhere(dir), ...args], { env: GIT_ENV, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** Runs real git and returns status and both outputs. */
export function gitRun(dir: string, ...args: string[]): { status: number; stdout: string; stderr: string } {
  const r = spawnSync('git', [...gitWhere(dir), ...args], { env: GIT_ENV, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** `git fsck --strict` must be silent and exit 0. */
export function fsckClean(dir: string): { ok: boolean; output: string } {
  const r = gitRun(dir, 'fsck', '--strict', '--no-progress', '--no-dangling');
  return { ok: r.status === 0 && r.stderr.trim() === '' && r.stdout.trim() === '', output: r.stdout + r.stderr };
}

export const ALICE: Identity = { id: 'alice', name: 'ALICE', email: '', role: 'user' };

/** A Documents-like zone on a plain temp folder, for calling the vcs API directly. */
export function tempZone(): Zone & { cleanup(): void } {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-vcs-')));
  const root = path.join(base, 'data');
  fs.mkdirSync(root);
  return {
    name: 'documents',
    label: 'Documents',
    root,
    workBase: base,
    versioned: true,
    readonly: false,
    scope: { key: `test:${base}`, limitBytes: 1024 * 1024 * 1024, trees: { Documents: root } },
    cleanup: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

export function put(root: string, rel: string, content: string | Uint8Array): void {
  const abs = path.join(root, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
}
