/**
 * The launcher is real Perl (src/core/services/exec/launcher/*.pl): each file compiles alone, and so do the two
 * scripts made of them, exactly as the fork server and bubblewrap receive them (`perl -e TEXT`).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INNER_SCRIPT, SERVER_SCRIPT } from '../../src/core/services/exec/launcher/launcher-script.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';

const perl = findProgram('perl')!;
const dir = path.resolve('src/core/services/exec/launcher');

/** `perl -c` on the text: its verdict and what it said. */
function check(args: string[], input?: string): { status: number | null; said: string } {
  const r = spawnSync(perl, ['-c', ...args], { input, encoding: 'utf8' });
  return { status: r.status, said: `${r.stdout}${r.stderr}` };
}

describe('the launcher is real Perl', () => {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.pl')).sort();

  it('has its three files', () => {
    expect(files).toEqual(['confine.pl', 'inner.pl', 'server.pl']);
  });

  for (const file of ['confine.pl', 'inner.pl', 'server.pl']) {
    it(`perl -c ${file}`, () => {
      const r = check([path.join(dir, file)]);
      expect(r.said).toContain('syntax OK');
      expect(r.status).toBe(0);
    });
  }

  it('the scripts the launcher runs compile, and are the files joined', () => {
    for (const script of [INNER_SCRIPT, SERVER_SCRIPT]) {
      const r = check(['-e', script]);
      expect(r.said).toContain('syntax OK');
      expect(r.status).toBe(0);
    }
    const text = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
    expect(INNER_SCRIPT).toBe(text('confine.pl') + text('inner.pl'));
    expect(SERVER_SCRIPT).toBe(text('confine.pl') + text('server.pl'));
  });

  it('a broken file is caught (the check is real)', () => {
    const r = check(['-e', `${fs.readFileSync(path.join(dir, 'inner.pl'), 'utf8')}\nsub {`]);
    expect(r.status).not.toBe(0);
  });
});
