/**
 * One call of a registered function under the function profile (valves `functions` /
 * `functions_admin`): the single entry used by the Tools methods and by the hosts, so a function the
 * admin turned off answers FUNCTION_DISABLED whichever way it is reached. Never throws.
 */
import { errorJson } from '../core/base/envelope.js';
import { shedError } from '../core/base/errors.js';
import type { HostBridge } from '../core/services/host-bridge.js';
import type { FunctionDef } from './define.js';
import { dispatch } from './dispatch.js';
import { enabledFunctions, switchedOn, warnUnknown } from './profiles.js';

/** Calls `def`, one of `all` (the registry list: functions/index.ts), as the profile allows. */
export async function callFunction(all: readonly FunctionDef[], def: FunctionDef, args: unknown, valves: Record<string, unknown> | undefined, host: HostBridge): Promise<string> {
  try {
    const profile = enabledFunctions(all, valves ?? {}, callerRole(args));
    warnUnknown(profile.unknown);
    if (!profile.functions.includes(def)) return disabled(def, profile.functions, valves ?? {});
    return await dispatch(def, args, valves, host, profile.functions);
  } catch (err) {
    // dispatch answers every failure itself; this is the last guard so nothing ever escapes a method.
    return errorJson(shedError('INTERNAL_ERROR', `${def.name} failed unexpectedly (${err instanceof Error ? err.name : typeof err}).`));
  }
}

/** Names of the functions enabled for a role (hosts filter their OpenAPI document and MCP tool list with it). */
export function enabledNames(all: readonly FunctionDef[], valves: Record<string, unknown>, role: string | undefined): string[] {
  return enabledFunctions(all, valves, role).functions.map((f) => f.name);
}

/** The role the host gave (`__user__.role`), read before validation: only "admin" changes the profile. */
function callerRole(args: unknown): string | undefined {
  const user = args !== null && typeof args === 'object' ? (args as Record<string, unknown>).__user__ : undefined;
  const role = user !== null && typeof user === 'object' ? (user as Record<string, unknown>).role : undefined;
  return typeof role === 'string' ? role : undefined;
}

function disabled(def: FunctionDef, enabled: readonly FunctionDef[], valves: Record<string, unknown>): string {
  const names = enabled.map((f) => f.name);
  if (def.enabledBy !== undefined && !switchedOn(valves, def.enabledBy)) {
    return errorJson(
      shedError('FUNCTION_DISABLED', `${def.name} is off on this server: the admin setting ${def.enabledBy} is false (code execution is off unless an admin turns it on).`, {
        details: { function: def.name, valve: def.enabledBy, enabled: names },
        hint: `Work with the enabled functions instead (shed_help() lists them), e.g. shed_exec for whitelisted commands. An admin can set the valve ${def.enabledBy}=true to allow ${def.name}.`,
      }),
    );
  }
  return errorJson(
    shedError('FUNCTION_DISABLED', `${def.name} is turned off on this server (admin setting 'functions').`, {
      details: { function: def.name, enabled: names },
      hint: `Use the enabled functions instead (shed_help() lists them): ${names.join(', ')}. If you really need ${def.name}, ask an admin to enable it.`,
    }),
  );
}
