/**
 * The argument policy's model of how each whitelisted program parses its arguments (rules.ts,
 * read by parse.ts) checked against the programs installed here. An option the model gives a
 * value it does not take hides the next argument from the path checks (tar --exclude-vcs /abs);
 * one it takes but the model misses shifts every later argument into the wrong role. So:
 *
 * - getopt programs (coreutils, tar, grep, sed, diff, iconv, wget...): every option their --help
 *   lists is asked of the program itself (glibc getopt's messages for the option alone, with
 *   `=VALUE` and with an attached character): no value, a required value, or an optional one
 *   (attached only); the engine's parse of the same option must agree. Abbreviations too. And
 *   `--` must end the options, and options after an operand must be options, unless the model
 *   says the program stops at its first operand (posix), which the program must confirm.
 * - curl: its --help all marks valued options with <...>.
 * - gawk, mawk, sqlite3, xxd, lz4, zstd: their usage text writes `-F fs`, `-d[file]`, `-word ARG`.
 * - find, unzip, awk's program text, xxd's operands: the grammar claims the model relies on,
 *   each shown on the real program.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/core/services/exec/policy/parse.js';
import { ruleFor } from '../../src/core/services/exec/policy/rules.js';
import { DOWNLOADERS, READWRITE_COMMANDS } from '../../src/core/services/exec/policy/commands.js';
import { dashDashEnds, getoptArity, helpOptions, permutes, pool, run, scratch, usageArities, usesGetopt, type Arity } from './arity-probe.js';
import { installed } from './exec-harness.js';

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const ALL = [...READWRITE_COMMANDS, ...DOWNLOADERS].filter(installed).sort();

/** How the engine parses `opt`: refused outright, or the arity its parse gives it. */
function modelArity(cmd: string, opt: string): Arity | 'forbidden' {
  const rule = ruleFor(cmd);
  const forbidden = rule.forbid?.includes(opt) || (opt.startsWith('--') && opt.length >= 3 && rule.forbid?.some((f) => f.startsWith(opt)));
  if (forbidden || (!rule.wordOptions && !opt.startsWith('--') && opt.length === 2 && rule.forbidLetters?.includes(opt[1]!))) return 'forbidden';
  const first = parseArgs(rule, [opt, 'SENTINEL']).options[0];
  if (first?.value === 'SENTINEL') return 'required';
  const attached = parseArgs(rule, [opt.startsWith('--') || rule.wordOptions ? `${opt}=Q` : `${opt}Q`, 'SENTINEL']);
  const o = attached.options[0];
  return o?.valueKind === 'optional' && o.value === 'Q' && attached.operands.some((x) => x.text === 'SENTINEL') ? 'optional' : 'none';
}

/** Disagreements between the model and what the program says; long options: "no value" and "optional value" are the same to the engine (an attached value is always checked). */
function disagreements(cmd: string, real: Map<string, Arity>): string[] {
  const out: string[] = [];
  for (const [opt, arity] of real) {
    const model = modelArity(cmd, opt);
    if (model === 'forbidden' || model === arity) continue;
    if (opt.startsWith('--') && model !== 'required' && arity !== 'required') continue;
    out.push(`${cmd} ${opt}: the program takes ${arity === 'none' ? 'no value' : `a${arity === 'optional' ? 'n optional (attached)' : ' required'} value`}, the model ${model === 'none' ? 'none' : `a${model === 'optional' ? 'n optional' : ' required'} one`}`);
  }
  return out;
}

