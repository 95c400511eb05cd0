/**
 * `fileshed doctor`: what the command sandbox can do on this machine, told by the same probes the
 * server runs (a real command in each sandbox, and for Landlock a read outside the zone that must
 * be refused), so its answer is the server's: bubblewrap works or why not, the Landlock ABI or why
 * not, the mode the default setting (sandbox=auto) picks, the perl the launcher runs on, and which
 * whitelisted command-line tools are installed. Exit 0 when commands can run under a kernel sandbox.
 */
import os from 'node:os';
import { hostApi, version } from '../../index.js';

interface Availability {
  available: string[];
  missing: Record<string, string>;
}

export async function doctor(out: NodeJS.WritableStream): Promise<number> {
  const check = await hostApi.sandboxCheck();
  const commands = JSON.parse(await hostApi.call('shed_allowed_commands', {}, { storage_base_path: os.tmpdir() })) as { data?: { storage?: Availability } };
  const tools = commands.data?.storage ?? { available: [], missing: {} };
  const missing = Object.keys(tools.missing);
  const packages = [...new Set(Object.values(tools.missing))].sort();
  const kernelSandbox = check.auto.active === 'bwrap' || check.auto.active === 'landlock';
  const line = (label: string, text: string) => out.write(`${label.padEnd(14)}${text}\n`);
  out.write(`Fileshed ${version}, Node ${process.version}, Linux ${os.release()} (${process.arch})\n\n`);
  line('bubblewrap', check.bwrap.ok ? 'works' : `does not work: ${check.bwrap.reason}`);
  line('Landlock', check.landlock.ok ? `works (ABI ${check.landlock.abi})` : `does not work: ${check.landlock.reason}`);
  line('sandbox=auto', kernelSandbox ? `runs commands under ${check.auto.active}` : 'refuses commands (SANDBOX_UNAVAILABLE): no kernel sandbox works here; sandbox="validated" would run them under the argument policy alone (weaker)');
  line('separation', `identity_separation=auto gives ${check.separation.separation}: ${check.separation.reason}`);
  line('perl', check.perl ?? 'not installed (Debian package perl-base): the command launcher and the Landlock sandbox need it');
  line('tools', `${tools.available.length} of ${tools.available.length + missing.length} allowed commands installed${missing.length ? `; missing: ${missing.join(' ')}` : ''}`);
  if (packages.length > 0) line('', `to add them: apt-get install ${packages.join(' ')}`);
  return kernelSandbox ? 0 : 1;
}
