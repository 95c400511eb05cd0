/**
 * Fileshed: the plugin module. Exports the Tools class (only shed_* methods), the LLM tool specs
 * and the valves schema, all derived from one registry.
 */
import { ERROR_CODES } from './core/errors.js';
import { groupAdmin } from './core/groups/directory.js';
import { FUNCTIONS } from './functions/index.js';
import { enabledFunctions } from './registry/profiles.js';
import { toolSpec, valvesJsonSchema, type ToolSpec } from './registry/specs.js';

export { Tools, type ToolsOptions } from './tools.js';
export type { HostBridge, StatusEvent } from './host/bridge.js';
export type { ToolSpec } from './registry/specs.js';
export type { GroupDirectory, GroupInfo } from './core/groups/directory.js';

/**
 * Administration for the standalone host (the CLI's `fileshed groups ...`): groups and their
 * members live in {storage_base_path}/access_auth.sqlite. Each function takes the storage base.
 */
export const admin = { groups: groupAdmin };

export const version = '0.1.0';

/** OpenAI function-calling specs of every shed_* function (what dist/tools.json holds). */
export const toolSpecs = FUNCTIONS.map(toolSpec);

/**
 * The specs of the functions the valves enable for a caller of this role (valves `functions` and
 * `functions_admin`): what hosts (OpenAPI, MCP, the Open WebUI tool file) should expose.
 */
export function specsFor(valves: { functions?: unknown; functions_admin?: unknown } = {}, role: string = 'user'): ToolSpec[] {
  const enabled = new Set<string>(enabledFunctions(FUNCTIONS, valves, role).functions.map((f) => f.name));
  return toolSpecs.filter((s) => enabled.has(s.function.name));
}

/** Names of the functions the valves enable for this role, in registry order. */
export function enabledFunctionNames(valves: { functions?: unknown; functions_admin?: unknown } = {}, role: string = 'user'): string[] {
  return enabledFunctions(FUNCTIONS, valves, role).functions.map((f) => f.name);
}

/** JSON Schema of the admin valves, user valves under $defs.UserValves (what valves.schema.json holds). */
export const valvesSchema = valvesJsonSchema();

/** One line per function and per error code, for documentation generators (README, hosts). */
export const catalog = {
  functions: FUNCTIONS.map(({ name, category, summary }) => ({ name, category, summary })),
  errorCodes: { ...ERROR_CODES } as Record<string, string>,
};
