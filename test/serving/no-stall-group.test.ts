/**
 * Group spaces stall nobody, however many files pass through them: against a real `fileshed serve`
 * (dist/cli.mjs) over HTTP, one user copies a folder of 20,000 small files into a group
 * (shed_copy_to_group: 20,000 ownership records), unzips 20,000 entries there with a command,
 * deletes the copied folder (its records dropped), runs a script that writes 2,000 files there, then
 * two more commands; meanwhile another user's small shed_read is timed in a loop. Before, each
 * ownership record was a whole-database rewrite of access_auth.sqlite on the event loop: a copy of
 * 2,000 files held it 10.5 s (20,000: about 236 s, issue 31), and every later command in the group
 * about 1 s. Now all records of a call are one write, and every loop over the group's files yields.
 * Bounds: the server's own lag probe (FILESHED_LAG_REPORT_MS=200, src/hosts/lag-report.ts) reports
 * no stretch of over 200 ms of CPU without yielding: the exact check, whatever the machine's load.
 * The reader's p99 stays under 100 ms (the product's target) beyond what the machine itself costs
 * it (the reader's p99 with no attack, measured first); on a machine running more than it has cores
 * (a 2-core CI machine running other suites: the attack's own processes then take the reader's CPU)
 * the bound is 500 ms, still twenty times below the old stalls. No read fails, none comes near the
 * old stalls. Measured on a 2-core machine at load 11: p99 87-160 ms, no hold reported by the server.
 * The same attacks, sized by BENCH_SMOKE, are rows of `node bench/stall-http.mjs` (BENCH_ATTACKS=group).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRecords } from '../../src/core/services/groups/access.js';
// @ts-expect-error -- a .mjs bench script without type declarations
import { addTeam, groupAttacks, MANY_VALVES } from '../../bench/stall-http.mjs';
import { busyMachine, CLI, holdsPastLimit, percentile, probeReads, type Envelope, type StallServer, startStallServer } from './stall-server.js';

const FILES = 20_000;
type Attacks = Record<string, (url: string) => Promise<() => Promise<Envelope>>>;
/** Labels only, for it.each; the attacks themselves are made with the server's base (files made on disk). */
const labels = Object.keys((groupAttacks as (n: number) => Attacks)(FILES));
let attacks: Attacks;

const P99_MS = 100;
const P99_BUSY_MS = 500;
const LONGEST_MS = 1500;
let server: StallServer;
let url: string;
/** The reader's p99 with no attack: what the machine's own load adds. */
let idleP99 = 0;

beforeAll(async () => {
  server = await startStallServer([...(MANY_VALVES as string[]), 'allow_shell=true'], (base) => (addTeam as (cli: string, base: string) => Promise<void>)(CLI, base));
  url = server.url;
  attacks = (groupAttacks as (n: number, base: string) => Attacks)(FILES, server.base);
  const idle = await probeReads(url, () => new Promise<Envelope>((r) => setTimeout(() => r({ success: true }), 2000)));
  idleP99 = percentile(idle.reads, 99);
  server.takeHeld();
}, 60_000);

// Stopping the server and removing its base (tens of thousands of files and their history) passed
// 3 minutes with CPU hogs of the host running beside this suite.
afterAll(() => server.stop(), 600_000);

describe(`${FILES.toLocaleString('en')} files through a group space: another user is never stalled (HTTP, fileshed serve)`, () => {
  // In order: each probe builds on the one before (the folder deleted is the one copied).
  it.each(labels)('%s', async (label) => {
    const attack = await attacks[label]!(url);
    server.takeHeld(); // the setup's calls are not the attack
    const p = await probeReads(url, attack);
    await new Promise((r) => setTimeout(r, 300)); // the server judges a hold a moment after it
    const held = server.takeHeld();
    expect(p.result.success, JSON.stringify(p.result.error)).toBe(true);
    const max = Math.max(...p.reads);
    const seen = `reader p50 ${percentile(p.reads, 50).toFixed(1)} ms, p99 ${percentile(p.reads, 99).toFixed(1)} ms (${idleP99.toFixed(1)} ms with no attack), longest ${max.toFixed(0)} ms over ${p.reads.length} reads; attack ${(p.ms / 1000).toFixed(1)} s`;
    console.log(`${label}: ${seen}${held.length > 0 ? `; server held its loop ${held.join(', ')} ms` : ''}`);
    expect(p.failures, seen).toEqual([]);
    // The server's own probe: no stretch of over 200 ms of CPU without yielding (GC taken out; 500 ms
    // on a machine busier than its cores, stall-server.ts).
    expect(holdsPastLimit(held), `${seen}; the server's event loop was held (ms of CPU: ${held.join(', ')})`).toEqual([]);
    const loaded = busyMachine();
    expect(percentile(p.reads, 99), `${seen}${loaded ? ' (machine busier than its cores)' : ''}`).toBeLessThan(loaded ? P99_BUSY_MS : P99_MS + idleP99);
    expect(max, seen).toBeLessThan(LONGEST_MS);
  }, 600_000);

  it('the records followed the files: the copy is the copier\'s, the deleted folder left none', async () => {
    const files = await allRecords(server.base, 'team');
    expect(files.some((f) => f.path.startsWith('gmany/'))).toBe(false);
    expect(files.find((f) => f.path === 'gmany.zip')?.owner).toBe('alice');
    // What the script wrote is recorded as the caller's, in one write.
    expect(files.find((f) => f.path === 'made/f1.txt')?.owner).toBe('alice');
  }, 120_000);
});
