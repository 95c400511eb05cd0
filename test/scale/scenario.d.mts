// Types of scenario.mjs for the TypeScript test.
export const USERS: string[];
export interface Verified {
  attempts: number;
  acked: number;
  lost: string[];
  doubled: string[];
  versioned: number;
  commitsOk: number;
  missingCommit: string[];
  /** Each missing commit's tag with the warning its call answered (why it was not recorded). */
  missingCommitWhy: string[];
  doubleCommit: string[];
  recoveryCommits: number;
  fsck: string[];
  dirty: string[];
  integrity: string;
  /** Databases left in WAL mode on the shared storage (must be none). */
  walDatabases: string[];
}
export interface ScenarioResult {
  name: string;
  ok: boolean;
  verify: Verified;
  quota?: { accepted: number; refused: number; others: string[]; diskBytes: number; expected: number };
  takeoverMs?: number;
  takeoverOk?: boolean;
  /** The user's next call after a holder was killed inside a Documents commit. */
  commitTakeoverMs?: number;
  commitTakeoverOk?: boolean;
  commitTakeoverError?: string;
}
export function runScenario(opts: {
  name: string;
  base: string;
  client: 'local' | 'shared' | 'own';
  mnt?: string;
  mountOptions?: string;
  logDir: string;
  redisUrl?: string;
  balancer?: 'haproxy' | 'nginx';
  policy?: 'sticky' | 'roundrobin';
  ops?: number;
  cli?: string;
  health?: boolean;
  /** false: no kill, no takeover, no quota race (a smaller run). */
  full?: boolean;
  log?: (line: string) => void;
}): Promise<ScenarioResult>;
export function row(r: ScenarioResult): string;
export function measureStall(opts: { gluster: import('./cluster.mjs').Gluster; base: string; logDir: string; mountOptions?: string; seconds?: number }): Promise<{
  samples: number;
  failed: number;
  p50: number;
  p99: number;
  max: number;
  notReady: number;
  callOk: boolean;
  callMs: number;
}>;
