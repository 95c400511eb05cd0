/**
 * The public class. Its instances and prototype carry nothing but `valves` and the shed_* methods,
 * generated from the registry; the per-instance host lives in a module-scoped WeakMap, out of reach.
 */
import { errorJson } from './core/envelope.js';
import { shedError } from './core/errors.js';
import { defaultValves } from './core/valves.js';
import { FUNCTIONS } from './functions/index.js';
import { standaloneHost, type HostBridge } from './host/bridge.js';
import type { FunctionDef } from './registry/define.js';
import { dispatch } from './registry/dispatch.js';
import { enabledFunctions, warnUnknown } from './registry/profiles.js';

export interface ToolsOptions {
  host?: HostBridge;
  valves?: Record<string, unknown>;
}

const hosts = new WeakMap<object, HostBridge>();

export class Tools {
  /** Admin settings as a plain object; validated on every call. */
  valves: Record<string, unknown>;

  constructor(options: ToolsOptions = {}) {
    this.valves = { ...defaultValves(), ...(options.valves ?? {}) };
    hosts.set(this, options.host ?? standaloneHost);
  }
}

for (const def of FUNCTIONS) {
  const method = async function (this: unknown, args?: unknown): Promise<string> {
    const host = this !== null && typeof this === 'object' ? hosts.get(this) : undefined;
    if (host === undefined) {
      return errorJson(shedError('INTERNAL_ERROR', `${def.name} must be called on a Tools instance: tools.${def.name}({...}).`));
    }
    const valves = (this as Tools).valves;
    try {
      // The functions valve decides what this caller may use; the prototype itself stays static.
      const profile = enabledFunctions(FUNCTIONS, valves ?? {}, callerRole(args));
      warnUnknown(profile.unknown);
      if (!profile.functions.includes(def)) return disabled(def, profile.functions);
      return await dispatch(def, args, valves, host, profile.functions);
    } catch (err) {
      // dispatch answers every failure itself; this is the last guard so nothing ever escapes a method.
      return errorJson(shedError('INTERNAL_ERROR', `${def.name} failed unexpectedly (${err instanceof Error ? err.name : typeof err}).`));
    }
  };
  Object.defineProperty(method, 'name', { value: def.name });
  Object.defineProperty(Tools.prototype, def.name, { value: method, writable: true, configurable: true, enumerable: false });
}

// Typed view for TypeScript users of the bundle: every shed_* method resolves to a JSON string.
export interface Tools {
  [name: `shed_${string}`]: (args?: Record<string, unknown>) => Promise<string>;
}

/** The role the host gave (`__user__.role`), read before validation: only "admin" changes the profile. */
function callerRole(args: unknown): string | undefined {
  const user = args !== null && typeof args === 'object' ? (args as Record<string, unknown>).__user__ : undefined;
  const role = user !== null && typeof user === 'object' ? (user as Record<string, unknown>).role : undefined;
  return typeof role === 'string' ? role : undefined;
}

function disabled(def: FunctionDef, enabled: readonly FunctionDef[]): string {
  const names = enabled.map((f) => f.name);
  return errorJson(
    shedError('FUNCTION_DISABLED', `${def.name} is turned off on this server (admin setting 'functions').`, {
      details: { function: def.name, enabled: names },
      hint: `Use the enabled functions instead (shed_help() lists them): ${names.join(', ')}. If you really need ${def.name}, ask an admin to enable it.`,
    }),
  );
}
