/**
 * Files at rest are the server user's alone: the storage base (everything beneath it: users'
 * files, access_auth.sqlite with the link-signing secret and every link id, the config file with
 * API keys, the audit log) is mode 0700, so no other local user can reach any of it. A server
 * creates it so, or tightens it at start; secrets are written 0600 whatever the umask.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Files holding secrets, tightened to 0600 at start if an older run left them open. */
const SECRET_FILES = ['access_auth.sqlite', 'fileshed.json'];

/** Creates the base 0700 or tightens it; returns a warning when it cannot be made private. */
export function privateStorageBase(base: string): string | undefined {
  fs.mkdirSync(path.dirname(base), { recursive: true });
  try {
    fs.mkdirSync(base, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = fs.statSync(base);
  if (!st.isDirectory()) throw new Error(`the storage base ${base} is not a folder`);
  const problems: string[] = [];
  const tighten = (p: string, mode: number) => {
    const now = fs.statSync(p, { throwIfNoEntry: false });
    if (now === undefined || (now.mode & 0o077) === 0) return;
    try {
      fs.chmodSync(p, mode);
    } catch (err) {
      problems.push(`${p} is mode ${(now.mode & 0o777).toString(8)} and could not be made ${mode.toString(8)} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  tighten(base, 0o700);
  for (const name of SECRET_FILES) tighten(path.join(base, name), 0o600);
  if (problems.length === 0) return undefined;
  return `the storage base is readable by other local users: ${problems.join('; ')}. Make the server's user its owner, or set the modes by hand.`;
}
