/**
 * No program reads configuration from a folder the user controls. Each whitelisted program that
 * reads a file from HOME (or XDG folders under it) gets that file planted where an attacker could put
 * it: in the zone (HOME used to be the zone), in the zone's .config, and in the home and temp folders
 * of another call running at the same time (a shared temp folder would let one call configure the
 * next). The planted configuration would change what the program prints; it must not. In every mode.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, expectRan, installed, makeArena, MODES, type Arena } from './exec-harness.js';

const PY = installed('python3') ? execFileSync('/usr/bin/python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim() : '';

/** Config files, by path relative to a home folder, each of which would print PLANTED if read. */
const PLANTED: Record<string, string> = {
  '.jq': 'def planted: "PLANTED-JQ";\n',
  '.magic': '0\tstring\thello-planted\tPLANTED-MAGIC\n',
  '.gitconfig': '[init]\n\tdefaultBranch = planted-git\n[status]\n\tshort = true\n',
  '.config/git/config': '[init]\n\tdefaultBranch = planted-git\n',
  [`.local/lib/python${PY}/site-packages/planted.pth`]: 'import sys; sys.stdout.write("PLANTED-PTH\\n")\n',
  [`.local/lib/python${PY}/site-packages/usercustomize.py`]: 'import sys; sys.stdout.write("PLANTED-USERCUSTOMIZE\\n")\n',
  '.lesskey': '#env\nLESSOPEN=|echo PLANTED-LESS %s\n',
};

function plant(home: string): void {
  for (const [rel, body] of Object.entries(PLANTED)) {
    fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    fs.writeFileSync(path.join(home, rel), body);
  }
}

/**
 * The private folder of a call running now (landlock and validated modes: in the system temp folder,
 * made for it or kept from an earlier call): read off its program's environment, HOME being named
 * relative to its working folder.
 */
function callFolderOf(program: string, arg: string): string | undefined {
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (path.basename(argv[0]!) !== program || argv[1] !== arg) continue;
      const home = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((v) => v.startsWith('HOME='))!.slice(5);
      return path.dirname(path.resolve(fs.readlinkSync(`/proc/${pid}/cwd`), home));
    } catch {
      // ended meanwhile, or another's
    }
  }
  return undefined;
}

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  let background: Promise<unknown> | undefined;
  let others: string[] = [];
  beforeAll(async () => {
    a = makeArena(mode);
    a.put('hello.txt', 'hello-planted and more\n');
    a.put('y.yaml', 'a: 1\n');
    plant(a.zone);
    plant(path.join(a.zone, '.config'));
    // Another call runs meanwhile; its home and temp folders get the same files.
    const marker = `2.${process.pid}`;
    background = a.exec({ zone: 'storage', cmd: 'sleep', args: [marker] });
    let other: string | undefined;
    for (let i = 0; i < 100 && (other = callFolderOf('sleep', marker)) === undefined; i++) await new Promise((r) => setTimeout(r, 20));
    others = mode === 'bwrap' || other === undefined ? [] : [other];
    for (const folder of others) for (const sub of ['home', 'tmp']) if (fs.existsSync(path.join(folder, sub))) plant(path.join(folder, sub));
  });
  afterAll(async () => {
    await background;
    a.finish();
  });

  const run = async (cmd: string, args: string[]) => {
    const r = await a.exec({ zone: 'storage', cmd, args });
    expect(JSON.stringify(r)).not.toContain('PLANTED');
    return r;
  };

  it('jq does not load ~/.jq', async () => {
    const d = expectOk(await run('jq', ['-n', '-r', 'planted']));
    expect(d.returncode).not.toBe(0);
    expect(d.stderr).toContain('planted/0 is not defined');
  });

  it('file does not read ~/.magic', async () => {
    expect(expectRan(await run('file', ['hello.txt'])).stdout).toMatch(/text/);
  });

  it('less takes no preprocessor from ~/.lesskey', async () => {
    expect(expectRan(await run('less', ['hello.txt'])).stdout).toBe('hello-planted and more\n');
  });

  it.runIf(installed('yq') && PY !== '')('yq (Python) runs no .pth or usercustomize from a user site folder', async () => {
    expect(expectRan(await run('yq', ['.a', 'y.yaml'])).stdout).toBe('1\n');
  });

  it.runIf(mode !== 'validated')('git reads no ~/.gitconfig or ~/.config/git/config', async () => {
    expectRan(await run('git', ['init', '-q']));
    const d = expectRan(await run('git', ['status']));
    expect(d.stdout).toMatch(/^On branch (master|main)/);
  });

  it('the call gets a home and a temp folder of its own, not those of the call running beside it', async () => {
    const d = expectRan(await run('jq', ['-n', '-c', '[env.HOME, env.TMPDIR]']));
    const [home, tmp] = JSON.parse(d.stdout) as [string, string];
    if (mode === 'bwrap') expect([home, tmp]).toEqual(['/tmp/home', '/tmp']);
    else {
      const abs = (p: string) => path.resolve(a.zone, p);
      expect(path.dirname(abs(home))).toBe(path.dirname(abs(tmp)));
      expect(path.basename(path.dirname(abs(home)))).toMatch(/^shed-call-/);
      expect(others.length).toBeGreaterThan(0);
      expect(others).not.toContain(path.dirname(abs(home)));
    }
  });
});
