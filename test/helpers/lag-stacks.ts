/**
 * Where the event loop was during a hold, for the lag probe's failure message (lag.ts): a CPU
 * profiler samples this test process every SAMPLE_US for as long as it runs calls, and a hold the
 * probe may blame is answered with the stacks sampled inside it. A hold seen only on a loaded CI
 * machine can then be read off CI's own output instead of guessed at. FILESHED_LAG_PROFILE=0 turns
 * it off.
 */
import { Session } from 'node:inspector';

/** One sample every 5 ms: ~70 in a 360 ms hold, at no cost worth measuring. */
const SAMPLE_US = 5000;
/** Holds shorter than this are not looked at (every call would pay for a profile otherwise). */
export const STACKS_FROM_MS = 50;

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

let session: Session | undefined;

function post<T>(method: string, params?: object): T | undefined {
  let out: T | undefined;
  // An in-process session answers synchronously.
  session!.post(method, params, (err, result) => {
    if (!err) out = result as T;
  });
  return out;
}

/** Starts sampling this process (once). */
export function startSampling(): void {
  if (session !== undefined || process.env.FILESHED_LAG_PROFILE === '0') return;
  session = new Session();
  session.connect();
  post('Profiler.enable');
  post('Profiler.setSamplingInterval', { interval: SAMPLE_US });
  post('Profiler.start');
}

/** The profiler's clock (µs, monotonic) at `performance.now()` = 0. */
const clockOffsetUs = () => Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;

const where = (f: Frame) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|node_modules|test)\//, '$1/')}:${f.lineNumber + 1}`;

/**
 * The most sampled stacks between two `performance.now()` readings, innermost frame first, one
 * per line with their share; empty when not sampling. Sampling starts over afterwards.
 */
export function stacksBetween(startMs: number, endMs: number): string {
  if (session === undefined) return '';
  const profile = post<{ profile: Profile }>('Profiler.stop')?.profile;
  post('Profiler.start');
  if (profile?.samples === undefined || profile.timeDeltas === undefined) return '';
  const offset = clockOffsetUs();
  const from = startMs * 1000 + offset;
  const to = endMs * 1000 + offset;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const counts = new Map<string, number>();
  let t = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    if (t < from || t > to) continue;
    const frames: string[] = [];
    for (let id: number | undefined = profile.samples[i]; id !== undefined && frames.length < 12; id = parent.get(id)) {
      const f = nodes.get(id)!.callFrame;
      if (f.functionName !== '(root)') frames.push(where(f));
    }
    const key = frames.join(' < ');
    counts.set(key, (counts.get(key) ?? 0) + 1);
    total++;
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([stack, n]) => `  ${Math.round((100 * n) / total)}% ${stack}`)
    .join('\n');
}
