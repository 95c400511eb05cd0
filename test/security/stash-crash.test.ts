/**
 * What a call sets aside around its command (blocked entries out of the zone, group files made
 * read-only) is journalled: a kill at any moment loses nothing, and the next command of the space,
 * shed_maintenance, the server's start (recoverStorage) and the call lock's takeover put everything
 * back. Part one stops the procedure at each point (the states a kill leaves, made with the same
 * functions the executor uses) and recovers by each route; part two kills `fileshed call` (the
 * built CLI) with SIGKILL while its command runs and lets the next call take the space over.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { blockRules } from '../../src/core/base/blocked/rules.js';
import { findBlocked } from '../../src/core/base/blocked/rules.js';
import { recoverStorage } from '../../src/core/services/recovery/recover.js';
import { openStash, itemPath } from '../../src/core/services/exec/guards/stash.js';
import { guardGroupFiles } from '../../src/core/services/exec/guards/guard-group.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { groupShed } from '../groups/setup.js';
import { git } from '../vcs/helpers.js';

const PATTERNS = '.env, *.pem, .ssh/';
const FILES: Record<string, string> = { '.env': 'KEY=one\n', 'a/k.pem': 'pem\n', '.ssh/id': 'id\n', 'a/b/c.pem': 'c\n' };

let s: Shed;
const zone = (rel = '') => s.zonePath('storage', rel);
const home = () => path.join(s.base, 'users', 'alice');
const stashDir = () => path.join(home(), 'Storage', 'stash');

function arrange(): void {
  for (const [rel, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(zone(rel)), { recursive: true });
    fs.writeFileSync(zone(rel), text);
  }
  fs.writeFileSync(zone('plain.txt'), 'plain\n');
}

function intact(): void {
  for (const [rel, text] of Object.entries(FILES)) expect(fs.readFileSync(zone(rel), 'utf8'), rel).toBe(text);
  expect(fs.existsSync(stashDir()), 'nothing stays beside the zone').toBe(false);
}

/** The stash of the blocked entries with the first `moved` of them moved out (a kill during the moves). */
async function killedWhileHiding(moved: number | 'all'): Promise<{ entries: { rel: string }[]; items: string[] }> {
  const root = fs.realpathSync(zone());
  const found = await findBlocked(blockRules({ blocked_patterns: PATTERNS })!, root);
  const entries = [...found.dirs, ...found.files].map((rel) => ({ rel }));
  const stash = await openStash(home(), 'blocked', root, entries);
  const items = entries.map((_, i) => itemPath(stash, i));
  for (let i = 0; i < (moved === 'all' ? entries.length : moved); i++) fs.renameSync(path.join(root, entries[i]!.rel), items[i]!);
  return { entries, items };
}

const ROUTES: [string, () => Promise<void>][] = [
  ['the next command', async () => {
    const r = await s.call('shed_exec', { zone: 'storage', cmd: 'ls', args: ['-a'] });
    expect(r.data!.returncode).toBe(0);
    expect(r.data!.stdout).not.toMatch(/^(\.env|\.ssh)$/m); // hidden again while it ran
  }],
  ['shed_maintenance', async () => expect((await s.call('shed_maintenance', {})).success).toBe(true)],
  ['the server start (recoverStorage)', async () => void (await recoverStorage(s.base))],
];

describe('kill points of hiding blocked entries', () => {
  beforeEach(() => {
    s = makeShed({ sandbox: 'landlock', blocked_patterns: PATTERNS });
    arrange();
  });
  afterEach(() => s.cleanup());

  describe.each(ROUTES)('recovered by %s', (_route, recover) => {
    it('killed before the journal was in place: nothing was moved, the leftover folder goes', async () => {
      fs.mkdirSync(path.join(stashDir(), 'blocked-x-1'), { recursive: true });
      fs.writeFileSync(path.join(stashDir(), 'blocked-x-1', 'journal.json.tmp'), '{"kind":"blo');
      await recover();
      intact();
    });

    it.each([0, 1, 3])('killed after the journal and %i of 4 moves', async (moved) => {
      await killedWhileHiding(moved);
      await recover();
      intact();
    });

    it('killed while the command ran, which had made a .env and a file where a/ was', async () => {
      await killedWhileHiding('all');
      fs.writeFileSync(zone('.env'), 'NEW\n');
      fs.rmSync(zone('a'), { recursive: true });
      fs.writeFileSync(zone('a'), 'a file\n');
      await recover();
      intact();
      expect(fs.readFileSync(zone('.env.~1~'), 'utf8')).toBe('NEW\n');
      expect(fs.readFileSync(zone('a.~1~'), 'utf8')).toBe('a file\n');
    });

    it('killed while putting back (some back already)', async () => {
      const { entries, items } = await killedWhileHiding('all');
      fs.renameSync(items[0]!, zone(entries[0]!.rel));
      await recover();
      intact();
    });
  });

  it('an unreadable journal is never guessed at: its entries stay aside, nothing is deleted', async () => {
    const { items } = await killedWhileHiding('all');
    const dir = path.dirname(path.dirname(items[0]!));
    fs.writeFileSync(path.join(dir, 'journal.json'), 'not json');
    await recoverStorage(s.base);
    expect(fs.existsSync(items[0]!)).toBe(true);
  });
});

