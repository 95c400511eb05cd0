/**
 * GET /metrics in the Prometheus text format (version 0.0.4): calls, errors and latency per
 * function (every transport: OpenAPI routes and MCP tools/call), the fair scheduler's queue, the
 * worker pool, the sandbox mode, the storage kind and the coordination in use. Who may read it is
 * the setting `--metrics` (admin by default: the same credentials as the admin page, e.g. the
 * API key as a Bearer token for a Prometheus scrape job; `public`; `off`).
 */

/** Latency buckets (seconds): a quick read to a long command. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];

interface FunctionStats {
  calls: number;
  errors: Map<string, number>;
  buckets: number[];
  sum: number;
}

export interface Gauges {
  scheduler: { running: number; waiting: number; users: number };
  pool: { workers: number; busy: number; queued: number; size: number };
  sandbox: string;
  storage: { kind: string; type: string };
  coordination: string;
  mcpSessions: number;
  ready: boolean;
}

export class Metrics {
  private readonly byFunction = new Map<string, FunctionStats>();
  private readonly started = Date.now();

  /** One finished call; `code` is the error code of a failed one. */
  record(fn: string, seconds: number, code: string | undefined): void {
    let s = this.byFunction.get(fn);
    if (s === undefined) {
      s = { calls: 0, errors: new Map(), buckets: BUCKETS.map(() => 0), sum: 0 };
      this.byFunction.set(fn, s);
    }
    s.calls++;
    s.sum += seconds;
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) s.buckets[i]!++;
    if (code !== undefined) s.errors.set(code, (s.errors.get(code) ?? 0) + 1);
  }

  /** Records the call behind an envelope string: success, or the error code it carries. */
  recordEnvelope(fn: string, seconds: number, envelope: string): void {
    const head = envelope.slice(0, 64);
    const ok = /"success":\s*true/.test(head);
    this.record(fn, seconds, ok ? undefined : (/"code":\s*"([A-Z_]+)"/.exec(envelope)?.[1] ?? 'UNKNOWN'));
  }

  render(g: Gauges): string {
    const out: string[] = [];
    const metric = (name: string, type: string, help: string, lines: string[]) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines);
    const fns = [...this.byFunction.entries()].sort(([a], [b]) => a.localeCompare(b));
    metric('fileshed_calls_total', 'counter', 'Function calls answered (success and error envelopes).', fns.map(([fn, s]) => `fileshed_calls_total{function="${fn}"} ${s.calls}`));
    metric('fileshed_call_errors_total', 'counter', 'Function calls answered with an error envelope, by error code.', fns.flatMap(([fn, s]) => [...s.errors].map(([code, n]) => `fileshed_call_errors_total{function="${fn}",code="${code}"} ${n}`)));
    metric(
      'fileshed_call_duration_seconds',
      'histogram',
      'Time from a call being queued to its answer, per function.',
      fns.flatMap(([fn, s]) => [
        ...BUCKETS.map((b, i) => `fileshed_call_duration_seconds_bucket{function="${fn}",le="${b}"} ${s.buckets[i]}`),
        `fileshed_call_duration_seconds_bucket{function="${fn}",le="+Inf"} ${s.calls}`,
        `fileshed_call_duration_seconds_sum{function="${fn}"} ${s.sum.toFixed(6)}`,
        `fileshed_call_duration_seconds_count{function="${fn}"} ${s.calls}`,
      ]),
    );
    metric('fileshed_calls_running', 'gauge', 'Calls executing now (all users).', [`fileshed_calls_running ${g.scheduler.running}`]);
    metric('fileshed_calls_waiting', 'gauge', 'Calls waiting for a running slot (queue depth).', [`fileshed_calls_waiting ${g.scheduler.waiting}`]);
    metric('fileshed_users_active', 'gauge', 'Users with a call running or waiting.', [`fileshed_users_active ${g.scheduler.users}`]);
    metric('fileshed_pool_workers', 'gauge', 'Worker threads started (SQLite, CSV, archives).', [`fileshed_pool_workers ${g.pool.workers}`]);
    metric('fileshed_pool_busy', 'gauge', 'Worker threads running a job.', [`fileshed_pool_busy ${g.pool.busy}`]);
    metric('fileshed_pool_queued', 'gauge', 'Jobs waiting for a worker thread.', [`fileshed_pool_queued ${g.pool.queued}`]);
    metric('fileshed_pool_size', 'gauge', 'Most worker threads the pool starts.', [`fileshed_pool_size ${g.pool.size}`]);
    metric('fileshed_mcp_sessions', 'gauge', 'Open MCP sessions on this instance.', [`fileshed_mcp_sessions ${g.mcpSessions}`]);
    metric('fileshed_sandbox_info', 'gauge', 'Active command sandbox mode.', [`fileshed_sandbox_info{mode="${g.sandbox}"} 1`]);
    metric('fileshed_storage_info', 'gauge', 'Filesystem of the storage base.', [`fileshed_storage_info{kind="${g.storage.kind}",type="${label(g.storage.type)}"} 1`]);
    metric('fileshed_coordination_info', 'gauge', 'Coordination across hosts (redis or none).', [`fileshed_coordination_info{kind="${g.coordination}"} 1`]);
    metric('fileshed_ready', 'gauge', 'Readiness (storage and coordination answer): 1 or 0.', [`fileshed_ready ${g.ready ? 1 : 0}`]);
    metric('fileshed_uptime_seconds', 'gauge', 'Seconds since this instance started.', [`fileshed_uptime_seconds ${Math.round((Date.now() - this.started) / 1000)}`]);
    return `${out.join('\n')}\n`;
  }
}

function label(v: string): string {
  return v.replace(/[\\"\n]/g, '_');
}
