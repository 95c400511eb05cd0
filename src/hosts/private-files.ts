import { serving } from '../index.js';

/**
 * What a server creates is its user's alone: files 0600 and folders 0700 (users' files, command
 * output, git objects, databases), whatever the umask it was started with; the base is 0700.
 */
export function privateFiles(base: string): void {
  process.umask(0o077);
  const warning = serving.privateStorageBase(base);
  if (warning !== undefined) process.stderr.write(`fileshed: warning: ${warning}\n`);
}
