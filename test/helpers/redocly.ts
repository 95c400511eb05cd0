/**
 * Redocly CLI (a devDependency) linting an OpenAPI document with its `recommended` rules, as a
 * real process; telemetry and update checks off (the tests run offline).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

export function redoclyLint(doc: unknown): { errors: number; warnings: number; problems: LintProblem[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-redocly-'));
  try {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc, null, 2));
    const cli = path.resolve('node_modules/@redocly/cli/bin/cli.js');
    const r = spawnSync(process.execPath, [cli, 'lint', '--extends', 'recommended', '--format', 'json', file], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    });
    const report = JSON.parse(r.stdout) as { totals: { errors: number; warnings: number }; problems: LintProblem[] };
    return { errors: report.totals.errors, warnings: report.totals.warnings, problems: report.problems };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
