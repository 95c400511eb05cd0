/**
 * The seccomp filter's system call numbers (src/core/services/exec/launcher/seccomp.ts, typed by hand) checked against
 * the kernel's own headers: x86_64's asm/unistd_64.h and asm-generic/unistd.h (arm64, riscv64). The
 * table is read generically, so a call added to it later is checked too. A call newer than the
 * installed headers cannot be compared: it must then lie past the headers' last number (so it names
 * no call the headers know) and be the same on every architecture (numbers past 424 are shared).
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ARCH_CALLS, type Call } from '../../src/core/services/exec/launcher/seccomp.js';

const HEADERS: Record<string, string> = {
  x64: '/usr/include/x86_64-linux-gnu/asm/unistd_64.h',
  arm64: '/usr/include/asm-generic/unistd.h',
  riscv64: '/usr/include/asm-generic/unistd.h',
};

/** `#define __NR_name <number>` lines, with asm-generic's `__NR3264_*` indirection resolved (64-bit side). */
function kernelNumbers(file: string): Map<string, number> {
  const text = fs.readFileSync(file, 'utf8');
  const indirect = new Map<string, number>();
  for (const m of text.matchAll(/^#define\s+__NR3264_(\w+)\s+(\d+)\s*$/gm)) indirect.set(m[1]!, Number(m[2]));
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^#define\s+__NR_(\w+)\s+(\d+|__NR3264_\w+)\s*$/gm)) {
    const value = m[2]!.startsWith('__NR3264_') ? indirect.get(m[2]!.slice('__NR3264_'.length)) : Number(m[2]);
    if (value !== undefined && m[1] !== 'syscalls' && !out.has(m[1]!)) out.set(m[1]!, value);
  }
  return out;
}

describe('seccomp numbers are the kernel headers\' numbers', () => {
  const archs = Object.keys(ARCH_CALLS);

  it('every architecture of the table has a header to check it against', () => {
    expect(archs.length).toBeGreaterThan(0);
    expect(archs.filter((a) => HEADERS[a] === undefined)).toEqual([]);
  });

  for (const arch of archs) {
    const header = HEADERS[arch];
    it.skipIf(header === undefined || !fs.existsSync(header))(`${arch}: every call the headers know has their number`, () => {
      const kernel = kernelNumbers(header!);
      expect(kernel.get('openat')).toBeDefined(); // the parse found the table at all
      const highest = Math.max(...kernel.values());
      const wrong: string[] = [];
      const beyond: string[] = [];
      const byNumber = new Map<number, string>();
      for (const [call, nr] of Object.entries(ARCH_CALLS[arch]!.nr)) {
        const known = kernel.get(call);
        if (known === undefined) {
          if (nr <= highest) wrong.push(`${call}: ${nr} is unknown to ${header} (whose numbers end at ${highest}) yet not past its end`);
          else beyond.push(call);
        } else if (known !== nr) wrong.push(`${call}: the table says ${nr}, ${header} says ${known}`);
        const twin = byNumber.get(nr);
        if (twin !== undefined) wrong.push(`${call} and ${twin} share number ${nr}`);
        byNumber.set(nr, call);
      }
      expect(wrong).toEqual([]);
      // Calls newer than these headers: numbered alike on every architecture (the unified range).
      for (const call of beyond) {
        const numbers = new Set(archs.map((a) => ARCH_CALLS[a]!.nr[call as Call]).filter((n) => n !== undefined));
        expect(numbers.size, `${call} differs across architectures`).toBe(1);
      }
    });
  }

  it('a wrong number would be caught (the check itself works)', () => {
    const kernel = kernelNumbers(HEADERS.x64!);
    if (kernel.size === 0) return;
    expect(kernel.get('openat')).toBe(257);
    expect(kernel.get('socket')).toBe(41);
    expect(ARCH_CALLS.x64!.nr.openat).toBe(kernel.get('openat'));
    const generic = kernelNumbers(HEADERS.arm64!);
    expect(generic.get('openat')).toBe(56);
    expect(generic.get('fcntl')).toBe(25); // resolved through __NR3264_fcntl
  });
});
