/**
 * Liveness and readiness for load balancers and Kubernetes.
 *
 * - `GET /healthz` (liveness) never touches the storage: it answers from memory (version, sandbox
 *   mode, auth modes, storage kind, coordination), so a slow or stalled filesystem never makes a
 *   balancer or the kubelet kill a live instance.
 * - `GET /readyz` (readiness) says whether calls can succeed now: the storage answered a probe (an
 *   in-place write of a small file under the base) within READY_TIMEOUT_MS, the coordination
 *   service answered its last ping (pinged every second; one that fails or hangs past
 *   READY_TIMEOUT_MS makes the instance not ready), and the main thread is turning. 503 with the reason otherwise, so the
 *   balancer routes elsewhere while storage is slow.
 *
 * Probes run in the background every PROBE_EVERY_MS, one at a time (a probe stuck on a hung mount
 * is reported as pending, never piled up: each holds a libuv thread until the mount answers), and
 * write their results into shared memory. The answers are computed from that memory alone, so they
 * cost microseconds. With `--health-port`, a dedicated thread answers both on that port: it keeps
 * answering (in well under 50 ms) while the main thread waits for a slow filesystem inside a call.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/** A probe slower than this makes the instance not ready. */
export const READY_TIMEOUT_MS = 2_000;
const PROBE_EVERY_MS = 1_000;
const BEAT_EVERY_MS = 100;

/** Slots of the shared state (Float64, ms since the epoch unless said otherwise). */
const SLOT = { beat: 0, storageOkAt: 1, storageMs: 2, storagePendingSince: 3, coordOkAt: 4, coordMs: 5, coordPendingSince: 6, coordUsed: 7, storageError: 8, coordError: 9 } as const;

export interface HealthInfo {
  status: 'ok';
  version: string;
  sandbox: string;
  /** The Landlock ABI commands run under, or null when they do not run under Landlock. */
  landlock_abi: number | null;
  /** Commands run without kernel confinement (sandbox "validated", allowed with --allow-unconfined). */
  unconfined: boolean;
  /** What holds users apart beside the sandbox: identity, namespaces or none (src/core/services/ids/separation.ts). */
  separation: string;
  auth: string[];
  storage: { kind: string; type: string; shared: boolean };
  coordination: 'redis' | 'none';
}

export interface Readiness {
  ready: boolean;
  /** Why not, when not ready. */
  reason?: string;
  storage_ms?: number;
  coordination_ms?: number;
  /** How long the main thread has not turned (only measured from the health thread). */
  main_thread_stalled_ms?: number;
}

/**
 * The readiness verdict from the shared state. Self-contained (no closure, no imports): its source
 * also runs in the health thread.
 */
function evaluate(state: Float64Array, now: number, fromThread: boolean, timeoutMs: number): Readiness {
  const out: Readiness = { ready: true };
  const stalled = now - state[0]!;
  if (fromThread) out.main_thread_stalled_ms = Math.max(0, Math.round(stalled));
  const storagePending = state[3]! > 0 ? now - state[3]! : 0;
  if (state[1]! > 0) out.storage_ms = Math.round(state[2]! * 10) / 10;
  if (state[7]! > 0 && state[4]! > 0) out.coordination_ms = Math.round(state[5]! * 10) / 10;
  const coordPending = state[6]! > 0 ? now - state[6]! : 0;
  const no = (reason: string): Readiness => ({ ...out, ready: false, reason });
  if (fromThread && stalled > timeoutMs) return no(`the main thread has not turned for ${Math.round(stalled)} ms (waiting for the storage inside a call)`);
  if (state[1]! === 0) return no(state[8]! > 0 ? 'the storage refused the probe write' : 'the storage has not answered a probe yet');
  if (storagePending > timeoutMs) return no(`the storage has not answered a probe for ${Math.round(storagePending)} ms`);
  if (now - state[1]! > 3 * timeoutMs + 2000) return no(state[8]! > 0 ? 'the storage refused the last probe write' : `no successful storage probe for ${Math.round(now - state[1]!)} ms`);
  if (state[7]! > 0) {
    // A refused connection fails the ping at once: not ready from then on, not after a silence.
    if (state[9]! > 0) return no('the coordination service does not answer (its last ping failed)');
    if (coordPending > timeoutMs) return no(`the coordination service has not answered for ${Math.round(coordPending)} ms`);
    if (now - state[4]! > 3 * timeoutMs + 2000) return no('the coordination service does not answer');
  }
  return out;
}

/**
 * Storage probes into the shared state: each tick starts one probe unless the previous one is
 * still pending (a probe stuck on a hung mount holds one libuv thread until the mount answers:
 * never more than one). Self-contained: its source also runs in the health thread, which probes
 * on its own so readiness follows the storage even while the main thread waits inside a call.
 * The probe is a write that reaches the storage: `{base}/.fileshed-ready/{host}` rewritten in place.
 */
