/**
 * The programs a command may start, for Landlock's EXECUTE right (landlock mode): the command itself,
 * the interpreter chain that runs it (the dynamic loader of an ELF program, `#!` interpreters of a
 * script), and the few helper programs it legitimately runs (tar runs the compressors, yq runs jq,
 * git its git-core programs). Nothing else can be started: not a shell from `awk system()`, not a
 * hook, not a file of the zone. The loader can still map any readable library (Landlock does not
 * cover mmap), which is why the zone is never executable but its libraries could be loaded by a
 * program that chooses to.
 */
import fs from 'node:fs';
import path from 'node:path';
import { findProgram } from './system.js';

/** Programs (names on the system PATH, or absolute files or folders) each command runs besides itself. */
const HELPERS: Readonly<Record<string, readonly string[]>> = {
  // GNU tar starts its compressor through `/bin/sh -c` (the command text is tar's own: -I is refused).
  tar: ['sh', 'gzip', 'bzip2', 'xz', 'lzip', 'lzma', 'lzop', 'zstd', 'compress'],
  egrep: ['grep'],
  fgrep: ['grep'],
  zcat: ['gzip'],
  gunzip: ['gzip'],
  yq: ['jq'],
  diff3: ['diff'],
  sdiff: ['diff'],
  colordiff: ['diff'],
  '7z': ['/usr/lib/p7zip/7z', '/usr/lib/7zip'],
  '7za': ['/usr/lib/p7zip/7za', '/usr/lib/7zip'],
  git: ['/usr/lib/git-core', '/usr/libexec/git-core'],
};

const cache = new Map<string, readonly string[]>();

/** Real paths of every file (or folder of programs) command `cmd`, found at `program`, may execute. */
export function executablesFor(cmd: string, program: string): readonly string[] {
  const key = `${cmd}\0${program}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const out = new Set<string>();
  const add = (file: string, depth = 0) => {
    const real = realOrUndefined(file);
    if (real === undefined || out.has(real) || depth > 4) return;
    out.add(real);
    if (!fs.statSync(real).isFile()) return;
    for (const next of interpretersOf(real)) add(next, depth + 1);
  };
  add(program);
  for (const helper of HELPERS[cmd] ?? []) {
    const found = helper.startsWith('/') ? helper : findProgram(helper);
    if (found !== undefined) add(found);
  }
  const list = [...out];
  cache.set(key, list);
  return list;
}

function realOrUndefined(file: string): string | undefined {
  try {
    return fs.realpathSync(file);
  } catch {
    return undefined;
  }
}

/** What the kernel runs to start `file`: its `#!` interpreter (and env's target), or an ELF program's loader. */
function interpretersOf(file: string): string[] {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(256);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    if (head[0] === 0x23 && head[1] === 0x21) return shebang(head.subarray(2, n).toString('latin1'));
    if (n >= 64 && head.readUInt32BE(0) === 0x7f454c46) {
      const loader = elfInterpreter(fd, head);
      return loader === undefined ? [] : [loader];
    }
    return [];
  } catch {
    return [];
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function shebang(text: string): string[] {
  const [interpreter, arg] = (text.split('\n')[0] ?? '').trim().split(/\s+/);
  if (interpreter === undefined || !interpreter.startsWith('/')) return [];
  // `#!/usr/bin/env python3` runs env, which runs python3 found on PATH.
  if (path.basename(interpreter) === 'env' && arg !== undefined && !arg.startsWith('-')) {
    const target = findProgram(arg);
    return target === undefined ? [interpreter] : [interpreter, target];
  }
  return [interpreter];
}

/** The PT_INTERP path of an ELF file (the dynamic loader), if it has one. */
function elfInterpreter(fd: number, head: Buffer): string | undefined {
  const is64 = head[4] === 2;
  const little = head[5] === 1;
  const u16 = (b: Buffer, at: number) => (little ? b.readUInt16LE(at) : b.readUInt16BE(at));
  const u32 = (b: Buffer, at: number) => (little ? b.readUInt32LE(at) : b.readUInt32BE(at));
  const word = (b: Buffer, at: number) => (is64 ? Number(little ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at)) : u32(b, at));
  const phoff = word(head, is64 ? 0x20 : 0x1c);
  const phentsize = u16(head, is64 ? 0x36 : 0x2a);
  const phnum = u16(head, is64 ? 0x38 : 0x2c);
  if (phnum === 0 || phnum > 256 || phentsize < (is64 ? 56 : 32)) return undefined;
  const table = Buffer.alloc(phentsize * phnum);
  fs.readSync(fd, table, 0, table.length, phoff);
  for (let i = 0; i < phnum; i++) {
    const at = i * phentsize;
    if (u32(table, at) !== 3) continue; // PT_INTERP
    const offset = word(table, at + (is64 ? 8 : 4));
    const size = word(table, at + (is64 ? 32 : 16));
    if (size <= 1 || size > 4096) return undefined;
    const name = Buffer.alloc(size);
    fs.readSync(fd, name, 0, size, offset);
    return name.subarray(0, size - 1).toString('latin1');
  }
  return undefined;
}
