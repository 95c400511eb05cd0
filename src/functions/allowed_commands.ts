import { BLACKLIST, DOWNLOADERS, packageFor, READONLY_COMMANDS, READWRITE_COMMANDS } from '../core/services/exec/policy/commands.js';
import { RULES } from '../core/services/exec/policy/rules.js';
import { sandboxReport } from '../core/services/exec/launcher/sandbox.js';
import { findProgram } from '../core/services/exec/launcher/system.js';
import { defineFunction } from '../registry/define.js';

function availability(commands: Iterable<string>): { available: string[]; missing: Record<string, string> } {
  const available: string[] = [];
  const missing: Record<string, string> = {};
  for (const cmd of [...commands].sort()) {
    if (findProgram(cmd) !== undefined) available.push(cmd);
    else missing[cmd] = packageFor(cmd);
  }
  return { available, missing };
}

function sandboxOnlyCommands(): Record<string, string> {
  const out: Record<string, string> = { git: "a repository's own configuration and hooks can run programs" };
  for (const [cmd, rule] of Object.entries(RULES)) if (rule.sandboxOnly) out[cmd] = rule.sandboxOnly;
  return out;
}

export const shedAllowedCommands = defineFunction({
  name: 'shed_allowed_commands',
  category: 'info',
  summary: 'Commands shed_exec may run per zone, network rules, sandbox.',
  description: 'Programs shed_exec can run in each zone, the network mode and the sandbox.',
  params: {},
  example: {},
  needsUser: false,
  async handler(_args, ctx) {
    const network = ctx.valves.network_mode;
    const readonly = availability(READONLY_COMMANDS);
    const readwrite = availability(READWRITE_COMMANDS);
    const sandbox = await sandboxReport(ctx.valves.sandbox, ctx.host.allowsUnconfined !== false);
    const installed = (cmd: string) => findProgram(cmd) !== undefined;
    const data = {
      uploads: readonly,
      storage: readwrite,
      documents: { ...readwrite, note: 'git log/show/diff/status/restore are built in here (no git binary needed).' },
      network: {
        mode: network,
        curl: { installed: installed('curl'), enabled: network !== 'disabled', get_only: network === 'safe' },
        wget: { installed: installed('wget'), enabled: network !== 'disabled', get_only: network === 'safe' },
        git_clone_fetch_pull: network !== 'disabled',
        git_push: network === 'all',
        media_urls: network !== 'disabled',
        downloaders: [...DOWNLOADERS],
      },
      sandbox: {
        ...sandbox,
        // Commands whose inputs or configuration can reach beyond what argument checks see: they run only under a kernel sandbox.
        sandbox_only: { usable_now: sandbox.active === 'bwrap' || sandbox.active === 'landlock', commands: sandboxOnlyCommands() },
      },
      forbidden: [...BLACKLIST].sort(),
      summary: {
        whitelist: READWRITE_COMMANDS.size,
        available: readwrite.available.length,
        missing: Object.keys(readwrite.missing).length,
      },
    };
    return {
      data,
      message: `${readwrite.available.length} of ${READWRITE_COMMANDS.size} allowed commands are installed; sandbox: ${sandbox.active}${sandbox.landlock_abi !== null ? ` (Landlock ABI ${sandbox.landlock_abi})` : ''}; network: ${network}.`,
    };
  },
});
