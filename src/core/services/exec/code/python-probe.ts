/**
 * What Python offers on this server (shed_parameters, and the list an answer gives when a module is
 * missing): its version and which common packages import. Asked once per process and Python command
 * by running the probe below through the runner, confined like any command (nothing blocks the event
 * loop), and cached; a probe that fails is asked again by a later call.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Valves } from '../../../base/valves.js';
import { pythonEnvironment } from './plan.js';
import { executablesFor } from '../launcher/executables.js';
import { run } from '../launcher/runner.js';
import { sandboxStatus } from '../launcher/sandbox.js';
import { findProgram } from '../launcher/system.js';

/**
 * Imported (so a package that is there but broken counts as missing): the data stack the Docker
 * image ships first, then common ones people ask for.
 */
export const PROBED_PACKAGES = ['numpy', 'pandas', 'matplotlib', 'openpyxl', 'scipy', 'PIL', 'xlrd', 'docx', 'yaml', 'requests', 'bs4', 'lxml', 'sympy', 'seaborn', 'sklearn', 'pyarrow'] as const;

export interface PythonReport {
  command: string;
  /** e.g. "3.11.2"; absent when Python could not be asked. */
  version?: string;
  /** Each probed package that imports, with its version ("" when it has none). */
  packages: Record<string, string>;
  /** Probed packages that do not import. */
  missing: string[];
  /** Why nothing could be said (Python not installed, the probe failed). */
  error?: string;
}

const PROBE = `
import importlib, json, sys
out = {"version": sys.version.split()[0], "packages": {}, "missing": []}
for name in sys.argv[1:]:
    try:
        module = importlib.import_module(name)
        out["packages"][name] = str(getattr(module, "__version__", ""))
    except Exception:
        out["missing"].append(name)
print(json.dumps(out))
`;

const reports = new Map<string, Promise<PythonReport>>();

export function pythonReport(valves: Valves): Promise<PythonReport> {
  const command = valves.python_command;
  let report = reports.get(command);
  if (report === undefined) {
    report = probe(valves);
    reports.set(command, report);
    // A failed probe (a timeout on a loaded machine) is not the answer for the rest of the process.
    void report.then((r) => r.error !== undefined && reports.get(command) === report && reports.delete(command));
  }
  return report;
}

async function probe(valves: Valves): Promise<PythonReport> {
  const command = valves.python_command;
  const none = (error: string): PythonReport => ({ command, packages: {}, missing: [], error });
  const program = findProgram(command);
  if (program === undefined) return none(`${command} is not installed on the system PATH`);
  // The sandbox commands use, else (none works, or validated) the launcher's limits alone: it is our own code.
  const sandbox = await sandboxStatus(valves.sandbox).catch(() => undefined);
  const kernel = sandbox !== undefined && sandbox.active !== 'validated' ? sandbox : undefined;
  const zone = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'shed-probe-python-'));
  try {
    const r = await run({
      program,
      args: ['-s', '-B', '-c', PROBE, ...PROBED_PACKAGES],
      zoneRoot: zone,
      readonly: true,
      sandbox: kernel?.active ?? 'validated',
      ...(kernel ? { landlock: { abi: kernel.landlockAbi!, executables: executablesFor(path.basename(program), program) } } : {}),
      network: false,
      script: { env: pythonEnvironment('.') },
      timeoutSec: 60,
      memoryMb: valves.exec_memory_limit_mb,
      cpuSec: valves.exec_cpu_limit_seconds,
      maxFileBytes: 0,
      maxProcesses: 64,
      captureBytes: 1 << 16,
      mergeStderr: false,
    });
    const text = r.stdout.bytes.toString().trim();
    if (r.returncode !== 0 || text === '') return none(`the probe failed (exit ${r.returncode}${r.refused ? `: ${r.refused}` : ''}): ${r.stderr.bytes.toString().trim().split('\n').pop() ?? ''}`);
    const parsed = JSON.parse(text) as { version: string; packages: Record<string, string>; missing: string[] };
    return { command, version: parsed.version, packages: parsed.packages, missing: parsed.missing };
  } catch (err) {
    return none(`the probe failed: ${(err as Error).message}`);
  } finally {
    await fs.promises.rm(zone, { recursive: true, force: true });
  }
}
