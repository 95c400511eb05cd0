/**
 * An undo killed (SIGKILL) at random moments, 50 times: a child process runs shed_undo(apply=true)
 * on a turn of 60 Storage files (one shed_exec sed -i) and a Documents edit; the parent kills it
 * after a random delay within the undo's measured duration. After every kill each file is old or
 * new (never torn), and the next modifying call of the user finishes the undo (journal written:
 * every file back) or finds nothing begun (no journal: every file still as the turn left it).
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShed } from '../helpers/shed.js';
import { inTurn } from './helpers.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-undo-child-'));
// The child runs the built plugin (as the serving tests' other instances do), rebuilt from this source first.
const bundle = path.resolve('dist/fileshed.mjs');
const child = path.join(work, 'child.mjs');
const FILES = 60;
const KILLS = Number(process.env.UNDO_KILLS ?? 50);

beforeAll(async () => {
  const built = spawnSync(process.execPath, ['build.mjs'], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`node build.mjs failed: ${built.stderr}`);
  fs.writeFileSync(child, `import { Tools } from ${JSON.stringify(bundle)};
const [base, turn] = process.argv.slice(2);
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: base, sandbox: 'landlock' };
process.stdout.write('go\\n');
const r = await tools.shed_undo({ turn, apply: true, __user__: { id: 'alice', name: 'ALICE' }, __metadata__: { chat_id: 'c1', message_id: 'undo-' + turn } });
process.stdout.write(JSON.parse(r).success ? 'done\\n' : r);
`);
}, 60_000);
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

function runChild(base: string, turn: string): { go: Promise<void>; done: Promise<number | null>; kill(): void } {
  const p = spawn(process.execPath, [child, base, turn], { stdio: ['ignore', 'pipe', 'inherit'] });
  const go = new Promise<void>((resolve) => p.stdout.once('data', () => resolve()));
  const done = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
  return { go, done, kill: () => p.kill('SIGKILL') };
}

const sha = (file: string) => (fs.existsSync(file) ? crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex') : 'absent');

describe('an undo killed at random moments', () => {
  it(`${KILLS} kills: every file old or new, and the next call finishes or finds nothing begun`, async () => {
    const s = makeShed({ sandbox: 'landlock' });
    try {
      const names = Array.from({ length: FILES }, (_, i) => `d${i % 6}/f${i}.txt`);
      for (const n of names) {
        fs.mkdirSync(path.dirname(s.zonePath('storage', n)), { recursive: true });
        fs.writeFileSync(s.zonePath('storage', n), `${n} v0\n`.repeat(200));
      }
      await inTurn(s, 'setup', 'shed_create_file', { zone: 'documents', path: 'plan.md', content: '# Plan\n' });
      const files = [...names.map((n) => s.zonePath('storage', n)), s.zonePath('documents', 'plan.md')];
      const state = () => files.map(sha);
      let duration = 0;
      const outcomes = { finished: 0, notBegun: 0, completedByChild: 0 };
      for (let i = 0; i < KILLS + 1; i++) {
        const turn = `m${i}`;
        const newState = state();
        const sed = await inTurn(s, turn, 'shed_exec', { zone: 'storage', cmd: 'sed', args: ['-i', `s/v[0-9]*/v${i + 1}/`, ...names] });
        expect(sed.error).toBeUndefined();
        expect((await inTurn(s, turn, 'shed_patch_text', { zone: 'documents', path: 'plan.md', content: `step ${i}`, position: 'end' })).error).toBeUndefined();
        const oldState = state();
        const c = runChild(s.base, turn);
        await c.go;
        if (i === 0) {
          // First round: measure how long the child's undo takes, unkilled.
          const t0 = Date.now();
          expect(await c.done).toBe(0);
          duration = Date.now() - t0;
          expect(state()).toEqual(newState);
          continue;
        }
        await new Promise((r) => setTimeout(r, Math.random() * duration * 1.2));
        c.kill();
        await c.done;
        const now = state();
        now.forEach((h, k) => expect([oldState[k], newState[k]]).toContain(h));
        // The next modifying call of the user (any function) finishes a begun undo first.
        const next = await inTurn(s, `n${i}`, 'shed_create_file', { zone: 'storage', path: 'tick.txt', content: String(i) });
        expect(next.error).toBeUndefined();
        const after = state();
        if (after.every((h, k) => h === newState[k])) {
          outcomes[now.every((h, k) => h === newState[k]) ? 'completedByChild' : 'finished']++;
        } else {
          // Nothing begun: the turn still stands whole, and undoing it now works.
          expect(after).toEqual(oldState);
          outcomes.notBegun++;
          expect((await inTurn(s, `u${i}`, 'shed_undo', { turn, apply: true })).error).toBeUndefined();
          expect(state()).toEqual(newState);
        }
      }
      console.log(`undo kills: ${JSON.stringify(outcomes)}, undo ~${duration} ms`);
      expect(outcomes.finished + outcomes.notBegun + outcomes.completedByChild).toBe(KILLS);
    } finally {
      s.cleanup();
    }
  }, 600_000);
});
