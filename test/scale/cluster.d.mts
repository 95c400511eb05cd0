// Types of cluster.mjs for the TypeScript test (the module is plain JS: bench/scale.mjs runs it too).
export const REPO: string;
export const CLI: string;
export const KEY: string;
export const COHERENT_MOUNT: string;
export function cannotRun(): string | undefined;
export function freePort(): Promise<number>;
export interface Gluster {
  root: string;
  mnt: string;
  setCoherent(on: boolean): void;
  brickPid(): number;
  down(): void;
}
export function glusterUp(root: string, log?: (line: string) => void): Gluster;
export function startRedis(dir: string): Promise<{ url: string; port: number; pid: number; stop(): Promise<void> }>;
export interface CallResult {
  status?: number;
  envelope?: { success: boolean; data?: any; error?: { code: string; message: string } }; // eslint-disable-line @typescript-eslint/no-explicit-any -- envelopes are free-form
  error?: string;
  ms: number;
}
export interface Instance {
  name: string;
  url: string;
  port: number;
  healthPort: number | undefined;
  healthUrl: string | undefined;
  pid: number;
  lines: string[];
  stderr(): string;
  kill9(): Promise<void>;
  stop(): Promise<void>;
  call(fn: string, body: unknown, user: string, extra?: { headers?: Record<string, string>; timeoutMs?: number }): Promise<CallResult>;
}
export function startInstance(opts: { name: string; base: string; client?: 'local' | 'shared' | 'own'; mnt?: string; mountOptions?: string; logDir?: string; flags?: string[]; cli?: string; health?: boolean }): Promise<Instance>;
export function callFunction(url: string, fn: string, body: unknown, user: string, extra?: { headers?: Record<string, string>; timeoutMs?: number }): Promise<CallResult>;
export function startBalancer(opts: { kind: 'haproxy' | 'nginx'; instances: Instance[]; policy?: 'sticky' | 'roundrobin'; dir: string; check?: boolean }): Promise<{ url: string; stop(): Promise<void>; stderr(): string }>;
export function tmpRoot(): string;
