/**
 * What the stall tests share: the probe of `bench/stall-http.mjs` (plain JavaScript, no side effects
 * on import), typed, and a `fileshed serve` (dist/cli.mjs) on a fresh base whose reader, bob, is
 * warmed up before any attack.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
// @ts-expect-error -- a .mjs bench script without type declarations
import { percentile as benchPercentile, post, probe, startServe } from '../../bench/stall-http.mjs';

export type Envelope = { success: boolean; data?: Record<string, unknown>; error?: { code: string } };
export type Probe = { result: Envelope; ms: number; reads: number[]; failures: string[] };

export const CLI = path.resolve('dist/cli.mjs');
export const call = post as (url: string, user: string, fn: string, body: unknown) => Promise<Envelope>;
export const percentile = benchPercentile as (xs: number[], p: number) => number;
/** Times bob's small read every 20 ms while `attack` runs. */
export const probeReads = (url: string, attack: () => Promise<Envelope>) => (probe as (url: string, attack: () => Promise<Envelope>, pauseMs: number) => Promise<Probe>)(url, attack, 20);

/** More runnable work than cores: the reader waits for a CPU, and the server's loop pays for GC its helper threads could not run. */
export const busyMachine = () => os.loadavg()[0]! > os.cpus().length;

/**
 * The server's reported holds (each past 200 ms of its event loop's CPU) that fail a test: all of
 * them on a machine no busier than its cores; past 500 ms on a busier one. A CI run at load above 2 on
 * 2 cores once reported 226 ms for the 30,000-file split in a group space, which holds nothing past
 * 40 ms on a quiet machine; the stalls these tests were written for held the loop for seconds.
 */
export function holdsPastLimit(held: readonly number[]): number[] {
  const limit = busyMachine() ? 500 : 200;
  return held.filter((ms) => ms > limit);
}

export interface StallServer {
  base: string;
  url: string;
  /**
   * The server-side lag probe: each time since the last call that the server reported its event
   * loop held past 200 ms of CPU (src/hosts/lag-report.ts), in ms; emptied by each call.
   */
  takeHeld(): number[];
  stop(): Promise<void>;
}

/** Serve on a fresh base (`prepare` runs on it first, e.g. to add a group), bob's reads warmed up. */
export async function startStallServer(valves?: readonly string[], prepare?: (base: string) => Promise<void>): Promise<StallServer> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-stall-'));
  await prepare?.(base);
  const server = (startServe as (cli: string, base: string, valves?: readonly string[]) => { proc: import('node:child_process').ChildProcess; url: Promise<string>; held: number[] })(CLI, base, valves);
  const url = await server.url;
  expect((await call(url, 'bob', 'shed_create_file', { zone: 'storage', path: 'hello.txt', content: 'hello\n' })).success).toBe(true);
  for (let i = 0; i < 10; i++) await call(url, 'bob', 'shed_read', { zone: 'storage', path: 'hello.txt' });
  server.held.length = 0; // the start (loading the bundle, recovery) is not a call
  return {
    base,
    url,
    takeHeld: () => server.held.splice(0),
    async stop() {
      server.proc.kill('SIGTERM');
      await new Promise((r) => server.proc.once('exit', r));
      // Deep or wide trees: fs.rmSync's recursion could overflow, and the removal takes a while on a loaded machine.
      spawnSync('rm', ['-rf', base]);
    },
  };
}
