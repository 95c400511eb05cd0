/**
 * Every command goes through the one executor (src/core/services/exec/execute.ts): no other source file
 * starts a process, calls the runner, or applies the argument policy by itself (which is how a
 * function once ran commands without the per-call quota watch). The sandbox probe is the one other
 * caller of the runner: it runs `true`, `cat` and a Landlock ABI question once per process; so is
 * the Python probe, which runs the admin's python_command on its own fixed code (the version and
 * which packages import) once per process, confined like a command.
 * The runner's one process start is the fork server (forkserver.ts): one spawn of the launcher,
 * which forks every command; only the runner asks it. The one other process starter is the SQLite
 * file engine's pool, which starts this same Node binary on the plugin's own code (no program or
 * argument from a user), so it is no command door.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve('src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sources(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

const files = sources(SRC).map((file) => ({ rel: path.relative(SRC, file), text: fs.readFileSync(file, 'utf8') }));
const holding = (re: RegExp) => files.filter((f) => re.test(f.text)).map((f) => f.rel).sort();

describe('one executor', () => {
  it('only the fork server starts processes (and the SQLite pool, which starts only this Node on its own code)', () => {
    expect(holding(/['"](node:)?child_process['"]|process\.binding\(|\bexeca\b/)).toEqual(['core/services/db/node/children.ts', 'core/services/exec/launcher/forkserver.ts']);
    const server = files.find((f) => f.rel === 'core/services/exec/launcher/forkserver.ts')!.text;
    const launches = [...server.matchAll(/\bspawn\(([^\n]*)/g)].map((m) => m[1]);
    expect(launches).toEqual(["perl, ['-e', SERVER_SCRIPT, '--', header(perl, arch), INNER_SCRIPT], {"]);
    expect(server).not.toMatch(/\b(exec|execFile|fork|spawnSync|execSync|execFileSync)\(/);
    // Only the runner asks the fork server for a command.
    expect(holding(/^import (?!type )[^\n]*from ['"][^'"]*\/forkserver\.js['"]/m)).toEqual(['core/services/exec/launcher/runner.ts']);
    const pool = files.find((f) => f.rel === 'core/services/db/node/children.ts')!.text;
    const spawns = [...pool.matchAll(/\bspawn\(([^\n]*)/g)].map((m) => m[1]);
    expect(spawns).toHaveLength(1);
    expect(spawns[0]).toMatch(/^'\/bin\/sh', \['-c', `ulimit -d \$\{dataKb\} 2>\/dev\/null; exec "\$0" "\$@"`, process\.execPath, /);
    expect(pool).not.toMatch(/\b(exec|execFile|fork|spawnSync|execSync)\(/);
  });

  it('only the executor, the sandbox probe and the document converters call the runner', () => {
    // Value imports only: a type (RunResult, RunRequest) runs nothing.
    expect(holding(/^import (?!type )[^\n]*from ['"][^'"]*\/runner\.js['"]/m)).toEqual(['core/services/documents/confined.ts', 'core/services/exec/code/python-probe.ts', 'core/services/exec/execute.ts', 'core/services/exec/launcher/sandbox.ts']);
    // The Python probe runs its own code and the probed package names, nothing from a call.
    const probe = files.find((f) => f.rel === 'core/services/exec/code/python-probe.ts')!.text;
    expect([...probe.matchAll(/\bargs: (\[[^\n]*\])/g)].map((m) => m[1])).toEqual(["['-s', '-B', '-c', PROBE, ...PROBED_PACKAGES]"]);
    // The converters run only the distribution's programs, named in the code, never a name from a call.
    const confined = files.find((f) => f.rel === 'core/services/documents/confined.ts')!.text;
    expect(confined).toMatch(/for \(const dir of \['\/usr\/bin', '\/bin'\]\)/);
    for (const f of files.filter((x) => x.rel.startsWith('core/services/documents/') && /runConverter\(/.test(x.text) && x.rel !== 'core/services/documents/confined.ts')) {
      expect([...f.text.matchAll(/program: '([^']+)'/g)].map((m) => m[1]), f.rel).not.toHaveLength(0);
    }
  });

  it('only the executor applies the argument policy to a command', () => {
    expect(holding(/\bcheckCommand\(/)).toEqual(['core/services/exec/execute.ts', 'core/services/exec/policy/policy.ts']);
  });

  it('the command functions and the script functions go through it', () => {
    // executeReading is the same executor, entered for a command run without the call lock.
    expect(files.find((f) => f.rel === 'core/services/exec/execute.ts')!.text).toMatch(/export async function executeReading\([^)]*\)[^{]*\{\n  try \{\n    return await execute\(req, true\);/);
    for (const fn of ['functions/exec.ts', 'functions/lockedit_exec.ts', 'functions/code-run.ts']) expect(files.find((f) => f.rel === fn)!.text, fn).toMatch(/\bexecuteCommand\(/);
    for (const fn of ['functions/run_python.ts', 'functions/run_shell.ts']) expect(files.find((f) => f.rel === fn)!.text, fn).toMatch(/\brunCode\(/);
  });
});
