/**
 * A text patch that uses the model's pattern runs as a pool job (see core/base/work): the engine is
 * linear-time (regex.ts), but its cost still grows with the pattern's size times the file's, so it
 * never runs on the event loop that answers the other users, and it has a deadline.
 */
import { shedError } from '../errors.js';
import type { JobTable } from '../work/jobs.js';
import { runJob } from '../work/pool.js';
import { applyTextPatch, type PatchOutcome, type TextPatch } from './patch.js';

interface PatchInput {
  original: string;
  content: string;
  patch: TextPatch;
}

/** Worker side. */
export const textJobs: JobTable = {
  async 'text.patch'(input) {
    const { original, content, patch } = input as PatchInput;
    return { value: applyTextPatch(original, content, patch) };
  },
};

/** Applies `patch` on a worker thread; past `timeoutSeconds` the worker is stopped (TIMEOUT). */
export function runTextPatch(original: string, content: string, patch: TextPatch, timeoutSeconds: number): Promise<PatchOutcome> {
  return runJob<PatchOutcome>('text.patch', { original, content, patch } satisfies PatchInput, {
    timeoutMs: timeoutSeconds * 1000,
    onTimeout: () =>
      shedError('TIMEOUT', `The pattern ran longer than ${timeoutSeconds} s on this file and was stopped; the file was not changed.`, {
        details: { parameter: 'pattern', received: patch.pattern?.text, timeout_seconds: timeoutSeconds },
        hint: 'Use a simpler pattern (fewer and smaller {n,m} repetitions), anchor it to a distinctive word, or replace by line numbers (position="replace", line=..., end_line=...).',
      }),
  });
}
