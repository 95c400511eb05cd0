/**
 * The hosts' last resort: an error nothing caught is logged and the process goes on (the fixes are
 * at the root; this only keeps a missed one from ending every user's calls).
 */
import { afterEach, expect, it } from 'vitest';
import { keepServing } from '../../src/hosts/last-resort.js';

const before = { exception: process.listeners('uncaughtException'), rejection: process.listeners('unhandledRejection') };
afterEach(() => {
  for (const l of process.listeners('uncaughtException')) if (!before.exception.includes(l)) process.off('uncaughtException', l);
  for (const l of process.listeners('unhandledRejection')) if (!before.rejection.includes(l)) process.off('unhandledRejection', l);
});

it('logs an uncaught exception and an unhandled rejection, one line each, and keeps going', () => {
  const lines: string[] = [];
  keepServing('serve', (line) => lines.push(line));
  const added = process.listeners('uncaughtException').filter((l) => !before.exception.includes(l));
  const addedRejection = process.listeners('unhandledRejection').filter((l) => !before.rejection.includes(l));
  expect(added).toHaveLength(1);
  expect(addedRejection).toHaveLength(1);
  (added[0] as (e: Error) => void)(new Error("ENOTDIR: not a directory, lstat '/x/d/f178'\n    at risky"));
  (addedRejection[0] as (e: unknown) => void)('plain reason');
  expect(lines).toEqual([
    "fileshed serve: uncaught exception (kept serving): Error: ENOTDIR: not a directory, lstat '/x/d/f178'",
    'fileshed serve: unhandled promise rejection (kept serving): plain reason',
  ]);
});
