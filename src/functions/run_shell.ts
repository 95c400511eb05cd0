import { z } from 'zod';
import { ZONE_NAMES } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, zoneParam } from '../registry/params.js';
import { requireScriptText } from './code-limits.js';
import { runCode } from './code-run.js';

export const shedRunShell = defineFunction({
  name: 'shed_run_shell',
  category: 'code',
  enabledBy: 'allow_shell',
  summary: 'Run a POSIX sh script (pipes, >, loops) with the whitelisted commands.',
  description:
    'Run a POSIX sh script in the zone (working folder = zone root): pipes, > and >>, &&, loops, variables, $(...) work, e.g. "ls *.csv | wc -l". Only the whitelisted commands run (shed_allowed_commands). Returns stdout, stderr, returncode and data.files_changed.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    script: z.string().min(1).describe('The script, e.g. "grep -c ERROR *.log | sort -t: -k2 -n > counts.txt"'),
    timeout: z.number().int().optional().describe('Seconds (the admin caps it)'),
    max_output: z.number().int().optional().describe('Characters kept; 0 = admin max'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  mutates: true,
  example: { zone: 'storage', script: 'ls *.csv | wc -l' },
  paramHints: { script: 'Send the whole script as one string; use \\n or ; between commands.' },
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, args.group);
    requireScriptText('script', args.script);
    const first = args.script.split('\n').find((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))?.trim() ?? '';
    return runCode(ctx, zone, {
      script: { kind: 'shell', code: args.script },
      label: 'The shell script',
      summary: `Run shell: ${first}`.slice(0, 200),
      timeout: args.timeout,
      max_output: args.max_output,
      allow_zone_in_path: args.allow_zone_in_path,
    });
  },
});
