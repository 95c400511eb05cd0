/**
 * The Redis protocol (RESP2) as a format: a command encoded, a reply parsed from a buffer. The
 * client that speaks it over a connection is hosts/coordination/resp.ts.
 */

export type Reply = string | number | null | Reply[] | RedisError;

/** An error reply (-ERR ...): returned to the caller of that command, the connection stays usable. */
export class RedisError extends Error {}

/** A command as RESP2 bytes: an array of bulk strings. */
export function encodeCommand(args: readonly (string | number)[]): string {
  const parts = [`*${args.length}\r\n`];
  for (const a of args) {
    const s = String(a);
    parts.push(`$${Buffer.byteLength(s)}\r\n${s}\r\n`);
  }
  return parts.join('');
}

/** One RESP2 value starting at `at`: [value, end offset], or undefined when incomplete. */
export function parseReply(buf: Buffer, at: number): [Reply, number] | undefined {
  if (at >= buf.length) return undefined;
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[at]!);
  const line = buf.toString('utf8', at + 1, eol);
  const next = eol + 2;
  switch (type) {
    case '+':
      return [line, next];
    case '-':
      return [new RedisError(line), next];
    case ':':
      return [Number(line), next];
    case '$': {
      const len = Number(line);
      if (len < 0) return [null, next];
      if (buf.length < next + len + 2) return undefined;
      return [buf.toString('utf8', next, next + len), next + len + 2];
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return [null, next];
      const items: Reply[] = [];
      let pos = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, pos);
        if (item === undefined) return undefined;
        items.push(item[0]);
        pos = item[1];
      }
      return [items, pos];
    }
    default:
      throw new Error(`not a Redis reply (type byte ${JSON.stringify(type)})`);
  }
}
