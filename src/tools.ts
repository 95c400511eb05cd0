/**
 * The public class. Its instances and prototype carry nothing but `valves` and the shed_* methods,
 * generated from the registry; the per-instance host lives in a module-scoped WeakMap, out of reach.
 */
import { errorJson } from './core/base/envelope.js';
import { shedError } from './core/base/errors.js';
import { defaultValves } from './core/base/valves.js';
import { FUNCTIONS } from './functions/index.js';
import { standaloneHost, type HostBridge } from './core/services/host-bridge.js';
import { callFunction } from './registry/call.js';

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
    return callFunction(FUNCTIONS, def, args, (this as Tools).valves, host);
  };
  Object.defineProperty(method, 'name', { value: def.name });
  Object.defineProperty(Tools.prototype, def.name, { value: method, writable: true, configurable: true, enumerable: false });
}

// Typed view for TypeScript users of the bundle: every shed_* method resolves to a JSON string.
export interface Tools {
  [name: `shed_${string}`]: (args?: Record<string, unknown>) => Promise<string>;
}
