/**
 * Small text helpers shared by the functions: calls as models write them, counted nouns, binary
 * sniffing, output limits.
 */
import { shedError, showValue } from '../errors.js';
import type { Valves } from '../valves.js';

/** Renders a call the way tool-calling models write them: shed_read(zone="storage", path="a.txt"). */
export function renderCall(name: string, args: Record<string, unknown>): string {
  const parts = Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${name}(${parts.join(', ')})`;
}

/** Effective character limit: none given → default valve; 0 → absolute ceiling; else capped. */
export function outputLimit(ctx: { valves: Valves }, requested: number | undefined): number {
  const { max_output_default: def, max_output_absolute: abs } = ctx.valves;
  if (requested === undefined) return Math.min(def, abs);
  if (requested < 0) {
    throw shedError('INVALID_PARAMETER', `'max_output' must be 0 (the maximum) or a positive number of characters; got ${showValue(requested)}.`, {
      details: { parameter: 'max_output', received: requested },
      hint: 'Omit max_output for the default, or use e.g. max_output=20000.',
    });
  }
  return requested === 0 ? abs : Math.min(requested, abs);
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** True when the bytes look binary: a NUL byte in the first 8 KiB. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}
