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
  GROUP_NOT_AVAILABLE: 'This function cannot open a group space (group spaces work with the functions that accept zone="group").',
  INVALID_GROUP_ID: 'The group parameter is empty or malformed (contains .., / or \\, or control characters).',
  GROUP_NOT_FOUND: 'No group has this id or exact (case-sensitive) name; the hint suggests a close name when there is one.',
  GROUP_ACCESS_DENIED: 'The caller is not a member of the group.',
  PERMISSION_DENIED: 'The ownership mode of a group file forbids this change (details.reason: FILE_OWNER_ONLY or FILE_READ_ONLY).',
  NOT_FILE_OWNER: 'Only the owner of the group file may change its mode or owner.',
  INVALID_OWNER: 'The new owner is not a valid user id or not a member of the group.',
  INVALID_PATH: 'The path is malformed (control characters, NUL byte, a file used as a folder, the zone root where a file is needed).',
  PATH_ESCAPE: 'The path leaves the zone (.. above the root, or a symbolic link pointing outside).',
  PATH_STARTS_WITH_ZONE: 'The path starts with the zone name; paths are relative to the zone root.',
  PROTECTED_PATH: 'The path is inside a folder named .git in a versioned zone (Documents, groups): nothing there could be versioned, so named writes are refused; keep repositories in Storage.',
  FILE_NOT_FOUND: 'The file or folder does not exist.',
  FILE_EXISTS: 'The destination already exists.',
  NOT_A_FILE: 'The path is a folder where a file is needed.',
  NOT_A_DIRECTORY: 'The path is a file where a folder is needed.',
  FILE_TOO_LARGE: 'The result would exceed max_file_size_mb.',
  QUOTA_EXCEEDED: 'The write would exceed the storage quota.',
  FILE_LOCKED: 'Another conversation (or an open locked edit) holds the lock on this file.',
  NOT_IN_EDIT_MODE: 'The file is not open in a locked edit in this conversation (shed_lockedit_save and _cancel close edit mode).',
  NOT_LOCK_OWNER: 'The lock of the file belongs to another conversation, or this conversation lost it (expired and taken over, or force-unlocked).',
  LOCK_ERROR: 'A lock could not be taken or was lost: the lock file could not be created or read, the coordination service (Redis) did not answer, or a lease ended before the call could finish.',
  IMPORT_REFUSED: 'An attached file was not imported: its path is outside the folders imports may read (valve import_allowed_paths), not local, or a link.',
  PATTERN_NOT_FOUND: 'The pattern matched nothing in the file.',
  INVALID_MODE: 'The requested mode is not one of the accepted values.',
  INVALID_FORMAT: 'The file is not of the kind this function needs.',
  UNKNOWN_FUNCTION: 'No such shed_* function.',
  COMMAND_FORBIDDEN: 'The command (or git subcommand, or SQL statement) is not allowed here.',
  INVALID_REVISION: 'The git revision (commit id, HEAD~N, branch) does not name a commit of this history.',
  ARGUMENT_FORBIDDEN: 'An argument is refused by the command policy (it could run programs or reach outside the zone).',
  ARGUMENT_REQUIRED: 'The command needs an argument it was not given (e.g. curl needs -o).',
  COMMAND_NOT_FOUND: 'The program is allowed but not installed on this server; the hint names the package.',
  TIMEOUT: 'The command ran longer than its timeout and was stopped.',
  SANDBOX_UNAVAILABLE: 'No kernel sandbox (bubblewrap or Landlock) works on this server, or the one the admin requires does not: commands are refused.',
  EXEC_ERROR: 'The command could not be started.',
  SQL_ERROR: 'SQLite rejected or failed the statement; the message quotes SQLite and nothing was changed.',
  TABLE_EXISTS: 'The CSV import target table already exists (if_exists="fail"); use if_exists="replace" or "append".',
  CSV_EMPTY: 'The CSV file has no data (empty, or only blank lines).',
  CSV_TOO_WIDE: 'The CSV file has more columns than a table can hold.',
  CSV_PARSE_ERROR: 'The CSV file could not be parsed (bad quoting, undecodable text, an overlong record).',
  DOCUMENT_LIMIT: 'The document exceeds what one read may convert (a compression or XML bomb, too many pixels, a member too large); nothing was changed.',
  ZIP_BOMB: 'The archive exceeds the unzip limits (entry count, total size or compression ratio; see the zip_* valves).',
  IO_ERROR: 'The storage reported an error (disk full, permission, ...).',
  INTERNAL_ERROR: 'An unexpected internal error; the operation was not completed.',
  QUERY_TIMEOUT: 'The SQL statement or import ran longer than sqlite_timeout_seconds and was stopped; nothing was changed.',
  RESOURCE_LIMIT: 'The operation needed more memory than one call may use and was stopped; nothing was changed.',
  FUNCTION_DISABLED: 'The admin turned this function off (valve functions; code execution: allow_python, allow_shell); shed_help lists the enabled ones.',
  BLOCKED_PATH: 'The path matches a blocked pattern or has an extension that is not allowed (valves blocked_patterns, allowed_extensions).',
  // Returned by the Open WebUI tool file (dist/fileshed_openwebui.py) when it cannot reach `fileshed serve`.
  SERVER_UNAVAILABLE: 'Open WebUI tool file: the Fileshed server does not answer at the server_url valve.',
  SERVER_TIMEOUT: 'Open WebUI tool file: the Fileshed server did not answer within the timeout_seconds valve.',
  SERVER_AUTH_FAILED: 'Open WebUI tool file: the Fileshed server refused the api_key valve (401).',
  SERVER_REFUSED: 'Open WebUI tool file: the Fileshed server refused the request (403), e.g. valve overrides outside api-key mode.',
  SERVER_ERROR: 'Open WebUI tool file: the Fileshed server answered with an HTTP error or an unreadable answer.',
  ACCESS_DENIED: 'The download link belongs to another user.',
  LINK_NOT_FOUND: 'No download link has this id (shed_link_list shows yours).',
  NOT_A_FILESHED_LINK: 'The Open WebUI file was not created by Fileshed, so Fileshed does not delete it.',
  OPENWEBUI_API_UNAVAILABLE: 'Open WebUI links need an Open WebUI session (the server passes the user\'s token) and a reachable openwebui_api_url.',
  OPENWEBUI_INSERT_ERROR: 'Open WebUI refused or failed the upload of the linked file.',
  OPENWEBUI_DELETE_ERROR: 'Open WebUI refused or failed to delete the linked file.',
  SERVER_BUSY: 'The server (fileshed serve) already holds the most calls one user may have waiting; this call was not started. Wait for earlier calls to answer, then retry.',
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
