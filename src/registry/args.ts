/**
 * From raw tool-call arguments to typed ones: the coercions small models need (SPEC section 6),
 * then zod validation, with every failure translated into a self-correcting error that names the
 * parameter, shows what was received, says what is expected and gives a working example call.
 */
import { z } from 'zod';
import { shedError, showValue, type ShedError } from '../core/base/errors.js';
import { type FunctionDef } from './define.js';
import { renderCall } from '../core/base/text/format.js';
import { editDistance } from '../core/base/text/distance.js';
import { NUMBER_AS_TEXT } from './params.js';
import { guessZone } from './zone-guess.js';

type Kind = 'string' | 'number' | 'boolean' | 'array' | 'enum' | 'other';

interface FieldInfo {
  kind: Kind;
  optional: boolean;
  options: readonly string[];
  description: string;
  /** Strings with .min(1): empty means missing. */
  nonEmpty: boolean;
  /** A text parameter that takes a bare number as its text (see NUMBER_AS_TEXT). */
  numberAsText: boolean;
}

/** Unwraps optional/default layers to find what a parameter really is. */
export function fieldInfo(schema: z.ZodType): FieldInfo {
  const numberAsText = NUMBER_AS_TEXT.has(schema);
  let current = schema;
  let optional = false;
  let description = schema.description ?? '';
  for (;;) {
    const def = current.def as { type: string; innerType?: z.ZodType };
    if ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable') && def.innerType) {
      optional = true;
      current = def.innerType;
      description ||= current.description ?? '';
      continue;
    }
    const kinds: Record<string, Kind> = { string: 'string', number: 'number', boolean: 'boolean', array: 'array', enum: 'enum' };
    const kind = kinds[def.type] ?? 'other';
    const options = kind === 'enum' ? ((current as unknown as { options: string[] }).options ?? []) : [];
    const nonEmpty = kind === 'string' && ((current as unknown as { minLength: number | null }).minLength ?? 0) > 0;
    return { kind, optional, options, description, nonEmpty, numberAsText };
  }
}

const TRUE_WORDS = new Set(['true', '1', 'yes']);
const FALSE_WORDS = new Set(['false', '0', 'no']);

/** Applies the documented coercions to one value; anything it does not recognise is left to zod. */
export function coerceValue(info: FieldInfo, value: unknown): unknown {
  if (value === null) return undefined;
  if (typeof value === 'string' && value === '' && info.optional) return undefined;
  switch (info.kind) {
    case 'number':
      if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) return Number(value);
      return value;
    case 'boolean':
      if (typeof value === 'string') {
        const word = value.trim().toLowerCase();
        if (TRUE_WORDS.has(word)) return true;
        if (FALSE_WORDS.has(word)) return false;
      }
      if (value === 0 || value === 1) return value === 1;
      return value;
    case 'string':
      if (info.numberAsText && typeof value === 'number' && Number.isFinite(value)) return String(value);
      return value;
    case 'array':
      if (value === 0 || value === false || value === '') return [];
      if (typeof value === 'string' && value.trim().startsWith('[')) {
        try {
          return JSON.parse(value) as unknown;
        } catch {
          return value;
        }
      }
      // args: "-la" can only mean one item; "-n TODO a.txt" is ambiguous (quoting) and stays an error.
      if (typeof value === 'string' && !/\s/.test(value)) return [value];
      return value;
    case 'enum':
      if (typeof value === 'string') {
        const wanted = value.trim().toLowerCase();
        return info.options.find((o) => o.toLowerCase() === wanted) ?? value;
      }
      return value;
    default:
      return value;
  }
}

/** Host-injected arguments (`__user__`, `__metadata__`, ...) are not parameters. */
export function isHostArg(key: string): boolean {
  return key.startsWith('__');
}

const ALIASES: Record<string, readonly string[]> = {
  path: ['file', 'filename', 'file_path', 'filepath', 'file_name', 'name', 'target'],
  content: ['text', 'data', 'body', 'contents'],
  old_path: ['src', 'source', 'from', 'old'],
  new_path: ['dest', 'destination', 'to', 'new'],
  cmd: ['command', 'program'],
};

/** Built once per function: zod compiles an object schema on first use, so rebuilding it per call costs ~0.5 ms. */
const schemas = new WeakMap<FunctionDef, z.ZodObject>();
function objectSchema(def: FunctionDef): z.ZodObject {
  let schema = schemas.get(def);
  if (schema === undefined) {
    schema = z.object(def.params as unknown as z.ZodRawShape);
    schemas.set(def, schema);
  }
  return schema;
}

