/**
 * The last resort of a long-running host (`fileshed serve`, `fileshed mcp`): an exception that no
 * code caught (a callback of a watcher, a timer, a stream) would end the process, and with it every
 * user's calls. Every such error is a bug to fix where it happens; this handler only makes sure it
 * costs one log line instead of the server: it logs the error and the process keeps serving.
 */
export function keepServing(host: string, log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): void {
  const report = (kind: string) => (err: unknown) => {
    const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    try {
      log(`fileshed ${host}: ${kind} (kept serving): ${text.split('\n')[0]}`);
    } catch {
      // nowhere to log: keep serving all the same
    }
  };
  process.on('uncaughtException', report('uncaught exception'));
  process.on('unhandledRejection', report('unhandled promise rejection'));
}
