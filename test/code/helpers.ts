/** What the code-execution tests share: the modes scripts run in, and answers checked as they read. */
import { expect } from 'vitest';
import type { Result } from '../helpers/shed.js';

/** Scripts run only under a kernel wall. */
export const KERNEL_MODES = ['bwrap', 'landlock'] as const;

/** The call succeeded (whatever the script's exit status): its data. */
export function ok(r: Result): NonNullable<Result['data']> {
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.success).toBe(true);
  return r.data!;
}

/** The call succeeded and the script exited 0: its data. */
export function ran(r: Result): NonNullable<Result['data']> {
  const d = ok(r);
  expect(d.returncode, `${r.message}\n${d.stderr}`).toBe(0);
  return d;
}