function storageProber(fs: typeof import('node:fs'), state: Float64Array, dir: string, file: string): () => void {
  let pending = false;
  const open = () => fs.promises.open(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
  const probe = async () => {
    let handle;
    try {
      handle = await open();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
      handle = await open();
    }
    try {
      await handle.write('ready\n', 0); // the same bytes every time: a write that reaches the storage
    } finally {
      await handle.close().catch(() => undefined);
    }
  };
  return () => {
    if (pending) return;
    pending = true;
    const started = performance.now();
    state[3] = Date.now();
    probe().then(
      () => {
        state[1] = Date.now();
        state[2] = performance.now() - started;
        state[8] = 0;
      },
      () => (state[8] = 1),
    ).finally(() => {
      pending = false;
      state[3] = 0;
    });
  };
}

/** The health thread: a tiny HTTP server answering /healthz and /readyz from shared memory, and probing the storage. */
const THREAD_SOURCE = `
const http = require('node:http');
const { workerData, parentPort } = require('node:worker_threads');
const evaluate = ${evaluate.toString()};
const storageProber = ${storageProber.toString()};
const state = new Float64Array(workerData.shared);
const probe = storageProber(require('node:fs'), state, workerData.probeDir, workerData.probeFile);
probe();
setInterval(probe, workerData.probeEveryMs).unref();
let info = workerData.info;
parentPort.on('message', (m) => { if (m && m.info) info = m.info; });
const send = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
};
const server = http.createServer((req, res) => {
  const p = (req.url || '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { detail: 'GET only' });
  if (p === '/healthz') return send(res, 200, { ...info, main_thread_stalled_ms: Math.max(0, Math.round(Date.now() - state[0])) });
  if (p === '/readyz') { const r = evaluate(state, Date.now(), true, workerData.timeoutMs); return send(res, r.ready ? 200 : 503, r); }
  send(res, 404, { detail: 'This port answers GET /healthz and /readyz only.' });
});
server.keepAliveTimeout = 5000;
server.on('error', (err) => parentPort.postMessage({ error: String(err && err.message || err) }));
server.listen(workerData.port, workerData.host, () => parentPort.postMessage({ port: server.address().port }));
`;

export class Health {
  private readonly state = new Float64Array(new SharedArrayBuffer(8 * 10));
  private readonly timers: NodeJS.Timeout[] = [];
  private thread: Worker | undefined;
  private coordPending = false;
  private started!: () => void;
  /** Resolves once the first complete information is known (the sandbox report). */
  readonly known = new Promise<void>((resolve) => (this.started = resolve));
  private readonly probeDir: string;
  private readonly probeFile: string;
  /** Storage probes from the main thread, until a health thread takes them over. */
  private storageProbe: (() => void) | undefined;

  constructor(
    private info: HealthInfo,
    base: string,
    private readonly coordination: { ping(): Promise<number> } | undefined,
  ) {
    this.state[SLOT.beat] = Date.now();
    this.state[SLOT.coordUsed] = coordination ? 1 : 0;
    this.probeDir = path.join(base, '.fileshed-ready');
    this.probeFile = path.join(this.probeDir, os.hostname().replace(/[^A-Za-z0-9._-]/g, '_') || 'host');
    this.storageProbe = storageProber(fs, this.state, this.probeDir, this.probeFile);
  }

  /** Starts the heartbeat and the background probes (and the first probe right away). */
  start(): void {
    const beat = setInterval(() => (this.state[SLOT.beat] = Date.now()), BEAT_EVERY_MS);
    const probe = setInterval(() => this.probe(), PROBE_EVERY_MS);
    for (const t of [beat, probe]) t.unref();
    this.timers.push(beat, probe);
    this.probe();
  }

  /** The liveness answer (memory only). */
  healthz(): HealthInfo {
    return this.info;
  }

  update(info: HealthInfo): void {
    this.info = info;
    this.started();
    this.thread?.postMessage({ info });
  }

  readyz(): Readiness {
    return evaluate(this.state, Date.now(), false, READY_TIMEOUT_MS);
  }

  /** Serves /healthz and /readyz from a dedicated thread on `port` (0: any free port); resolves with the port. */
  async listen(host: string, port: number): Promise<number> {
    const thread = new Worker(THREAD_SOURCE, { eval: true, workerData: { shared: this.state.buffer, info: this.info, host, port, timeoutMs: READY_TIMEOUT_MS, probeDir: this.probeDir, probeFile: this.probeFile, probeEveryMs: PROBE_EVERY_MS } });
    this.storageProbe = undefined; // the thread probes from now on
    thread.unref();
    this.thread = thread;
    return new Promise<number>((resolve, reject) => {
      thread.once('message', (m: { port?: number; error?: string }) => (m.port !== undefined ? resolve(m.port) : reject(new Error(`health port ${port}: ${m.error}`))));
      thread.once('error', reject);
    });
  }

  async close(): Promise<void> {
    for (const t of this.timers.splice(0)) clearInterval(t);
    await this.thread?.terminate();
  }

  /** One storage probe (unless the health thread probes) and one coordination ping, unless the previous ones are still pending. */
  private probe(): void {
    this.storageProbe?.();
    if (this.coordination !== undefined && !this.coordPending) {
      this.coordPending = true;
      this.state[SLOT.coordPendingSince] = Date.now();
      this.coordination.ping().then(
        (ms) => {
          this.state[SLOT.coordOkAt] = Date.now();
          this.state[SLOT.coordMs] = ms;
          this.state[SLOT.coordError] = 0;
        },
        () => (this.state[SLOT.coordError] = 1),
      ).finally(() => {
        this.coordPending = false;
        this.state[SLOT.coordPendingSince] = 0;
      });
    }
  }
}
