/**
 * The shape of pool jobs: a job is a named async function on a worker thread taking structured-
 * cloneable input and returning a value (plus ArrayBuffers to move rather than copy).
 */
export interface JobContext {
  /** Progress of a long job, relayed to the caller's status events (throttled there). */
  progress(done: number, total: number, rows: number): Promise<void>;
}

export interface JobReply {
  value: unknown;
  transfer?: ArrayBuffer[];
}

export type JobTable = Record<string, (input: unknown, ctx: JobContext) => Promise<JobReply>>;
