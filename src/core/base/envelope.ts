/**
 * The response envelope (SPEC section 6). Success: {success, data, message}. Error (nested):
 * {success:false, error:{code, message, details, hint}}. Messages never carry absolute disk paths
 * or stack traces: `scrub` removes any known disk prefix before a message leaves the core.
 */
import { ShedError, type Details } from './errors.js';

export interface Outcome {
  data?: Record<string, unknown>;
  message: string;
  /** The chat turn a modifying call belongs to, when it changed files (SPEC 9.1: shed_undo takes it back). */
  turn?: string;
}

export function successJson(outcome: Outcome): string {
  const body: Record<string, unknown> = { success: true };
  if (outcome.data !== undefined) body.data = outcome.data;
  body.message = outcome.message;
  if (outcome.turn !== undefined) body.turn = outcome.turn;
  return JSON.stringify(body, null, 2);
}

export function errorJson(err: ShedError, scrubPrefixes: readonly string[] = []): string {
  const error: Record<string, unknown> = {
    code: err.code,
    message: scrub(err.message, scrubPrefixes),
  };
  if (err.details !== undefined) error.details = scrubDetails(err.details, scrubPrefixes);
  if (err.hint !== undefined) error.hint = scrub(err.hint, scrubPrefixes);
  return JSON.stringify({ success: false, error }, null, 2);
}

/** Replaces every occurrence of a disk prefix (storage base, zone roots, temp dirs) by a neutral word. */
export function scrub(text: string, prefixes: readonly string[]): string {
  let out = text;
  for (const prefix of prefixes) {
    if (prefix.length > 1) out = out.split(prefix).join('<storage>');
  }
  return out;
}

function scrubDetails(details: Details, prefixes: readonly string[]): Details {
  const json = JSON.stringify(details, (_k, v: unknown) => (typeof v === 'string' ? scrub(v, prefixes) : v));
  return JSON.parse(json) as Details;
}
