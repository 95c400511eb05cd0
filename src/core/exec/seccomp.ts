/**
 * A small seccomp filter for landlock mode: what Landlock does not cover of the network. Landlock
 * refuses TCP connect and bind (ABI 4 and later), but not UDP, not Unix sockets reached by a path
 * (a server's control socket on the host), and not at all on older kernels. So socket(2) is refused
 * for every address family, except, for a command allowed on the network, IPv4, IPv6 and the
 * read-only routing netlink the resolver asks for its addresses. io_uring (which can open sockets on
 * its own) is refused; a system call of another architecture's numbering kills the command.
 * Built here as BPF bytes; the launcher only installs it.
 */

/** Per architecture: the audit value the kernel reports, and system call numbers. */
export interface ArchCalls {
  audit: number;
  prctl: number;
  prlimit64: number;
  socket: number;
  /** x86_64 also accepts x32 system calls (number | 0x40000000): refused. */
  x32?: boolean;
}

/** Linux system call numbers (landlock_* are 444-446 everywhere). */
export const ARCH_CALLS: Readonly<Partial<Record<string, ArchCalls>>> = {
  x64: { audit: 0xc000003e, prctl: 157, prlimit64: 302, socket: 41, x32: true },
  arm64: { audit: 0xc00000b7, prctl: 167, prlimit64: 261, socket: 198 },
  riscv64: { audit: 0xc00000f3, prctl: 167, prlimit64: 261, socket: 198 },
};

const IO_URING_SETUP = 425;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const NETLINK_ROUTE = 0;
const EACCES = 13;
const ENOSYS = 38;

// BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
// Offsets in struct seccomp_data: nr, arch, then args[] as 64-bit values (low half first on little-endian).
const NR = 0;
const ARCH = 4;
const ARG0 = 16;
const ARG2 = 32;

export type Insn = [code: number, jt: number, jf: number, k: number];

/** The filter as hex (struct sock_filter, little-endian), for a command allowed on the network or not. */
export function socketFilter(arch: ArchCalls, network: boolean): string {
  const prog: Insn[] = [
    [LD_W_ABS, 0, 0, ARCH],
    [JEQ_K, 1, 0, arch.audit],
    [RET_K, 0, 0, RET_KILL_PROCESS],
    [LD_W_ABS, 0, 0, NR],
  ];
  if (arch.x32) prog.push([JGE_K, 0, 1, 0x40000000], [RET_K, 0, 0, RET_KILL_PROCESS]);
  prog.push([JEQ_K, 0, 1, IO_URING_SETUP], [RET_K, 0, 0, RET_ERRNO | ENOSYS]);
  if (!network) {
    prog.push([JEQ_K, 0, 1, arch.socket], [RET_K, 0, 0, RET_ERRNO | EACCES]);
  } else {
    // socket(): allowed for IPv4, IPv6 and NETLINK_ROUTE; refused for every other family (AF_UNIX above all).
    prog.push(
      [JEQ_K, 0, 8, arch.socket],
      [LD_W_ABS, 0, 0, ARG0],
      [JEQ_K, 5, 0, AF_INET],
      [JEQ_K, 4, 0, AF_INET6],
      [JEQ_K, 0, 2, AF_NETLINK],
      [LD_W_ABS, 0, 0, ARG2],
      [JEQ_K, 1, 0, NETLINK_ROUTE],
      [RET_K, 0, 0, RET_ERRNO | EACCES],
      [RET_K, 0, 0, RET_ALLOW],
    );
  }
  prog.push([RET_K, 0, 0, RET_ALLOW]);
  return encodeFilter(prog);
}

/** A classic BPF program as the launcher takes it: hex of its `struct sock_filter` array, little-endian. */
export function encodeFilter(prog: readonly Insn[]): string {
  const buf = Buffer.alloc(prog.length * 8);
  prog.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf.toString('hex');
}
