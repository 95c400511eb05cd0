/**
 * Structural checks on raw call arguments before anything else looks at them (a server passes
 * whatever JSON a client sent): nesting deeper than any real call, and strings that are not valid
 * Unicode (a lone UTF-16 surrogate would otherwise be written to disk as U+FFFD, naming a file the
 * caller never asked for). The walk is iterative: a 100,000-level value must not overflow the
 * stack here, and the error never echoes the offending value (stringifying it would overflow too).
 */
import { shedError } from '../core/base/errors.js';
import { type FunctionDef } from './define.js';
import { renderCall } from '../core/base/text/format.js';

/** Real calls nest 2-3 levels (an object of lists); host metadata a few more. */
export const MAX_ARG_DEPTH = 32;

/** Parameters that name files or folders: invalid Unicode there is an INVALID_PATH. */
const PATH_PARAMS = new Set([
  'path', 'paths', 'old_path', 'new_path', 'src', 'dest', 'src_path', 'dest_path', 'dest_subdir',
  'stdout_file', 'stderr_file', 'output_csv', 'import_csv', 'filename',
]);

/** Lone surrogates (a high one not followed by a low one, or a low one not preceded by a high one). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** Throws INVALID_PARAMETER / INVALID_PATH for over-deep or invalid-Unicode arguments. */
export function guardRawArgs(def: FunctionDef, raw: Record<string, unknown>): void {
  const stack: { value: unknown; depth: number; param: string; hostArg: boolean }[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const hostArg = key.startsWith('__');
    if (!hostArg && hasLoneSurrogate(key)) throw badUnicode(def, '(a parameter name)', false);
    stack.push({ value, depth: 1, param: key, hostArg });
  }
  while (stack.length > 0) {
    const { value, depth, param, hostArg } = stack.pop()!;
    if (typeof value === 'string') {
      if (!hostArg && hasLoneSurrogate(value)) throw badUnicode(def, param, PATH_PARAMS.has(param));
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_ARG_DEPTH) {
      throw shedError('INVALID_PARAMETER', `'${param}' is nested more than ${MAX_ARG_DEPTH} levels deep; ${def.name} takes flat values (strings, numbers, lists of strings).`, {
        details: { parameter: param, max_depth: MAX_ARG_DEPTH },
        hint: `Example: ${renderCall(def.name, def.example)}`,
      });
    }
    // Functions (host callbacks such as __event_emitter__) are not walked: typeof is 'function'.
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      if (!hostArg && hasLoneSurrogate(key)) throw badUnicode(def, param, false);
      stack.push({ value: inner, depth: depth + 1, param, hostArg });
    }
  }
}

function badUnicode(def: FunctionDef, param: string, isPath: boolean) {
  const what = "contains invalid Unicode (a lone UTF-16 surrogate, e.g. '\\ud800' without its pair)";
  return shedError(isPath ? 'INVALID_PATH' : 'INVALID_PARAMETER', `'${param}' ${what}; it would be stored as U+FFFD, not as written.`, {
    details: { parameter: param },
    hint: `Send the text as valid UTF-8/UTF-16 (complete surrogate pairs, or the character itself). Example: ${renderCall(def.name, def.example)}`,
  });
}