describe('getopt programs: every option of --help, asked of the program', async () => {
  const getopt = (await pool(ALL, 4, async (cmd) => ((await usesGetopt(cmd)) ? cmd : undefined))).filter((c): c is string => c !== undefined);

  it('most of the whitelist parses with getopt (the probe sees them)', () => {
    expect(getopt.length).toBeGreaterThan(60);
  });

  it.each(getopt)('%s', async (cmd) => {
    const opts = helpOptions(await run(cmd, [cmd.includes('xz') ? '--long-help' : '--help'], 1e6)).filter((o) => o.startsWith('--') || o.length === 2);
    expect(opts.length, `${cmd} --help lists options`).toBeGreaterThan(0);
    const probed = await pool(opts, 4, async (o) => [o, await getoptArity(cmd, o)] as const);
    const real = new Map<string, Arity>();
    for (const [o, a] of probed) if (a !== undefined && a !== 'exits') real.set(o, a);
    const problems = disagreements(cmd, real);
    // Abbreviations: a prefix naming one option (getopt_long accepts it) must behave like the option.
    const longs = [...real.keys()].filter((o) => o.startsWith('--'));
    for (const full of longs) {
      for (let n = 3; n < full.length; n++) {
        const prefix = full.slice(0, n);
        const hits = longs.filter((o) => o.startsWith(prefix));
        if (hits.length !== 1 || longs.includes(prefix)) continue;
        const m = modelArity(cmd, prefix);
        if (m !== 'forbidden' && (m === 'required') !== (real.get(full) === 'required')) problems.push(`${cmd} ${prefix} (abbreviates ${full}): the model reads it as ${m}`);
      }
    }
    const rule = ruleFor(cmd);
    if (!(await dashDashEnds(cmd))) problems.push(`${cmd}: -- does not end the options`);
    else if (parseArgs(rule, ['--', '-x', 'f']).operands.length !== 2) problems.push(`${cmd}: the model keeps parsing options after --`);
    const permuting = await permutes(cmd, cmd === 'tar' ? '-tf./f' : cmd === 'seq' ? '1' : 'f');
    // tar's operand probe is an option with a value, so the question is the same: does an option after an operand count?
    if (cmd !== 'tar' && permuting === (rule.posix === true)) problems.push(`${cmd}: options ${permuting ? 'may follow operands' : 'end at the first operand'}, the model says the opposite`);
    if (problems.length) console.log(problems.join("\n"));
    expect(problems).toEqual([]);
  });
});

describe('programs with their own parsers: usage text', () => {
  const USAGE: [string, string[], boolean][] = [
    ['gawk', ['--help'], false],
    ['mawk', ['-W', 'usage'], false],
    ['sqlite3', ['-help'], true],
    ['lz4', ['-H'], false],
    ['zstd', ['-H'], false],
  ];
  it.each(USAGE.filter(([cmd]) => installed(cmd)))('%s', async (cmd, args, words) => {
    const real = usageArities(await run(cmd, args, 1e6), words);
    expect(real.size).toBeGreaterThan(3);
    // sqlite3 accepts --word for -word; its usage text only shows -word.
    expect(disagreements(cmd, new Map([...real].filter(([o]) => !(cmd === 'sqlite3' && o.startsWith('--')))))).toEqual([]);
  });

  it.runIf(installed('curl'))('curl: --help all marks every valued option with <...>', async () => {
    const real = new Map<string, Arity>();
    for (const line of (await run('curl', ['--help', 'all'], 1e6)).split('\n')) {
      const m = /^\s*(?:(-\w), )?(--[\w.-]+)( <[^>]+>)?/.exec(line);
      if (!m) continue;
      const arity: Arity = m[3] ? 'required' : 'none';
      if (['--help', '--proxy', '--preproxy'].includes(m[2]!)) continue; // --help's category is optional; the proxies' values are written without <...>
      real.set(m[2]!, arity);
      if (m[1]) real.set(m[1], arity);
    }
    expect(real.size).toBeGreaterThan(200);
    expect(disagreements('curl', real)).toEqual([]);
    expect(modelArity('curl', '-x')).toBe('required');
  });

  it.runIf(installed('find'))('find: every test and action of --help takes the value its help shows (operators aside)', async () => {
    const real = usageArities(await run('find', ['--help'], 1e6), true);
    for (const op of ['-not', '-a', '-o', '-or', '-and']) real.delete(op);
    real.set('-D', 'required'); // written "[-D debugopts]"
    expect(real.size).toBeGreaterThan(50);
    expect(disagreements('find', real)).toEqual([]);
  });

  it.runIf(installed('xxd'))('xxd: its valued letters, one option per argument', async () => {
    const real = usageArities(await run('xxd', ['-h']), true);
    real.set('-r', 'none'); // "-r -s off" is two options on one line
    expect(disagreements('xxd', real)).toEqual([]);
    expect(parseArgs(ruleFor('xxd'), ['-ps', 'in', 'out']).operands.map((o) => o.text)).toEqual(['in', 'out']);
  });
});

