/**
 * LLM-facing tool specs (OpenAI function-calling JSON) and the valves JSON Schema, derived from
 * the registry's zod schemas. Host arguments (`__*__`) are never parameters, so never appear here.
 */
import { z } from 'zod';
import { UserValvesSchema, ValvesSchema } from '../core/valves.js';
import type { FunctionDef, ToolHints } from './define.js';

export interface ToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export function toolSpec(def: FunctionDef): ToolSpec {
  const schema = cleanSchema(z.toJSONSchema(z.object(def.params), { io: 'input' }));
  schema.additionalProperties = false;
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
function cleanSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(schema, (key, value: unknown) => {
    if (key === '$schema') return undefined;
    if ((key === 'maximum' || key === 'minimum') && typeof value === 'number' && Math.abs(value) >= Number.MAX_SAFE_INTEGER) return undefined;
    return value;
  });
  return JSON.parse(json) as Record<string, unknown>;
}

/** The definition's hints with every field decided: explicit flags win, the rest derives from it. */
export function toolHints(def: FunctionDef): Required<ToolHints> {
  const h = def.hints ?? {};
  const readOnly = h.readOnly ?? !(def.mutates === true || def.zones?.writes === true);
  return {
    readOnly,
    destructive: h.destructive ?? !readOnly,
    idempotent: h.idempotent ?? readOnly,
    openWorld: h.openWorld ?? false,
  };
}
