/**
 * In-process serialisation of modifying calls per quota scope, so a quota check and the write it
 * allows cannot interleave with another call of the same user (and later, one commit at a time).
 */
const tails = new Map<string, Promise<unknown>>();

export async function serialize<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(fn);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
