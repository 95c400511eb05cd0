/**
 * Real concurrency for the lock tests: child Node processes running the same code, bundled from
 * the source (the plugin and the lock module), started together on a shared start time.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';

export interface Children {
  dir: string;
  /** Runs one child action; resolves with its exit code and output lines. */
  run(action: string, params: Record<string, unknown>): Child;
  cleanup(): void;
}

export interface Child {
  done: Promise<{ code: number | null; lines: string[] }>;
  /** Resolves when the child printed a line equal to `marker`. */
  waitFor(marker: string): Promise<void>;
  kill(): void;
}

const CHILD = `
import fs from 'node:fs';
import { Tools } from './plugin.mjs';
import { acquireLock, releaseLock } from './locks.mjs';
const [action, json] = process.argv.slice(2);
const p = JSON.parse(json);
const say = (line) => fs.writeSync(1, line + '\\n');
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: p.base, sandbox: 'validated', ...(p.valves || {}) };
const who = { __user__: { id: p.user || 'alice', name: 'A' }, __metadata__: { chat_id: p.chat } };
const call = async (fn, args) => JSON.parse(await tools[fn]({ ...args, ...who }));
while (Date.now() < (p.startAt || 0)) {} // start barrier: every child leaves it at the same moment
if (action === 'open') {
  say(JSON.stringify(await call('shed_lockedit_open', { zone: p.zone || 'storage', path: p.path })));
} else if (action === 'edit-save') {
  const o = await call('shed_lockedit_open', { zone: 'storage', path: p.path });
  if (!o.success) { say('OPEN-FAILED ' + JSON.stringify(o)); process.exit(2); }
  const w = await call('shed_lockedit_overwrite', { zone: 'storage', path: p.path, content: p.fill.repeat(p.size) });
  if (!w.success) { say('WRITE-FAILED ' + JSON.stringify(w)); process.exit(2); }
  say('SAVING');
  const s = await call('shed_lockedit_save', { zone: 'storage', path: p.path });
  say(s.success ? 'SAVED' : 'SAVE-FAILED ' + JSON.stringify(s));
} else if (action === 'acquire-once') {
  try {
    await acquireLock({ workBase: p.workBase }, p.path, { user_id: p.user, conv_id: p.chat }, p.maxAge || 24, 'edit');
    say('WON');
  } catch (err) {
    say('LOST ' + err.code);
  }
} else if (action === 'hold-write') {
  // A safe-mode write in progress: holds the write lock until killed.
  await acquireLock({ workBase: p.workBase }, p.path, { user_id: p.user, conv_id: p.chat }, 24, 'write');
  say('HELD');
  setInterval(() => {}, 1000);
} else if (action === 'mutex') {
  // Enter the critical section n times under a write lock, logging entry and exit.
  const log = fs.openSync(p.log, 'a');
  let entered = 0;
  while (entered < p.n) {
    let held;
    try {
      held = await acquireLock({ workBase: p.workBase }, p.path, { user_id: p.user, conv_id: p.chat }, 24, 'write');
    } catch (err) {
      if (err.code !== 'FILE_LOCKED') throw err;
      continue;
    }
    fs.writeSync(log, '+' + p.tag + '\\n');
    const until = Date.now() + 1; while (Date.now() < until) {}
    fs.writeSync(log, '-' + p.tag + '\\n');
    releaseLock({ workBase: p.workBase }, p.path, held.lock.token);
    entered++;
  }
  say('DONE');
}
`;

// The banner every Fileshed bundle starts with (bundled libraries call require and use __dirname).
const { banner: BANNER } = createRequire(import.meta.url)('../../build/bundle-banner.cjs') as { banner: string };

export async function buildChildren(): Promise<Children> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-lock-child-'));
  const common = { bundle: true, platform: 'node' as const, format: 'esm' as const, logLevel: 'silent' as const, loader: { '.wasm': 'binary' as const, '.pl': 'text' as const }, banner: { js: BANNER } };
  await build({ ...common, entryPoints: [path.resolve('src/index.ts')], outfile: path.join(dir, 'plugin.mjs') });
  await build({ ...common, entryPoints: [path.resolve('src/core/base/locks/locks.ts')], outfile: path.join(dir, 'locks.mjs') });
  fs.writeFileSync(path.join(dir, 'child.mjs'), CHILD);
  return {
    dir,
    run(action, params) {
      const p = spawn(process.execPath, [path.join(dir, 'child.mjs'), action, JSON.stringify(params)], { stdio: ['ignore', 'pipe', 'inherit'] });
      const lines: string[] = [];
      const waiters: { marker: string; resolve: () => void }[] = [];
      let buf = '';
      p.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          lines.push(line);
          for (const w of waiters.filter((x) => x.marker === line)) w.resolve();
        }
      });
      const done = new Promise<{ code: number | null; lines: string[] }>((resolve) => p.on('close', (code) => resolve({ code, lines })));
      return {
        done,
        waitFor: (marker) =>
          new Promise<void>((resolve, reject) => {
            if (lines.includes(marker)) return resolve();
            waiters.push({ marker, resolve });
            void done.then(() => (lines.includes(marker) ? resolve() : reject(new Error(`child ended without printing ${marker}: ${lines.join(' | ')}`))));
          }),
        kill: () => p.kill('SIGKILL'),
      };
    },
    cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
