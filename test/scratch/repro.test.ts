import fs from 'node:fs';
import path from 'node:path';
import { it } from 'vitest';
import { makeArena } from '../security/exec-harness.js';

it('repro', async () => {
  const a = makeArena('validated');
  a.put('f.txt', 'hello\n');
  const O = a.outside;
  const run = async (cmd: string, args: string[], zone = 'storage') => {
    const r = await a.s.call('shed_exec', { zone, cmd, args });
    console.log(cmd, JSON.stringify(args), '=>', r.success ? `ok rc=${r.data?.returncode} out=${String(r.data?.stdout).slice(0, 80)} err=${String(r.data?.stderr).slice(0, 120)}` : `${r.error?.code} ${r.error?.message.slice(0, 120)}`);
  };
  await run('tar', ['-cf', 'out.tar', '--exclude-vcs', `${O}/secret.txt`]);
  await run('tar', ['-xOf', 'out.tar']);
  await run('du', ['--time', `${O}`]);
  await run('iconv', ['-f', `${O}/secret.txt`, '-t', 'utf-8', 'f.txt']);
  await run('find', ['--', '.', '-maxdepth', '0', '-exec', 'cat', `${O}/secret.txt`, ';']);
  await run('awk', ['{print}', '-F', `${O}/secret.txt`]);
  await run('sqlite3', ['-separator', ',', `file:${O}/db.sqlite`, 'select 1']);
  await run('xxd', ['f.txt', '-c', `${O}/secret.txt`]);
  await run('ls', ['*.txt']);
  await run('awk', ['{print $1}', 'f.txt', '|', 'sort', '-u']);
  fs.writeFileSync(path.join(a.uploads, 'u.txt'), 'x');
  await run('tar', ['-xfevil.tar'], 'uploads');
  await run('unzip', ['a.zip', '-x', '-l'], 'uploads');
});
