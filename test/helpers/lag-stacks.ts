/**
 * Where the event loop was during a hold, for the lag probe (lag.ts): a CPU profiler samples this
 * test process every SAMPLE_US for as long as it runs calls; a hold the probe may blame is answered
 * with the stacks sampled inside it, and one in which no sample ran JavaScript is left out. A hold
 * seen only on a loaded CI machine can then be read off CI's own output instead of guessed at.
 * FILESHED_LAG_PROFILE=0 turns it off (and with it, the leaving out).
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

/** The samples of one profile, on `performance.now()`'s clock (ms), each with its stack's frames (innermost first). */
export interface Samples {
  at: number[];
  stacks: string[][];
}

/** The V8 states a sample shows when no JavaScript runs: native work of the runtime, not the product's. */
const NO_JAVASCRIPT = new Set(['(program)', '(garbage collector)', '(idle)']);

/** What was sampled since the last call, or since sampling started; sampling starts over. */
export function takeSamples(): Samples | undefined {
  if (session === undefined) return undefined;
  const profile = post<{ profile: Profile }>('Profiler.stop')?.profile;
  post('Profiler.start');
  if (profile?.samples === undefined || profile.timeDeltas === undefined) return undefined;
  const offset = clockOffsetUs();
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const out: Samples = { at: [], stacks: [] };
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    const frames: string[] = [];
    for (let id: number | undefined = profile.samples[i]; id !== undefined && frames.length < 12; id = parent.get(id)) {
      const f = nodes.get(id)!.callFrame;
      if (f.functionName !== '(root)') frames.push(NO_JAVASCRIPT.has(f.functionName) ? f.functionName : where(f));
    }
    out.at.push((t - offset) / 1000);
    out.stacks.push(frames);
  }
  return out;
}

export interface Sampled {
  /** The most sampled stacks, innermost frame first, one per line with their share. */
  text: string;
  samples: number;
  /** Samples with a JavaScript frame on the stack. */
  withJavaScript: number;
}

/** What was sampled between two `performance.now()` readings. */
export function sampledBetween(all: Samples, startMs: number, endMs: number): Sampled {
  const counts = new Map<string, number>();
  let samples = 0;
  let withJavaScript = 0;
  all.at.forEach((at, i) => {
    if (at < startMs || at > endMs) return;
    const frames = all.stacks[i]!;
    const key = frames.join(' < ');
    counts.set(key, (counts.get(key) ?? 0) + 1);
    samples++;
    if (frames.some((f) => !NO_JAVASCRIPT.has(f))) withJavaScript++;
  });
  const text = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([stack, n]) => `  ${Math.round((100 * n) / samples)}% ${stack}`)
    .join('\n');
  return { text, samples, withJavaScript };
}