describe('grammar claims the model makes, shown on the real programs', () => {
  const write = (name: string, content: string) => fs.writeFileSync(path.join(scratch, name), content);

  it.runIf(installed('gawk'))('awk: options end at the program text (`-F` after it is a file to read)', async () => {
    write('-F', 'dash-F-file\n');
    expect(await run('gawk', ['{print}', '-F', 'f'])).toContain('dash-F-file');
    expect(await run('mawk', ['{print}', '-F', 'f'])).toContain('dash-F-file');
    const p = parseArgs(ruleFor('gawk'), ['{print}', '-F', '/abs']);
    expect(p.operands.map((o) => o.text)).toEqual(['{print}', '-F', '/abs']);
  });

  it.runIf(installed('xxd'))('xxd: options end at the first operand (a later `-c` is its output file)', async () => {
    write('in', 'hello\n');
    await run('xxd', ['in', '-c']);
    expect(fs.existsSync(path.join(scratch, '-c'))).toBe(true);
    expect(parseArgs(ruleFor('xxd'), ['in', '-c', '/abs']).operands.map((o) => o.text)).toEqual(['in', '-c', '/abs']);
  });

  it.runIf(installed('find'))('find: `--` does not end its expression (-printf after it still runs)', async () => {
    expect(await run('find', ['--', '.', '-maxdepth', '0', '-printf', 'PRINTED'])).toContain('PRINTED');
    const p = parseArgs(ruleFor('find'), ['--', '.', '-exec', 'id', ';']);
    expect(p.options.map((o) => o.name)).toContain('-exec');
  });

  it.runIf(installed('jq'))('jq: `--` ends its options; options may follow the filter', async () => {
    write('--zz-probe', '"from-file"\n');
    expect(await run('jq', ['.', '--', '--zz-probe'])).toContain('from-file');
    expect(await run('jq', ['.', 'f', '--zz-probe'])).toMatch(/Unknown option/);
  });

  it.runIf(installed('unzip') && installed('zip'))('unzip: `--` negates, options end at the archive, then only -x and -d mean something', async () => {
    write('m.txt', 'member\n');
    execFileSync('zip', ['-q', 'a.zip', 'm.txt'], { cwd: scratch });
    fs.rmSync(path.join(scratch, 'm.txt'));
    // `unzip -- a.zip -d DIR` extracts into DIR: `--` did not end the options.
    await run('unzip', ['--', 'a.zip', '-dx1']);
    expect(fs.readFileSync(path.join(scratch, 'x1', 'm.txt'), 'utf8')).toBe('member\n');
    const p = parseArgs(ruleFor('unzip'), ['--', 'a.zip', '-d/abs']);
    expect(p.options.find((o) => o.name === '-d')?.value).toBe('/abs');
    // `unzip a.zip -x -l` extracts: -l after the archive is a member name to exclude, not "list".
    await run('unzip', ['a.zip', '-x', '-l', '-dx2']);
    expect(fs.existsSync(path.join(scratch, 'x2', 'm.txt'))).toBe(true);
    expect(ruleFor('unzip').readonlyCheck?.(parseArgs(ruleFor('unzip'), ['a.zip', '-x', '-l']))).toMatch(/extracts/);
    expect(ruleFor('unzip').readonlyCheck?.(parseArgs(ruleFor('unzip'), ['-l', 'a.zip']))).toBeUndefined();
    // A second dash negates the next letter: `-l--l` lists nothing and extracts.
    await run('unzip', ['-l--l', 'a.zip', '-dx3']);
    expect(fs.existsSync(path.join(scratch, 'x3', 'm.txt'))).toBe(true);
    expect(ruleFor('unzip').readonlyCheck?.(parseArgs(ruleFor('unzip'), ['-l--l', 'a.zip']))).toMatch(/negated/);
  });

  it.runIf(installed('tar'))('tar: a cluster with a value letter takes the rest as the value (-xfevil.tar reads evil.tar)', async () => {
    expect(await run('tar', ['-xfevil.tar'])).toMatch(/evil\.tar: Cannot open/);
    const p = parseArgs(ruleFor('tar'), ['-xfevil.tar']);
    expect(p.options.find((o) => o.name === '-f')?.value).toBe('evil.tar');
    expect(ruleFor('tar').readonlyCheck?.(p)).toMatch(/extract/);
  });

  it.runIf(installed('iconv'))('iconv: a charset name holding a slash is opened as a file (so the model checks it as one)', async () => {
    write('charmap', 'not a charmap\n');
    expect(await run('iconv', ['-f', './charmap', '-t', 'utf-8', 'f'])).toMatch(/charmap|syntax error|conversion/);
    expect(parseArgs(ruleFor('iconv'), ['-f', '/x']).options[0]?.valueKind).toBe('text');
  });
});
