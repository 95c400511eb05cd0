/**
 * A mistake in the command line itself (an unknown option, a missing value): the CLI shows it with
 * the command's usage and exits 2. Every other error is one line (exit 1).
 */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** By name, not class: the server bundle (dist/server.mjs) and the CLI each carry a copy of this class. */
export function isUsageError(err: unknown): boolean {
  return err instanceof Error && err.name === 'UsageError';
}
