/**
 * Whether this process can give a command another kernel identity: root, or CAP_SETUID and
 * CAP_SETGID in its effective set (a container run as root with cap_drop ALL and those added back),
 * as /proc/self/status says. The launcher (launcher/confine.pl, `become`) switches in the command's
 * own process, which inherits these from the server through the fork server.
 */
import { readBytes } from '../../base/fs/read.js';

const CAP_SETGID = 6n;
const CAP_SETUID = 7n;

let cached: boolean | undefined;

/** True when commands can run as another uid and gid. */
export function canSwitchIdentity(status = '/proc/self/status'): boolean {
  if (status === '/proc/self/status' && cached !== undefined) return cached;
  let answer = false;
  try {
    const text = readBytes(status).toString('utf8');
    const eff = /^CapEff:\s*([0-9a-f]+)$/m.exec(text)?.[1];
    if (eff !== undefined) {
      const caps = BigInt(`0x${eff}`);
      answer = ((caps >> CAP_SETUID) & 1n) === 1n && ((caps >> CAP_SETGID) & 1n) === 1n;
    }
  } catch {
    answer = false;
  }
  if (status === '/proc/self/status') cached = answer;
  return answer;
}
