/**
 * Error codes and the one error type every layer throws. Handlers throw `ShedError`; the dispatcher
 * turns it (or anything else) into the JSON error envelope, so public methods never throw.
 */

/** Every code a response can carry, with the one-line meaning shown in shed_help and the README. */
export const ERROR_CODES = {
  INVALID_PARAMETER: 'A parameter has the wrong type or value; the message names it and the hint shows a correct call.',
  MISSING_PARAMETER: 'A required parameter is missing or empty.',
  INVALID_VALVES: 'An admin setting (valve) or user setting is invalid; an admin must fix it.',
  INVALID_USER: 'The caller has no valid user id (1-128 characters from A-Z a-z 0-9 _ -, not starting with -).',
  INVALID_ZONE: 'The zone is not one of uploads, storage, documents, group.',
  ZONE_FORBIDDEN: 'This function does not work in that zone.',
  ZONE_READONLY: 'The zone is read-only for this operation (Uploads only allows reading and deleting).',
  GROUP_NOT_AVAILABLE: 'Group spaces are not available on this deployment yet.',
  INVALID_PATH: 'The path is malformed (control characters, NUL byte, a file used as a folder, the zone root where a file is needed).',
  PATH_ESCAPE: 'The path leaves the zone (.. above the root, or a symbolic link pointing outside).',
  PATH_STARTS_WITH_ZONE: 'The path starts with the zone name; paths are relative to the zone root.',
  PROTECTED_PATH: 'The path is inside the protected .git folder of a versioned zone.',
  FILE_NOT_FOUND: 'The file or folder does not exist.',
  FILE_EXISTS: 'The destination already exists.',
  NOT_A_FILE: 'The path is a folder where a file is needed.',
  NOT_A_DIRECTORY: 'The path is a file where a folder is needed.',
  FILE_TOO_LARGE: 'The result would exceed max_file_size_mb.',
  QUOTA_EXCEEDED: 'The write would exceed the storage quota.',
  FILE_LOCKED: 'Another conversation (or an open locked edit) holds the lock on this file.',
  PATTERN_NOT_FOUND: 'The pattern matched nothing in the file.',
  INVALID_MODE: 'The requested mode is not one of the accepted values.',
  INVALID_FORMAT: 'The file is not of the kind this function needs.',
  UNKNOWN_FUNCTION: 'No such shed_* function.',
  IO_ERROR: 'The storage reported an error (disk full, permission, ...).',
  INTERNAL_ERROR: 'An unexpected internal error; the operation was not completed.',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export type Details = Record<string, unknown>;

export class ShedError extends Error {
  readonly code: ErrorCode;
  readonly details: Details | undefined;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, opts: { details?: Details; hint?: string } = {}) {
    super(message);
    this.name = 'ShedError';
    this.code = code;
    this.details = opts.details;
    this.hint = opts.hint;
  }
}

/** Shortcut used throughout the core: `throw shedError('FILE_NOT_FOUND', '...')`. */
export function shedError(code: ErrorCode, message: string, opts: { details?: Details; hint?: string } = {}): ShedError {
  return new ShedError(code, message, opts);
}

/** Short human rendering of a received value for error messages: `'abc' (string)`, `0 (number)`. */
export function showValue(value: unknown): string {
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  let text: string;
  try {
    text = typeof value === 'string' ? `'${value}'` : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  if (text.length > 120) text = `${text.slice(0, 117)}...`;
  return `${text} (${type})`;
}
