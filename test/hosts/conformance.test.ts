/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.13: later versions
 * crash on Node 20), server side, against a `local`-mode server (its CLI sends no credentials).
 * Only the scenarios that apply to any server are run; the others expect the reference
 * "everything" server's own tools.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type Served } from './helpers.js';

const run = promisify(execFile);
const CONFORMANCE = path.resolve('node_modules/.bin/conformance');
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'logging-set-level', 'server-sse-multiple-streams', 'dns-rebinding-protection'];

let s: Served;
beforeAll(async () => {
  s = await serve(['--access-log', 'off']);
});
afterAll(async () => {
  await s.stop();
});

describe('MCP conformance suite (server)', () => {
  it.each(SCENARIOS)('%s passes', async (scenario) => {
    const { stdout } = await run(CONFORMANCE, ['server', '--url', `${s.url}/mcp`, '--scenario', scenario], { timeout: 60_000 }).catch((err: { stdout?: string; stderr?: string }) => {
      throw new Error(`conformance ${scenario} failed:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
    });
    const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(stdout);
    expect(summary, stdout).not.toBeNull();
    expect(Number(summary![3]), stdout).toBe(0);
    expect(summary![1]).toBe(summary![2]);
  }, 90_000);
});
