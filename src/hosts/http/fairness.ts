/**
 * Fair sharing of one server among many users (SPEC 15, "Serving").
 *
 * - One user's calls run one at a time, in arrival order (reads too: a user cannot take several
 *   running slots with parallel reads, and the dispatcher's call lock serialises that user's writes
 *   anyway, across processes).
 * - Different users run in parallel, up to `maxRunning` calls at once; a user's next call then
 *   waits in one FIFO shared by all users. Since a user has at most one call in that FIFO, users
 *   are served in turn (one heavy user cannot push the others back).
 * - A user may have at most `maxQueuedPerUser` calls waiting behind their running one; beyond it
 *   the call is not queued and answers SERVER_BUSY (an envelope the model can act on: wait, retry).
 *
 * Heavy work (SQLite, imports, archives) runs on the worker pool, so a running slot held by a long
 * call costs memory and a worker, not the event loop; the cap bounds memory and open files.
 */

export interface FairnessLimits {
  /** Calls running at once, all users together. */
  maxRunning: number;
  /** Calls one user may have waiting (not counting the one running). */
  maxQueuedPerUser: number;
}

interface UserLine {
  /** Calls of this user admitted and not finished (running or waiting). */
  admitted: number;
  /** Resolves when the user's previous call has finished. */
  tail: Promise<void>;
}

export interface Scheduler {
  /** Runs `fn` in the user's turn and within the global cap; `undefined` if the user's queue is full. */
  run<T>(user: string, fn: () => Promise<T>): Promise<T> | undefined;
  stats(): { running: number; waiting: number; users: number };
}

export function createScheduler(limits: FairnessLimits): Scheduler {
  const users = new Map<string, UserLine>();
  const globalWaiters: (() => void)[] = [];
  let running = 0;

  const acquireSlot = (): Promise<void> => {
    if (running < limits.maxRunning) {
      running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => globalWaiters.push(resolve));
  };
  const releaseSlot = (): void => {
    const next = globalWaiters.shift();
    if (next) next(); // the slot passes straight to the next waiter
    else running--;
  };

  return {
    run<T>(user: string, fn: () => Promise<T>): Promise<T> | undefined {
      let line = users.get(user);
      if (line === undefined) {
        line = { admitted: 0, tail: Promise.resolve() };
        users.set(user, line);
      }
      if (line.admitted > limits.maxQueuedPerUser) return undefined; // one running + maxQueuedPerUser waiting
      line.admitted++;
      const previous = line.tail;
      let done!: () => void;
      line.tail = new Promise<void>((r) => (done = r));
      const own = line;
      return (async () => {
        await previous;
        await acquireSlot();
        try {
          return await fn();
        } finally {
          releaseSlot();
          own.admitted--;
          if (own.admitted === 0 && users.get(user) === own) users.delete(user);
          done();
        }
      })();
    },
    stats: () => ({ running, waiting: globalWaiters.length, users: users.size }),
  };
}

/** The envelope of a call refused because its user has too many waiting (the 200 rule: the model reads it). */
export function serverBusyEnvelope(limits: FairnessLimits): string {
  return JSON.stringify(
    {
      success: false,
      error: {
        code: 'SERVER_BUSY',
        message: `You already have ${limits.maxQueuedPerUser + 1} calls running or waiting on this server; this call was not started and nothing was changed.`,
        details: { max_queued_per_user: limits.maxQueuedPerUser },
        hint: 'Wait for your earlier calls to answer (a few seconds), then make this call again. Send calls one after another rather than many at once.',
      },
    },
    null,
    2,
  );
}
