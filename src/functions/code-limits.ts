import { shedError } from '../core/base/errors.js';

/** Longest code or script a call may send (it travels to the launcher, in bwrap mode as arguments). */
export const MAX_SCRIPT_BYTES = 512 * 1024;

/** Refuses a script the interpreter could not take: a NUL byte, or more than MAX_SCRIPT_BYTES. */
export function requireScriptText(param: 'code' | 'script', text: string): void {
  if (text.includes('\0')) {
    throw shedError('INVALID_PARAMETER', `'${param}' contains a NUL byte, which no source file may hold.`, {
      details: { parameter: param },
      hint: param === 'code' ? 'Write the byte as an escape in a string literal instead, e.g. "\\x00".' : "Write it with printf '\\000' instead.",
    });
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_SCRIPT_BYTES) {
    throw shedError('INVALID_PARAMETER', `'${param}' is ${bytes} bytes; at most ${MAX_SCRIPT_BYTES} are accepted.`, {
      details: { parameter: param, received_bytes: bytes, limit: MAX_SCRIPT_BYTES },
      hint: param === 'code' ? 'Save the program as a .py file with shed_create_file, then run it with shed_run_python(path="...").' : 'Split the script into smaller ones, or write its data into files first (shed_create_file).',
    });
  }
}
