/**
 * The narrow surface hosts (HTTP server, MCP, CLI) use beyond `Tools` and `toolSpecs`: look a
 * function up by name, call it through the one dispatcher, read its annotations, validate valves.
 * Exported from the plugin module as `hostApi`, so the server bundle shares the plugin's single
 * copy of the core and never reaches around the dispatcher into core services.
 */
import { kernelSandboxes, sandboxReport } from './core/services/exec/launcher/sandbox.js';
import { launcherPerl } from './core/services/exec/launcher/launcher.js';
import { separationReport } from './core/services/ids/separation.js';
import { ShedError } from './core/base/errors.js';
import { defaultValves, parseValves, UserValvesSchema, ValvesSchema, type Valves } from './core/base/valves.js';
import { FUNCTIONS } from './functions/index.js';
import { standaloneHost, type HostBridge } from './core/services/host-bridge.js';
import { callFunction, enabledNames } from './registry/call.js';
import { closestNames } from './core/base/text/distance.js';
import { toolHints, toolSpec } from './registry/specs.js';
import type { Category, ToolHints } from './registry/define.js';

export interface HostFunction {
  name: string;
  category: Category;
  description: string;
  /** JSON Schema of the LLM-facing parameters (the same object as in toolSpecs). */
  parameters: Record<string, unknown>;
  hints: Required<ToolHints>;
}

const byName = new Map(FUNCTIONS.map((def) => [def.name as string, def]));

export const hostApi = {
  functions: FUNCTIONS.map((def): HostFunction => {
    const spec = toolSpec(def).function;
    return { name: def.name, category: def.category, description: spec.description, parameters: spec.parameters, hints: toolHints(def) };
  }),
  /** True only for a registered function name (never for inherited names like `constructor`). */
  has(name: string): boolean {
    return byName.has(name);
  },
  /** Runs one function; resolves to the JSON envelope string (never throws). */
  call(name: string, args: Record<string, unknown>, valves: Record<string, unknown>, host: HostBridge = standaloneHost): Promise<string> {
    const def = byName.get(name);
    if (def === undefined) return Promise.resolve(JSON.stringify({ success: false, error: { code: 'INVALID_PARAMETER', message: `Unknown function '${name}'.` } }));
    return callFunction(FUNCTIONS, def, args, valves, host);
  },
  /** The registered names closest to an unknown one (for a 404 or an MCP error that teaches). */
  closestNames,
  /** Names of the functions the `functions` valves enable for a role (OpenAPI, MCP tool lists). */
  enabled: (valves: Record<string, unknown>, role: string | undefined): string[] => enabledNames(FUNCTIONS, valves, role),
  defaultValves: (): Valves => defaultValves(),
  /** Validated admin valves, or the INVALID_VALVES message naming the valve. */
  checkValves(raw: unknown): { ok: true; valves: Valves } | { ok: false; message: string } {
    try {
      return { ok: true, valves: parseValves(ValvesSchema, raw, 'valve') };
    } catch (err) {
      return { ok: false, message: err instanceof ShedError ? err.message : String(err) };
    }
  },
  checkUserValves(raw: unknown): { ok: true } | { ok: false; message: string } {
    try {
      parseValves(UserValvesSchema, raw, 'user valve');
      return { ok: true };
    } catch (err) {
      return { ok: false, message: err instanceof ShedError ? err.message : String(err) };
    }
  },
  sandbox: (configured: Valves['sandbox'], unconfinedAllowed = true) => sandboxReport(configured, unconfinedAllowed),
  /** Which separation holds users apart under these (raw) valves with commands in `sandbox` mode (src/core/services/ids/separation.ts). */
  separation(rawValves: unknown, sandbox: string) {
    let valves: Valves;
    try {
      valves = parseValves(ValvesSchema, rawValves, 'valve');
    } catch {
      valves = defaultValves();
    }
    return separationReport(valves, sandbox);
  },
  /** What each kernel sandbox can do here, which mode `auto` picks, and the perl the launcher runs on (fileshed doctor). */
  async sandboxCheck() {
    const [kernel, auto] = await Promise.all([kernelSandboxes(), sandboxReport('auto')]);
    return { ...kernel, auto, perl: launcherPerl() ?? null, separation: separationReport({ ...defaultValves(), identity_separation: 'auto' }, auto.active) };
  },
};
