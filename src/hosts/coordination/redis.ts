/**
 * Coordination across hosts through Redis (`--coordination redis://host:6379`): the leases behind
 * every call lock, database lock and repository lock of the storage base (core lease.ts).
 *
 * - Acquire: SET lock token NX PX ttl, and in the same script INCR of the lock's fencing counter
 *   (strictly increasing across all holders, recorded in Redis and in the scope's change stamp)
 *   and a "held" marker naming the holder. A marker left by a previous holder means it never
 *   released the lock (it died): the new holder recovers what it protected.
 * - Renew: every ttl/4 while held (and before each commit), only if the lock still holds our
 *   token. The holder counts its lease as valid until (time the renewal was sent) + ttl - margin,
 *   so it stops writing before any other host can take the lock, even when Redis is unreachable.
 * - Release: delete lock and marker, only if they still hold our token.
 *
 * A killed holder's lease ends at most `ttl` after its last renewal (6 s by default), so a crashed
 * instance blocks its users for at most ttl plus one waiting poll.
 */
import crypto from 'node:crypto';
import type { Coordinator, Lease } from '../../index.js';
import { RedisError, type Reply } from '../../core/formats/resp.js';
import { redact, RespClient } from './resp.js';

const ACQUIRE = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = redis.call('INCR', KEYS[2])
  local prev = redis.call('GET', KEYS[3])
  redis.call('SET', KEYS[3], ARGV[1])
  if prev then return {fence, 1} end
  return {fence, 0}
end
return 0`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1`;

export interface RedisCoordinationOptions {
  /** Lease length (ms); renewed every third of it. */
  ttlMs?: number;
  /** Key prefix (several deployments may share one Redis with different prefixes). */
  prefix?: string;
  /** Deadline of one Redis command (ms). */
  timeoutMs?: number;
}

/**
 * Default lease: a dead holder's locks end within 6 s of its last renewal (4.5 to 6 s after its
 * death), so with the next call a crashed instance blocks its users well under 10 s. The holder
 * renews every 1.5 s and counts its lease valid for 5 s after each renewal, so its event loop may
 * stall 3.5 s (slow storage inside a call) before it must stop writing.
 */
export const DEFAULT_TTL_MS = 6_000;

export class RedisCoordinator implements Coordinator {
  readonly description: string;
  private readonly client: RespClient;
  private readonly ttlMs: number;
  private readonly prefix: string;
  /** Time a holder keeps in hand: its lease counts as over this long before Redis expires it. */
  private readonly marginMs: number;

  constructor(url: string, opts: RedisCoordinationOptions = {}) {
    const u = new URL(url);
    this.prefix = opts.prefix ?? u.searchParams.get('prefix') ?? 'fileshed';
    this.ttlMs = opts.ttlMs ?? DEFAULT_TTL_MS;
    this.marginMs = Math.min(1000, Math.floor(this.ttlMs / 4));
    u.search = '';
    this.client = new RespClient(u.toString(), { timeoutMs: opts.timeoutMs ?? 2000 });
    this.description = `${redact(u.toString())} (prefix ${this.prefix}, lease ${this.ttlMs / 1000} s)`;
  }

  async tryAcquire(name: string): Promise<Lease | undefined> {
    const keys = { lock: `${this.prefix}:lock:${name}`, fence: `${this.prefix}:fence:${name}`, held: `${this.prefix}:held:${name}` };
    const token = crypto.randomBytes(12).toString('hex');
    const sent = Date.now();
    const reply = await this.client.call(['EVAL', ACQUIRE, 3, keys.lock, keys.fence, keys.held, token, this.ttlMs]);
    if (!Array.isArray(reply)) return undefined;
    return new RedisLease(this.client, keys, token, Number(reply[0]), reply[1] === 1, sent + this.ttlMs - this.marginMs, this.ttlMs, this.marginMs);
  }

  /** Round trip to Redis (readiness), in ms; throws when it does not answer. */
  async ping(): Promise<number> {
    const started = performance.now();
    const reply = await this.client.call(['PING']);
    if (reply !== 'PONG') throw new Error(`unexpected answer to PING: ${String(reply)}`);
    return performance.now() - started;
  }

  /** The current fencing token of a lock (tests and diagnostics). */
  async fenceOf(name: string): Promise<number> {
    return Number((await this.client.call(['GET', `${this.prefix}:fence:${name}`])) ?? 0);
  }

  close(): void {
    this.client.close();
  }
}

class RedisLease implements Lease {
  private lost = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly client: RespClient,
    private readonly keys: { lock: string; fence: string; held: string },
    private readonly token: string,
    readonly fence: number,
    readonly tookOver: boolean,
    private validUntil: number,
    private readonly ttlMs: number,
    private readonly marginMs: number,
  ) {
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(ttlMs / 4)));
    this.timer.unref();
  }

  /** Extends the lease if Redis still holds our token; true when it did. */
  private async renew(): Promise<boolean> {
    if (this.lost) return false;
    const sent = Date.now();
    let reply: Reply;
    try {
      reply = await this.client.send(['EVAL', RENEW, 1, this.keys.lock, this.token, this.ttlMs]);
    } catch {
      return false; // unreachable: held() turns false when validUntil passes
    }
    if (reply === 1) {
      this.validUntil = Math.max(this.validUntil, sent + this.ttlMs - this.marginMs);
      return true;
    }
    if (!(reply instanceof RedisError)) this.lost = true; // expired, and maybe another holder has it now
    return false;
  }

  held(): boolean {
    return !this.lost && Date.now() < this.validUntil;
  }

  /**
   * Renewing is the check: it succeeds only while Redis still holds our token, in which case no
   * one else took the lock, even if this holder's event loop stalled past its local validity.
   */
  async check(): Promise<boolean> {
    return this.renew();
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    this.lost = true;
    await this.client.call(['EVAL', RELEASE, 2, this.keys.lock, this.keys.held, this.token]);
  }
}
