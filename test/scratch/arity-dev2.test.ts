import { it } from 'vitest';
import { parseArgs } from '../../src/core/exec/parse.js';
import { ruleFor } from '../../src/core/exec/rules.js';
import { run, usageArities, type Arity } from '../security/arity-probe.js';

function modelArity(cmd: string, opt: string): Arity | 'forbidden' {
  const rule = ruleFor(cmd);
  if (rule.forbid?.includes(opt) || (!rule.wordOptions && !opt.startsWith('--') && rule.forbidLetters?.includes(opt[1]!))) return 'forbidden';
  const p = parseArgs(rule, [opt, 'SENTINEL']);
  const o = p.options[0];
  if (o?.value === 'SENTINEL') return 'required';
  const q = parseArgs(rule, [opt.startsWith('--') ? `${opt}=Q` : `${opt}Q`, 'SENTINEL']);
  const o2 = q.options[0];
  if (o2?.valueKind === 'optional' && o2.value === 'Q') return 'optional';
  return 'none';
}
it('dev2', async () => {
  const specs: [string, string[], boolean][] = [['gawk', ['--help'], false], ['mawk', ['-W', 'usage'], false], ['sqlite3', ['-help'], true], ['find', ['--help'], true], ['xxd', ['-h'], true], ['jq', ['--help'], false], ['zip', ['-h2'], false], ['zstd', ['-H'], false], ['lz4', ['-H'], false], ['less', ['--help'], false], ['bzip2', ['--help'], false], ['curl', ['--help', 'all'], false]];
  for (const [cmd, args, words] of specs) {
    let text = await run(cmd, args);
    if (cmd === 'curl') text = text.replace(/ <[^>]+>/g, '=X');
    const m = usageArities(text, words);
    const diffs: string[] = [];
    for (const [o, a] of m) { const mm = modelArity(cmd, o); if (mm !== 'forbidden' && mm !== a && !(o.startsWith('--') && mm !== 'required' && a !== 'required')) diffs.push(`${o}:${a}/${mm}`); }
    console.log(cmd, m.size, diffs.join(' '));
  }
}, 60000);
