import { it } from 'vitest';
import { parseArgs } from '../../src/core/exec/parse.js';
import { ruleFor } from '../../src/core/exec/rules.js';
import { READWRITE_COMMANDS } from '../../src/core/exec/commands.js';
import { getoptArity, helpOptions, pool, run, usesGetopt, dashDashEnds, permutes, type Arity } from '../security/arity-probe.js';
import { installed } from '../security/exec-harness.js';

function modelArity(cmd: string, opt: string): Arity | 'forbidden' {
  const rule = ruleFor(cmd);
  const p = parseArgs(rule, [opt, 'SENTINEL']);
  const o = p.options[0];
  if (rule.forbid?.includes(opt) || (!opt.startsWith('--') && rule.forbidLetters?.includes(opt[1]!))) return 'forbidden';
  if (o?.value === 'SENTINEL') return 'required';
  const q = parseArgs(rule, [opt.startsWith('--') ? `${opt}=Q` : `${opt}Q`, 'SENTINEL']);
  const o2 = q.options[0];
  if (o2?.valueKind === 'optional' && o2.value === 'Q') return 'optional';
  return 'none';
}

it('dev', async () => {
  const cmds = [...READWRITE_COMMANDS, 'curl', 'wget'].filter(installed);
  const lines: string[] = [];
  await pool(cmds, 3, async (cmd) => {
    if (!(await usesGetopt(cmd))) { lines.push(`# ${cmd}: not getopt`); return; }
    const opts = helpOptions(await run(cmd, ['--help']));
    const res = await pool(opts, 2, async (o) => [o, await getoptArity(cmd, o)] as const);
    for (const [o, real] of res) {
      if (real === undefined) { lines.push(`${cmd} ${o}: unknown to program`); continue; }
      const m = modelArity(cmd, o);
      if (m === 'forbidden') continue;
      if (real === 'exits') continue;
      if (o.startsWith('--') && m !== 'required' && real !== 'required') continue;
      if (m !== real) lines.push(`${cmd} ${o}: real=${real} model=${m}`);
    }
    const dd = await dashDashEnds(cmd);
    if (!dd) lines.push(`${cmd}: -- does not end options`);
    const perm = await permutes(cmd, cmd === 'seq' ? '1' : './f');
    if (!perm) lines.push(`${cmd}: no permute`);
  });
  console.log(lines.sort().join('\n'));
}, 600_000);
