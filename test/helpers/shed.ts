/**
 * Test harness: a Tools instance on a fresh temp storage folder, and a `call` that parses the JSON
 * result. Tests use the source by default; set FILESHED_TEST_DIST=1 to run them on dist/fileshed.mjs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as source from '../../src/index.js';

type Module = typeof source;
const mod: Module = process.env.FILESHED_TEST_DIST ? ((await import('../../dist/fileshed.mjs' as string)) as Module) : source;

export interface Result {
  success: boolean;
  data?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test access to arbitrary result fields
  message?: string;
  error?: { code: string; message: string; details?: Record<string, unknown>; hint?: string };
}

export interface Shed {
  base: string;
  tools: InstanceType<Module['Tools']>;
  /** Calls a function as user `user` (default "alice") in conversation "c1". */
  call(fn: string, args?: Record<string, unknown>, as?: { user?: string; chat?: string }): Promise<Result>;
  /** Absolute path of a file in a personal zone, for arranging and checking files directly. */
  zonePath(zone: 'storage' | 'documents' | 'uploads', rel?: string, user?: string, chat?: string): string;
  cleanup(): void;
}

export function makeShed(valves: Record<string, unknown> = {}): Shed {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-test-'));
  const tools = new mod.Tools();
  tools.valves = { ...tools.valves, storage_base_path: base, ...valves };
  return {
    base,
    tools,
    async call(fn, args = {}, as = {}) {
      const user = as.user ?? 'alice';
      const method = (tools as unknown as Record<string, (a: unknown) => Promise<string>>)[fn];
      if (typeof method !== 'function') throw new Error(`no method ${fn}`);
      const json = await method.call(tools, { ...args, __user__: { id: user, name: user.toUpperCase() }, __metadata__: { chat_id: as.chat ?? 'c1' } });
      if (typeof json !== 'string') throw new Error(`${fn} returned ${typeof json}, not a JSON string`);
      return JSON.parse(json) as Result;
    },
    zonePath(zone, rel = '', user = 'alice', chat = 'c1') {
      const dirs = { storage: ['Storage', 'data'], documents: ['Documents', 'data'], uploads: ['Uploads', chat] }[zone];
      return path.join(base, 'users', user, ...dirs, rel);
    },
    cleanup() {
      fs.rmSync(base, { recursive: true, force: true });
    },
  };
}

export { mod };
