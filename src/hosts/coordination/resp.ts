/**
 * A minimal Redis client (RESP2 over one TCP or TLS connection) for the coordination leases.
 *
 * Why not a full client library: leases need a handful of commands (EVAL, GET, PING) and, above
 * all, predictable failure: every command has a deadline, a command is never re-sent after a
 * reconnect (a lease acquisition replayed seconds later would take a lock its caller has given up
 * on), and nothing is queued while disconnected. General clients retry and queue offline by
 * default; here a failed command fails its call and the lease logic decides. Replies come back in
 * order on one connection, so a command that times out poisons the connection: it is closed and
 * the next command opens a new one (with AUTH and SELECT again).
 *
 * URL: redis://[user:password@]host[:port][/db], or rediss:// for TLS.
 */
import net from 'node:net';
import tls from 'node:tls';
import { encodeCommand, parseReply, RedisError, type Reply } from '../../core/formats/resp.js';

interface Pending {
  resolve(reply: Reply): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export interface RespOptions {
  /** Deadline of one command, connection included (ms). */
  timeoutMs?: number;
}

export class RespClient {
  private socket: net.Socket | undefined;
  private ready: Promise<void> | undefined;
  private readonly pending: Pending[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private closed = false;
  private readonly timeoutMs: number;
  private readonly target: { host: string; port: number; tls: boolean; user?: string; password?: string; db: number };

  constructor(url: string, opts: RespOptions = {}) {
    this.target = parseRedisUrl(url);
    this.timeoutMs = opts.timeoutMs ?? 2000;
  }

  /** Sends one command; resolves with its reply (an error reply resolves as a RedisError value). */
  async send(args: readonly (string | number)[]): Promise<Reply> {
    await this.connect();
    return this.write(args);
  }

  /** Like send, but an error reply is thrown. */
  async call(args: readonly (string | number)[]): Promise<Reply> {
    const reply = await this.send(args);
    if (reply instanceof RedisError) throw reply;
    return reply;
  }

  /** Closes the connection for good: later commands fail at once. */
  close(): void {
    this.closed = true;
    this.fail(new Error('closed'));
  }

  private connect(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the Redis client is closed'));
    if (this.ready !== undefined) return this.ready;
    const { host, port } = this.target;
    const socket = this.target.tls ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host }) : net.connect({ host, port });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 5000);
    this.socket = socket;
    this.buffer = Buffer.alloc(0);
    // A dropped connection's late events ('close' comes after destroy) must not touch its successor.
    const current = () => this.socket === socket;
    socket.on('data', (chunk: Buffer) => current() && this.onData(chunk));
    socket.on('error', (err) => current() && this.fail(err));
    socket.on('close', () => current() && this.fail(new Error('connection closed')));
    this.ready = new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err === undefined) resolve();
        else reject(err);
      };
      const timer = deadline(this.timeoutMs, () => {
        if (settled) return;
        settle(new Error(`no connection to ${host}:${port} within ${this.timeoutMs} ms`));
        if (current()) this.fail(new Error('connect timeout'));
      });
      socket.once(this.target.tls ? 'secureConnect' : 'connect', () => settle());
      socket.once('error', (err) => settle(err));
      socket.once('close', () => settle(new Error('connection closed before it was ready')));
    }).then(async () => {
      if (this.target.password !== undefined) {
        const auth = await this.write(this.target.user !== undefined ? ['AUTH', this.target.user, this.target.password] : ['AUTH', this.target.password]);
        if (auth instanceof RedisError) throw new Error(`authentication refused: ${auth.message}`);
      }
      if (this.target.db !== 0) {
        const sel = await this.write(['SELECT', this.target.db]);
        if (sel instanceof RedisError) throw new Error(`SELECT ${this.target.db} refused: ${sel.message}`);
      }
    });
    this.ready.catch(() => current() && this.fail(new Error('connection failed')));
    return this.ready;
  }

  private write(args: readonly (string | number)[]): Promise<Reply> {
    const socket = this.socket;
    if (socket === undefined || socket.destroyed) return Promise.reject(new Error('not connected'));
    const command = encodeCommand(args);
    return new Promise<Reply>((resolve, reject) => {
      const entry: Pending = {
        resolve,
        reject,
        timer: deadline(this.timeoutMs, () => {
          if (this.pending.includes(entry)) this.fail(new Error(`Redis did not answer within ${this.timeoutMs} ms`));
        }),
      };
      this.pending.push(entry);
      socket.write(command);
    });
  }

  /** Drops the connection and fails every waiting command (their replies can no longer be matched). */
  private fail(err: Error): void {
    const socket = this.socket;
    this.socket = undefined;
    this.ready = undefined;
    socket?.destroy();
    for (const p of this.pending.splice(0)) {
      clearTimeout(p.timer);
      p.reject(err);
    }
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      let parsed: [Reply, number] | undefined;
      try {
        parsed = parseReply(this.buffer, 0);
      } catch (err) {
        this.fail(err as Error);
        return;
      }
      if (parsed === undefined) return; // incomplete: wait for more bytes
      const [reply, end] = parsed;
      this.buffer = this.buffer.subarray(end);
      const p = this.pending.shift();
      if (p === undefined) {
        this.fail(new Error('unexpected reply'));
        return;
      }
      clearTimeout(p.timer);
      p.resolve(reply);
    }
  }
}

/**
 * A deadline an event-loop stall cannot fake. After the loop was blocked (a synchronous flush on
 * slow storage, a long parse), an expired timer runs before the loop reads the sockets, while the
 * reply may have been waiting there since long before the deadline. `expired` therefore runs one
 * turn later (setImmediate comes after the loop's read of ready sockets): what arrived is read
 * first, and `expired` checks whether it is still waiting.
 */
function deadline(ms: number, expired: () => void): NodeJS.Timeout {
  const timer = setTimeout(() => setImmediate(expired), ms);
  timer.unref();
  return timer;
}

export function parseRedisUrl(url: string): { host: string; port: number; tls: boolean; user?: string; password?: string; db: number } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`the coordination URL must look like redis://host:6379, got '${redact(url)}'`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error(`the coordination URL must start with redis:// or rediss://, got '${u.protocol}'`);
  const db = u.pathname && u.pathname !== '/' ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new Error(`the database number in the coordination URL must be a whole number, got '${u.pathname.slice(1)}'`);
  const user = u.username ? decodeURIComponent(u.username) : undefined;
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    tls: u.protocol === 'rediss:',
    ...(password !== undefined ? { password, ...(user !== undefined && user !== '' ? { user } : {}) } : {}),
    db,
  };
}

/** The URL without its credentials (for logs, /healthz and errors). */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}
