/**
 * Secrets belong in the environment or the config file: a command line is readable by every user of
 * the machine (`ps`, /proc/PID/cmdline) and, in a container, is pid 1's. A secret given as an
 * argument still works, with a warning saying where to put it instead.
 */

/** Flags whose value is a secret, and where else it is read from. */
const SECRET_FLAGS: Record<string, string> = {
  'api-key': 'FILESHED_API_KEY (comma-separated for several) or "server": {"api_keys": [...]} in the config file',
  'jwt-secret': 'FILESHED_JWT_SECRET or "server": {"jwt_secret": ...} in the config file',
  'link-secret': 'FILESHED_LINK_SECRET or "server": {"link_secret": ...} in the config file',
};

/** One warning per secret among `given` (flag names without --); a coordination URL with a password counts. */
export function secretWarnings(given: Iterable<string>, coordination: string | undefined): string[] {
  const warnings: string[] = [];
  for (const flag of new Set(given)) {
    const safer = SECRET_FLAGS[flag];
    if (safer !== undefined) warnings.push(`--${flag} on the command line can be read by every user of this machine (ps, /proc/<pid>/cmdline): set ${safer} instead.`);
  }
  if (coordination !== undefined && hasPassword(coordination)) {
    warnings.push('--coordination with a password in its URL can be read by every user of this machine (ps, /proc/<pid>/cmdline): set FILESHED_COORDINATION (or "server": {"coordination": ...} in the config file) instead.');
  }
  return warnings;
}

function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

export function warnAboutSecrets(given: Iterable<string>, coordination: string | undefined): void {
  for (const w of secretWarnings(given, coordination)) process.stderr.write(`fileshed: warning: ${w}\n`);
}
