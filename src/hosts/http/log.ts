/**
 * The access log: one JSON line per call (time, user, function, ms, status, success or error
 * code). Arguments, tokens and keys are never passed here, so they cannot be logged.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface AccessEntry {
  user: string;
  fn: string;
  ms: number;
  status: number;
  success?: boolean;
  error?: string;
  transport?: 'http' | 'mcp';
}

export interface Logger {
  access(entry: AccessEntry): void;
  /** Operational messages (start, stop, unexpected errors): stderr. */
  info(text: string): void;
  close(): void;
}

export function createLogger(target: string, base: string): Logger {
  let write: (line: string) => void = () => {};
  let fd: number | undefined;
  if (target === 'stderr') write = (line) => process.stderr.write(line);
  else if (target !== 'off') {
    const file = path.resolve(base, target);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fd = fs.openSync(file, 'a', 0o600);
    const f = fd;
    write = (line) => fs.writeSync(f, line);
  }
  return {
    access(entry) {
      write(`${JSON.stringify({ time: new Date().toISOString(), ...entry, ms: Math.round(entry.ms * 10) / 10 })}\n`);
    },
    info(text) {
      process.stderr.write(`fileshed: ${text}\n`);
    },
    close() {
      if (fd !== undefined) fs.closeSync(fd);
    },
  };
}
