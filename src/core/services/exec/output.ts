/**
 * What the model reads of a command's output: disk paths replaced by the sandbox view (/zone),
 * and each stream cut at max_output characters with a notice saying how much was cut and how to
 * get the rest.
 */
import type { Zone } from '../../base/zones/zones.js';
import { SANDBOX_HOME, SANDBOX_TMP, SANDBOX_ZONE } from './launcher/bwrap.js';
import type { Captured, RunResult } from './launcher/run-types.js';

/** Disk paths as bubblewrap shows them: the zone as /zone, the call's own folders (a script's) as /tmp/home and /tmp. */
export function scrubOutput(text: string, zone: Zone, callFolders?: RunResult['callFolders']): string {
  const shown = text.split(zone.root).join(SANDBOX_ZONE);
  return callFolders ? shown.split(callFolders.home).join(SANDBOX_HOME).split(callFolders.tmp).join(SANDBOX_TMP) : shown;
}

/** `keptBytes`/`totalBytes`: what was captured of the stream, and what the command wrote in all. */
export function truncateText(text: string, keptBytes: number, totalBytes: number, limit: number, stream: 'stdout' | 'stderr'): { text: string; truncated: boolean } {
  if (text.length <= limit && totalBytes <= keptBytes) return { text, truncated: false };
  const shown = text.slice(0, limit);
  const notice =
    `\n\n[... ${stream} TRUNCATED: showing the first ${shown.length} characters of about ${totalBytes} bytes. ` +
    `To get everything, save it with ${stream === 'stdout' ? 'stdout_file' : 'stderr_file'}="out.txt" and read parts with shed_read(start_line=...), ` +
    'or narrow the output (head, tail, grep, wc -l). ...]';
  return { text: shown + notice, truncated: true };
}

/** A captured stream as the model reads it: disk paths scrubbed, cut at `limit` characters. */
export function capturedText(c: Captured, zone: Zone, limit: number, stream: 'stdout' | 'stderr', callFolders?: RunResult['callFolders']): { text: string; truncated: boolean } {
  return truncateText(scrubOutput(c.bytes.toString('utf8'), zone, callFolders), c.bytes.length, c.total, limit, stream);
}