describe('kill points of guarding group files', () => {
  const g = { zone: 'group', group: 'team' };
  let t: Awaited<ReturnType<typeof groupShed>>;
  beforeEach(async () => {
    t = await groupShed({ sandbox: 'landlock' });
    expect((await t.call('shed_create_file', { ...g, path: 'd/own.txt', content: 'ALICE\n', mode: 'owner' })).success).toBe(true);
  });
  afterEach(() => t.cleanup());

  const locked = () => [{ path: 'd/own.txt', owner: 'alice', mode: 'owner' as const }];
  const groupHome = () => path.join(t.base, 'groups', 'team');

  it.each([
    ['the server start (recoverStorage)', async () => void (await recoverStorage(t.base))],
    ['the next command in the space', async () => void (await t.call('shed_exec', { ...g, cmd: 'ls' }, { user: 'bob' }))],
  ])('killed while the command ran (file read-only, replaced by the command): %s restores it and its mode', async (_route, recover) => {
    const guard = await guardGroupFiles(groupHome(), fs.realpathSync(t.groupPath()), 'Group:Team', locked());
    expect(guard).toBeDefined();
    expect(fs.statSync(t.groupPath('d/own.txt')).mode & 0o777).toBe(0o444);
    fs.rmSync(t.groupPath('d/own.txt'));
    fs.writeFileSync(t.groupPath('d/own.txt'), 'BOB WAS HERE\n');
    await recover();
    expect(fs.readFileSync(t.groupPath('d/own.txt'), 'utf8')).toBe('ALICE\n');
    expect(fs.statSync(t.groupPath('d/own.txt')).mode & 0o200).not.toBe(0);
    expect(fs.readFileSync(t.groupPath('d/own.txt.~1~'), 'utf8')).toBe('BOB WAS HERE\n');
    expect(fs.existsSync(path.join(groupHome(), 'stash'))).toBe(false);
    // The owner writes it again.
    expect((await t.call('shed_patch_text', { ...g, path: 'd/own.txt', content: 'more' })).success).toBe(true);
  });
});

/** Processes whose command line holds `marker` (the CLI, and the command a killed CLI left running). */
function pidsWith(marker: string): number[] {
  return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  });
}

/** Waits until the command itself (`sleep <marker>`, started after everything was set aside) runs. */
/** SIGKILL to a process that may have ended since it was listed. */
function killGone(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

async function commandRunning(marker: string): Promise<void> {
  const running = () => pidsWith(marker).some((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`sleep\0${marker}`);
    } catch {
      return false;
    }
  });
  for (let i = 0; i < 400 && !running(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(running(), 'the command started').toBe(true);
}

describe.runIf(fs.existsSync('dist/cli.mjs'))('kill -9 of fileshed call while its command runs', () => {
  beforeEach(() => {
    s = makeShed();
    arrange();
  });
  afterEach(() => s.cleanup());

  it.each(['landlock', 'validated'])('%s: the blocked entries are aside; the next call takes the space over and puts them back', async (mode) => {
    const marker = `${mode === 'landlock' ? '19.5131' : '19.5132'}${String(process.pid).padStart(7, '0')}`; // this process's alone
    const cli = (args: unknown) => ['dist/cli.mjs', 'call', 'shed_exec', JSON.stringify(args), '--base', s.base, '--user', 'alice', '--valve', `sandbox=${mode}`, '--valve', `blocked_patterns=${PATTERNS}`];
    const child = spawn(process.execPath, cli({ zone: 'storage', cmd: 'sleep', args: [marker] }), { stdio: 'ignore' });
    try {
      await commandRunning(marker);
      expect(fs.existsSync(zone('.env')), 'hidden while the command runs').toBe(false);
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    } finally {
      for (const pid of pidsWith(marker)) process.kill(pid, 'SIGKILL');
    }
    expect(fs.existsSync(zone('.env')), 'still aside after the kill').toBe(false);
    const next = spawn(process.execPath, cli({ zone: 'storage', cmd: 'cat', args: ['plain.txt'] }), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    next.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => next.once('exit', r));
    expect(JSON.parse(out).data.stdout).toBe('plain\n');
    intact();
  }, 60_000);

  // Without identity separation the guard makes the file read-only for the command; with it (the
  // default as root) the file keeps its record's owner and mode (0640, the owner's uid), which the
  // kernel enforces: nothing is changed to be set back.
  it.each([
    ['identity separation off: made read-only', 'off', 0o444],
    ['identity separation: its own mode, untouched', 'auto', 0o640],
  ] as const)('a group file guarded for a killed command is back and writable for its owner (%s)', async (_name, identity, during) => {
    const t = await groupShed();
    try {
      const g = { zone: 'group', group: 'team' };
      await t.call('shed_create_file', { ...g, path: 'own.txt', content: 'ALICE\n', mode: 'owner' });
      const marker = `19.5133${String(process.pid).padStart(7, '0')}`;
      const cli = (user: string, args: unknown) => ['dist/cli.mjs', 'call', 'shed_exec', JSON.stringify({ ...g, ...(args as object) }), '--base', t.base, '--user', user, '--valve', 'sandbox=landlock', '--valve', `identity_separation=${identity}`];
      const child = spawn(process.execPath, cli('bob', { cmd: 'sleep', args: [marker] }), { stdio: 'ignore' });
      try {
        await commandRunning(marker);
        const st = fs.statSync(t.groupPath('own.txt'));
        expect(st.mode & 0o777).toBe(during);
        if (identity === 'auto') expect(st.uid).not.toBe(0); // alice's own uid
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
      } finally {
        for (const pid of pidsWith(marker)) killGone(pid);
      }
      const next = spawn(process.execPath, cli('alice', { cmd: 'sed', args: ['-i', 's/ALICE/OWNER/', 'own.txt'] }), { stdio: 'ignore' });
      await new Promise((r) => next.once('exit', r));
      expect(fs.readFileSync(t.groupPath('own.txt'), 'utf8')).toBe('OWNER\n');
      expect(git(t.groupPath(), 'status', '--porcelain')).toBe('');
    } finally {
      t.cleanup();
    }
  }, 60_000);
});
