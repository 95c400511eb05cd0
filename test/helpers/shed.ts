/**
 * Test harness: a Tools instance on a fresh temp storage folder, and a `call` that parses the JSON
 * result. Tests use the source by default; set FILESHED_TEST_DIST=1 to run them on dist/fileshed.mjs.
 * Every call runs under the event-loop lag probe (lag.ts): a call that holds the loop past 200 ms
 * fails its test, unless the test opts out ({ lagProbe: false } / { lag: false }).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as source from '../../src/index.js';
import { sqlEngine } from '../../src/core/services/db/engine.js';
import { childSource } from '../../src/core/services/db/node/children.js';
import { workerScript } from '../../src/core/base/work/pool.js';
import { checkLag, watchLag } from './lag.js';

type Module = typeof source;
const mod: Module = process.env.FILESHED_TEST_DIST ? ((await import('../../dist/fileshed.mjs' as string)) as Module) : source;

export interface Result {
  success: boolean;
  data?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test access to arbitrary result fields
  message?: string;
  /** The chat turn of a modifying call that changed files (SPEC 9.1). */
  turn?: string;
  error?: { code: string; message: string; details?: Record<string, unknown>; hint?: string };
}

export interface Shed {
  base: string;
  tools: InstanceType<Module['Tools']>;
  /** Calls a function as user `user` (default "alice") in conversation "c1". */
  call(fn: string, args?: Record<string, unknown>, as?: { user?: string; chat?: string; lag?: false }): Promise<Result>;
  /** Absolute path of a file in a personal zone, for arranging and checking files directly. */
  zonePath(zone: 'storage' | 'documents' | 'uploads', rel?: string, user?: string, chat?: string): string;
  cleanup(): void;
}

let warm: Promise<void> | undefined;

/**
 * Once per test process, before the first watched call: what running from source pays once and the
 * plugin bundle carries ready-made (the SQLite engine's WebAssembly compile, the worker pool's and
 * the SQLite child's esbuild bundles), so the probe sees the product's blocking, not the test setup's.
 */
function warmUp(): Promise<void> {
  warm ??= (async () => {
    await sqlEngine();
    if (!process.env.FILESHED_TEST_DIST) workerScript();
    const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    if (!process.env.FILESHED_TEST_DIST && getBuiltin?.('node:sqlite') !== undefined) childSource();
  })();
  return warm;
}

export interface ShedOptions {
  /** false: this Shed's calls are not watched (a test that measures lag itself). */
  lagProbe?: boolean;
}

export function makeShed(valves: Record<string, unknown> = {}, options: ShedOptions = {}): Shed {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-test-'));
  const tools = new mod.Tools();
  // identity_separation off unless a test asks: most suites arrange files in zones directly, as
  // root, which a user's own uid could then not change; test/ids, test/security/identity-* and the
  // group suites run with it on (the product's default, auto). FILESHED_TEST_VALVES (JSON): valves
  // every Shed starts with, under the test's own (e.g. a suite run again with identity on).
  const fromEnv = process.env.FILESHED_TEST_VALVES ? (JSON.parse(process.env.FILESHED_TEST_VALVES) as Record<string, unknown>) : {};
  tools.valves = { ...tools.valves, storage_base_path: base, identity_separation: 'off', ...fromEnv, ...valves };
  return {
    base,
    tools,
    async call(fn, args = {}, as = {}) {
      const user = as.user ?? 'alice';
      const method = (tools as unknown as Record<string, (a: unknown) => Promise<string>>)[fn];
      if (typeof method !== 'function') throw new Error(`no method ${fn}`);
      const watched = options.lagProbe !== false && as.lag !== false;
      if (watched) await warmUp();
      const watch = watched ? watchLag() : undefined;
      const json = await method.call(tools, { ...args, __user__: { id: user, name: user.toUpperCase() }, __metadata__: { chat_id: as.chat ?? 'c1' } });
      if (watch !== undefined) checkLag(`${fn} (as ${user})`, await watch.stop());
      if (typeof json !== 'string') throw new Error(`${fn} returned ${typeof json}, not a JSON string`);
      return JSON.parse(json) as Result;
    },
    zonePath(zone, rel = '', user = 'alice', chat = 'c1') {
      const dirs = { storage: ['Storage', 'data'], documents: ['Documents', 'data'], uploads: ['Uploads', chat] }[zone];
      return path.join(base, 'users', user, ...dirs, rel);
    },
    cleanup() {
      try {
        fs.rmSync(base, { recursive: true, force: true });
      } catch {
        spawnSync('rm', ['-rf', base]); // fs.rmSync recurses once per level: a tree 2,000 folders deep overflows its stack
      }
    },
  };
}

export { mod };
