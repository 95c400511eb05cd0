import { z } from 'zod';
import { shedError, showValue } from '../core/base/errors.js';
import { diskRel } from '../core/base/files/entries.js';
import { locate, requireFile } from '../core/base/files/located.js';
import { ZONE_NAMES } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, zoneParam } from '../registry/params.js';
import { requireScriptText } from './code-limits.js';
import { runCode } from './code-run.js';

export const shedRunPython = defineFunction({
  name: 'shed_run_python',
  category: 'code',
  enabledBy: 'allow_python',
  summary: 'Run Python code (pandas, matplotlib...) on the files of a zone.',
  description:
    'Run Python 3 code in the zone: the working folder is the zone root, so open("data.csv"), pd.read_csv("data.csv"), plt.savefig("chart.png") use zone paths. print() what you need. No network unless the admin allows it; no other programs. Returns stdout, stderr, returncode and data.files_changed (files it wrote). shed_parameters lists the installed packages.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    code: z.string().optional().describe('Python code, e.g. "import pandas as pd\\nprint(pd.read_csv(\'sales.csv\').describe())"'),
    path: z.string().optional().describe('Or a .py file of the zone to run, e.g. "scripts/clean.py"'),
    args: z.array(z.string()).default([]).describe('sys.argv[1:], e.g. ["sales.csv"]'),
    timeout: z.number().int().optional().describe('Seconds (the admin caps it)'),
    max_output: z.number().int().optional().describe('Characters kept; 0 = admin max'),
    stdout_file: z.string().optional().describe('Save stdout to this file'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  mutates: true,
  example: { zone: 'storage', code: "import pandas as pd\nprint(pd.read_csv('sales.csv').head())" },
  paramHints: {
    code: 'Send the whole program as one string; use \\n between lines.',
    args: 'Each argument is its own item: args=["sales.csv", "2024"].',
  },
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, args.group);
    const code = args.code === '' ? undefined : args.code;
    if ((code === undefined) === (args.path === undefined)) {
      throw shedError(code === undefined ? 'MISSING_PARAMETER' : 'INVALID_PARAMETER', code === undefined ? 'shed_run_python needs code= (Python source) or path= (a .py file of the zone).' : 'Give code= or path=, not both.', {
        details: { parameter: code === undefined ? 'code' : 'path' },
        hint: `Example: shed_run_python(zone="${args.zone}", code="print(1 + 1)") or shed_run_python(zone="${args.zone}", path="scripts/clean.py")`,
      });
    }
    let scriptPath: string | undefined;
    if (args.path !== undefined) {
      const target = locate(zone, args.path, 'path', 'read', args.allow_zone_in_path);
      requireFile(target);
      if (!target.rel.endsWith('.py')) {
        throw shedError('INVALID_PARAMETER', `'path' must name a Python file ending in .py; got ${showValue(args.path)}.`, {
          details: { parameter: 'path', received: args.path },
          hint: `Rename it (shed_rename) to a .py name, or pass its text as code=. Example: shed_run_python(zone="${args.zone}", path="scripts/clean.py")`,
        });
      }
      scriptPath = diskRel(target);
    } else requireScriptText('code', code!);
    const first = (code ?? '').split('\n').find((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))?.trim() ?? '';
    return runCode(ctx, zone, {
      script: { kind: 'python', ...(scriptPath !== undefined ? { path: scriptPath } : { code: code! }), args: args.args },
      label: 'Python',
      summary: (scriptPath !== undefined ? `Run Python ${scriptPath}` : `Run Python: ${first}`).slice(0, 200),
      timeout: args.timeout,
      max_output: args.max_output,
      stdout_file: args.stdout_file,
      allow_zone_in_path: args.allow_zone_in_path,
    });
  },
});
