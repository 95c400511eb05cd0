/**
 * The valves a host runs calls with: defaults < the config file's `valves` < --valve flags, with
 * storage_base_path always the host's base. The config file is re-read when it changes (the admin
 * page saves it), so a saved valve takes effect at the next call without a restart.
 */
import fs from 'node:fs';
import { readConfigFile } from './http/config-file.js';

export function valvesSource(configFile: string, base: string, flagValves: Record<string, unknown>, extra: Record<string, unknown> = {}): () => Record<string, unknown> {
  let stamp = '';
  let current: Record<string, unknown> = {};
  return () => {
    let now = 'missing';
    try {
      const st = fs.statSync(configFile);
      now = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      // no config file: defaults and flags only
    }
    if (now !== stamp) {
      let fileValves: Record<string, unknown> = {};
      try {
        fileValves = now === 'missing' ? {} : (readConfigFile(configFile).valves ?? {});
      } catch {
        fileValves = current; // a half-edited file keeps the last good valves
      }
      current = { ...extra, ...fileValves, ...flagValves, storage_base_path: base };
      stamp = now;
    }
    return current;
  };
}
