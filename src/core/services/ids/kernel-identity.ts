/** A uid, a gid and the supplementary groups a command runs with (never 0): see src/core/services/ids/for-call.ts. */
export interface KernelIdentity {
  uid: number;
  gid: number;
  groups: readonly number[];
}