export function parseArgs<S extends z.ZodRawShape>(def: FunctionDef<S>, raw: Record<string, unknown>): z.output<z.ZodObject<S>> {
  const shape = def.params as unknown as Record<string, z.ZodType>;
  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (isHostArg(key)) continue;
    const schema = Object.hasOwn(shape, key) ? shape[key] : undefined; // never "toString" & co. from the prototype
    if (schema === undefined) throw unknownParameter(def, key, value);
    input[key] = coerceValue(fieldInfo(schema), value);
    if (input[key] === undefined) delete input[key];
  }
  if (input.overwrite === true) for (const key of def.overwriteIgnores ?? []) delete input[key];
  const parsed = objectSchema(def).safeParse(input);
  if (parsed.success) return parsed.data as z.output<z.ZodObject<S>>;
  throw translateIssue(def, parsed.error.issues[0]!, input, raw);
}

function unknownParameter(def: FunctionDef, key: string, value: unknown): ShedError {
  const known = Object.keys(def.params);
  const guess = known.find((k) => ALIASES[k]?.includes(key.toLowerCase())) ?? closest(key, known);
  return shedError(
    'INVALID_PARAMETER',
    `${def.name} has no parameter '${key}' (received ${showValue(value)}).${guess ? ` Did you mean '${guess}'?` : ''} Its parameters are: ${known.join(', ')}.`,
    { details: { parameter: key, received: value, expected: known }, hint: `Example: ${renderCall(def.name, def.example)}` },
  );
}

function translateIssue(def: FunctionDef, issue: z.core.$ZodIssue, input: Record<string, unknown>, raw: Record<string, unknown>): ShedError {
  const param = String(issue.path[0] ?? '');
  const schema = (def.params as unknown as Record<string, z.ZodType>)[param];
  const info: FieldInfo = schema ? fieldInfo(schema) : { kind: 'other', optional: false, options: [], description: '', nonEmpty: false, numberAsText: false };
  const received = param in raw ? raw[param] : input[param];
  const example = `Example: ${renderCall(def.name, def.example)}`;
  const extra = def.paramHints?.[param];
  const hint = extra ? `${extra} ${example}` : example;
  const about = info.description ? ` (${info.description})` : '';

  if (received === undefined || (received === null && !info.optional)) {
    return shedError('MISSING_PARAMETER', `${def.name} needs the parameter '${param}'${about}.`, {
      details: { parameter: param, expected: expected(info) },
      hint,
    });
  }
  if (issue.code === 'too_small' && info.kind === 'string') {
    return shedError('MISSING_PARAMETER', `'${param}' is empty; ${def.name} needs a value${about}.`, {
      details: { parameter: param, received, expected: expected(info) },
      hint,
    });
  }
  if (param === 'zone' && info.kind === 'enum') {
    const guess = guessZone(received, info.options);
    // With a guess, the dispatcher ends the hint with the caller's own call, corrected (details.suggested).
    return shedError('INVALID_ZONE', `'zone' must be one of ${info.options.join(', ')}; got ${showValue(received)}.`, {
      details: { parameter: 'zone', received, valid: info.options, ...(guess !== undefined ? { suggested: guess } : {}) },
      hint: guess !== undefined ? `Did you mean zone="${guess}"?` : hint,
    });
  }
  const rule = issue.code === 'invalid_type' || issue.code === 'invalid_value' ? '' : `: ${issue.message}`;
  return shedError('INVALID_PARAMETER', `'${param}' must be ${expected(info)}${rule}; got ${showValue(received)}.`, {
    details: { parameter: param, received, expected: expected(info) },
    hint,
  });
}

function expected(info: FieldInfo): string {
  switch (info.kind) {
    case 'string':
      return info.nonEmpty ? 'a non-empty string' : 'a string';
    case 'number':
      return 'an integer';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'a list of strings, e.g. ["-la"]';
    case 'enum':
      return `one of ${info.options.map((o) => `"${o}"`).join(', ')}`;
    default:
      return 'a valid value';
  }
}

function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    const score = editDistance(key.toLowerCase(), candidate);
    if (score < bestScore) [best, bestScore] = [candidate, score];
  }
  return bestScore <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}
