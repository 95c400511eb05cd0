/**
 * LLM-facing tool specs (OpenAI function-calling JSON) and the valves JSON Schema, derived from
 * the registry's zod schemas. Host arguments (`__*__`) are never parameters, so never appear here.
 */
import { z } from 'zod';
import { UserValvesSchema, ValvesSchema } from '../core/base/valves.js';
import type { FunctionDef, ToolHints } from './define.js';
import { UNLISTED } from './params.js';

export interface ToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * Every chat turn sends these specs to the model, so they stay lean (24 KiB for all
 * functions): unlisted parameters are left out, the zone enum lists only the zones the function
 * accepts, and minLength: 1 is dropped (an empty string gets a MISSING_PARAMETER error anyway).
 * No additionalProperties: an unknown parameter gets a "did you mean" error, and hosts that need
 * the flag (strict modes) add it themselves.
 */
/** One spec per function, built once: `toolSpecs` and the hosts' function list share the objects. */
const built = new WeakMap<FunctionDef, ToolSpec>();

export function toolSpec(def: FunctionDef): ToolSpec {
  let spec = built.get(def);
  if (spec === undefined) built.set(def, (spec = buildSpec(def)));
  return spec;
}

function buildSpec(def: FunctionDef): ToolSpec {
  const listed = Object.fromEntries(Object.entries(def.params).filter(([, s]) => !UNLISTED.has(s as z.ZodType)));
  const schema = cleanSchema(z.toJSONSchema(z.object(listed), { io: 'input' }), { dropMinLength1: true });
  const zone = (schema.properties as Record<string, Record<string, unknown>> | undefined)?.zone;
  // The description repeats the enum in words: proxies that drop enums (mcpo) still tell the model the zones.
  if (zone && def.zones) Object.assign(zone, { description: def.zones.accepted.join('|'), enum: [...def.zones.accepted] });
  return { type: 'function', function: { name: def.name, description: def.description, parameters: schema } };
}

export function valvesJsonSchema(): Record<string, unknown> {
  return {
    ...cleanSchema(z.toJSONSchema(ValvesSchema, { io: 'input' })),
    title: 'Fileshed valves',
    description: 'Admin settings of Fileshed. Per-user settings are under $defs.UserValves.',
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $defs: { UserValves: { title: 'Fileshed user valves', ...cleanSchema(z.toJSONSchema(UserValvesSchema, { io: 'input' })) } },
  };
}

/** Drops the draft marker and the meaningless ±2^53 bounds zod adds to integers. */
function cleanSchema(schema: Record<string, unknown>, opts: { dropMinLength1?: boolean } = {}): Record<string, unknown> {
  const json = JSON.stringify(schema, (key, value: unknown) => {
    if (key === '$schema') return undefined;
    if (opts.dropMinLength1 && key === 'minLength' && value === 1) return undefined;
    if ((key === 'maximum' || key === 'minimum') && typeof value === 'number' && Math.abs(value) >= Number.MAX_SAFE_INTEGER) return undefined;
    return value;
  });
  return JSON.parse(json) as Record<string, unknown>;
}

/** The definition's hints with every field decided: explicit flags win, the rest derives from it. */
export function toolHints(def: FunctionDef): Required<ToolHints> {
  const h = def.hints ?? {};
  const readOnly = h.readOnly ?? !((def.mutates !== undefined && def.mutates !== false) || def.zones?.writes === true);
  return {
    readOnly,
    destructive: h.destructive ?? !readOnly,
    idempotent: h.idempotent ?? readOnly,
    openWorld: h.openWorld ?? false,
  };
}
