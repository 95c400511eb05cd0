/**
 * The seccomp filter every command runs under (built here as BPF bytes; the launcher only installs
 * it, last before the program starts). It refuses what Landlock and the namespaces do not cover:
 *
 * In every mode (validated included), because the process and file limits rest on it:
 * - the set*id family (setuid, setresuid, setgroups, ...): a command keeps the identity the launcher
 *   gave it (a server run as root gives each command a private real uid, the one RLIMIT_NPROC counts);
 * - modes that set S_ISUID/S_ISGID (chmod, fchmod, fchmodat, fchmodat2, a file created with such a
 *   mode by open/openat/creat, mknod), so no setuid or setgid file is ever left in a zone (`chmod 4755`,
 *   `cp -p`, `tar -xp`); mknod of anything but a FIFO; openat2 (its mode is out of the filter's reach);
 * - with `noModeChanges`: every chmod, chown and xattr change (an ACL is a mode change);
 * - limits, priority, scheduling and memory placement of any process but the caller (prlimit64,
 *   sched_set*, migrate_pages, move_pages with a pid other than 0; setpriority and ioprio_set other
 *   than the caller's own process): commands of the server's uid must not reach the server;
 * - fallocate with FALLOC_FL_KEEP_SIZE (space reserved beyond the size escapes RLIMIT_FSIZE): EOPNOTSUPP.
 * In the kernel modes (bwrap, landlock) also:
 * - socket() for every address family unless the command may use the network, then only IPv4, IPv6
 *   and the routing netlink the resolver asks (Landlock covers TCP only: not UDP, not a Unix socket
 *   reached by its path);
 * - what could leave the sandbox or run a program no Landlock rule names: ptrace, process_vm_*,
 *   pidfd_getfd, the mount API, unshare/setns and clone with namespace flags, memfd_create and
 *   memfd_secret (an anonymous file lies under no path rule, so it could be executed), execveat,
 *   System V IPC and POSIX message queues (objects that outlive the call, outside its memory limit),
 *   kcmp, process_madvise, process_mrelease,
 *   uselib, open_by_handle_at; bpf, perf_event_open, userfaultfd, the keyring, kexec and modules;
 *   personality changes (e.g. turning address randomisation off); setsid (a new session would get a
 *   scheduling group at the server's priority).
 *
 * Errors: EPERM for a refused operation, which programs report as "Operation not permitted";
 * ENOSYS only where a library falls back to an older call when the new one is missing (clone3, whose
 * flags sit in memory the filter cannot read, falls back to clone; io_uring to ordinary reads and
 * writes; openat2 to openat); EACCES for socket(), as Landlock answers a refused TCP connect, so a
 * refused network looks the same whatever the protocol. A system call of another architecture's
 * numbering (x32, i386 on x86_64) kills the process.
 */

export type Call =
  | 'socket' | 'clone' | 'clone3' | 'setsid' | 'personality'
  | 'setuid' | 'setgid' | 'setreuid' | 'setregid' | 'setresuid' | 'setresgid' | 'setfsuid' | 'setfsgid' | 'setgroups'
  | 'ptrace' | 'process_vm_readv' | 'process_vm_writev' | 'pidfd_getfd' | 'pidfd_open'
  | 'mount' | 'umount2' | 'pivot_root' | 'move_mount' | 'fsopen' | 'fsmount' | 'fsconfig' | 'fspick' | 'open_tree' | 'open_tree_attr' | 'mount_setattr'
  | 'unshare' | 'setns' | 'memfd_create' | 'memfd_secret' | 'execveat' | 'uselib' | 'open_by_handle_at'
  | 'bpf' | 'perf_event_open' | 'userfaultfd' | 'keyctl' | 'add_key' | 'request_key'
  | 'kexec_load' | 'kexec_file_load' | 'init_module' | 'finit_module' | 'delete_module'
  | 'io_uring_setup' | 'io_uring_enter' | 'io_uring_register' | 'openat2'
  | 'chmod' | 'fchmod' | 'fchmodat' | 'fchmodat2' | 'chown' | 'fchown' | 'lchown' | 'fchownat'
  | 'setxattr' | 'lsetxattr' | 'fsetxattr' | 'setxattrat' | 'removexattr' | 'lremovexattr' | 'fremovexattr' | 'removexattrat'
  | 'open' | 'openat' | 'creat' | 'mknod' | 'mknodat'
  | 'prctl' | 'prlimit64' | 'capget' | 'capset' | 'getrusage' | 'clock_gettime' | 'close_range'
  | 'getresuid' | 'getresgid' | 'getgroups' | 'close'
  | 'shmget' | 'shmat' | 'shmctl' | 'shmdt' | 'semget' | 'semop' | 'semctl' | 'semtimedop' | 'msgget' | 'msgsnd' | 'msgrcv' | 'msgctl'
  | 'mq_open' | 'mq_unlink' | 'mq_timedsend' | 'mq_timedreceive' | 'mq_notify' | 'mq_getsetattr'
  | 'setpriority' | 'sched_setparam' | 'sched_setscheduler' | 'sched_setaffinity' | 'sched_setattr' | 'ioprio_set'
  | 'migrate_pages' | 'move_pages' | 'kcmp' | 'process_madvise' | 'process_mrelease' | 'fallocate';

/**
 * Per architecture: the audit value the kernel reports, and its system call numbers (absent: the
 * call does not exist there), for the filter and for the launcher's own calls.
 */
export interface ArchCalls {
  audit: number;
  /** x86_64 also accepts x32 system calls (number | 0x40000000): refused. */
  x32?: boolean;
  nr: Readonly<Partial<Record<Call, number>>>;
}

/** Numbers shared by every architecture (added after the tables split). */
const COMMON: Partial<Record<Call, number>> = {
  pidfd_getfd: 438, pidfd_open: 434, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, open_tree: 428,
  mount_setattr: 442, memfd_secret: 447, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, clone3: 435,
  openat2: 437, fchmodat2: 452, setxattrat: 463, removexattrat: 466, open_tree_attr: 467, close_range: 436,
  process_madvise: 440, process_mrelease: 448,
};

/** The asm-generic numbering (arm64, riscv64): no open/chmod/chown/mknod without "at". */
const GENERIC: Partial<Record<Call, number>> = {
  ...COMMON,
  socket: 198, clone: 220, setsid: 157, personality: 92,
  setuid: 146, setgid: 144, setreuid: 145, setregid: 143, setresuid: 147, setresgid: 149, setfsuid: 151, setfsgid: 152, setgroups: 159,
  ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, mount: 40, umount2: 39, pivot_root: 41,
  unshare: 97, setns: 268, memfd_create: 279, execveat: 281, open_by_handle_at: 265,
  bpf: 280, perf_event_open: 241, userfaultfd: 282, keyctl: 219, add_key: 217, request_key: 218,
  kexec_load: 104, kexec_file_load: 294, init_module: 105, finit_module: 273, delete_module: 106,
  fchmod: 52, fchmodat: 53, fchown: 55, fchownat: 54,
  setxattr: 5, lsetxattr: 6, fsetxattr: 7, removexattr: 14, lremovexattr: 15, fremovexattr: 16,
  openat: 56, mknodat: 33, prctl: 167, prlimit64: 261, capget: 90, capset: 91, getrusage: 165, clock_gettime: 113,
  getresuid: 148, getresgid: 150, getgroups: 158, close: 57,
  shmget: 194, shmat: 196, shmctl: 195, shmdt: 197, semget: 190, semop: 193, semctl: 191, semtimedop: 192,
  msgget: 186, msgsnd: 189, msgrcv: 188, msgctl: 187,
  mq_open: 180, mq_unlink: 181, mq_timedsend: 182, mq_timedreceive: 183, mq_notify: 184, mq_getsetattr: 185,
  setpriority: 140, sched_setparam: 118, sched_setscheduler: 119, sched_setaffinity: 122, sched_setattr: 274, ioprio_set: 30,
  migrate_pages: 238, move_pages: 239, kcmp: 272, fallocate: 47,
};

/** Linux system call numbers (landlock_* are 444-446 everywhere). */
export const ARCH_CALLS: Readonly<Partial<Record<string, ArchCalls>>> = {
  x64: {
    audit: 0xc000003e,
    x32: true,
    nr: {
      ...COMMON,
      socket: 41, clone: 56, setsid: 112, personality: 135,
      setuid: 105, setgid: 106, setreuid: 113, setregid: 114, setresuid: 117, setresgid: 119, setfsuid: 122, setfsgid: 123, setgroups: 116,
      ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, mount: 165, umount2: 166, pivot_root: 155,
      unshare: 272, setns: 308, memfd_create: 319, execveat: 322, uselib: 134, open_by_handle_at: 304,
      bpf: 321, perf_event_open: 298, userfaultfd: 323, keyctl: 250, add_key: 248, request_key: 249,
      kexec_load: 246, kexec_file_load: 320, init_module: 175, finit_module: 313, delete_module: 176,
      chmod: 90, fchmod: 91, fchmodat: 268, chown: 92, fchown: 93, lchown: 94, fchownat: 260,
      setxattr: 188, lsetxattr: 189, fsetxattr: 190, removexattr: 197, lremovexattr: 198, fremovexattr: 199,
      open: 2, openat: 257, creat: 85, mknod: 133, mknodat: 259, prctl: 157, prlimit64: 302, capget: 125, capset: 126, getrusage: 98, clock_gettime: 228,
      getresuid: 118, getresgid: 120, getgroups: 115, close: 3,
      shmget: 29, shmat: 30, shmctl: 31, shmdt: 67, semget: 64, semop: 65, semctl: 66, semtimedop: 220,
      msgget: 68, msgsnd: 69, msgrcv: 70, msgctl: 71,
      mq_open: 240, mq_unlink: 241, mq_timedsend: 242, mq_timedreceive: 243, mq_notify: 244, mq_getsetattr: 245,
      setpriority: 141, sched_setparam: 142, sched_setscheduler: 144, sched_setaffinity: 203, sched_setattr: 314, ioprio_set: 251,
      migrate_pages: 256, move_pages: 279, kcmp: 312, fallocate: 285,
    },
  },
  arm64: { audit: 0xc00000b7, nr: GENERIC },
  riscv64: { audit: 0xc00000f3, nr: GENERIC },
};

export interface FilterSpec {
  /** bwrap or landlock: the whole list; validated: the identity and file-mode rules only. */
  kernel: boolean;
  /** The command may use the network (kernel modes: socket() for IPv4, IPv6 and routing netlink). */
  network: boolean;
  /** Refuse every chmod, chown and xattr change (not only setuid/setgid modes). */
  noModeChanges: boolean;
}

const EPERM = 1;
const EACCES = 13;
const ENOSYS = 38;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const NETLINK_ROUTE = 0;
const SETID_BITS = 0o6000;
const S_IFMT = 0o170000;
const S_IFIFO = 0o010000;
const O_CREAT = 0o100;
const O_TMPFILE = 0o20000000; // __O_TMPFILE: creates a file like O_CREAT
// CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (CLONE_NEWTIME only exists for clone3 and unshare).
const CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
const PERSONALITY_QUERY = 0xffffffff;
const EOPNOTSUPP = 95;
const FALLOC_FL_KEEP_SIZE = 0x01;
const PRIO_PROCESS = 0;
const IOPRIO_WHO_PROCESS = 1;

/** Refused wholesale in the kernel modes (EPERM). */
const KERNEL_DENIED: readonly Call[] = [
  'ptrace', 'process_vm_readv', 'process_vm_writev', 'pidfd_getfd',
  'mount', 'umount2', 'pivot_root', 'move_mount', 'fsopen', 'fsmount', 'fsconfig', 'fspick', 'open_tree', 'open_tree_attr', 'mount_setattr',
  'unshare', 'setns', 'memfd_create', 'memfd_secret', 'execveat', 'uselib', 'open_by_handle_at',
  'bpf', 'perf_event_open', 'userfaultfd', 'keyctl', 'add_key', 'request_key',
  'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module', 'setsid',
  // Another process's memory placement and descriptors.
  'kcmp', 'process_madvise', 'process_mrelease',
  // System V IPC and POSIX message queues: objects of the host's (landlock) IPC namespace, kept after
  // the call and outside its memory limit (bwrap has its own IPC namespace; refused there too).
  'shmget', 'shmat', 'shmctl', 'shmdt', 'semget', 'semop', 'semctl', 'semtimedop', 'msgget', 'msgsnd', 'msgrcv', 'msgctl',
  'mq_open', 'mq_unlink', 'mq_timedsend', 'mq_timedreceive', 'mq_notify', 'mq_getsetattr',
];
/**
 * Calls that change a process's limits, priority, scheduling or memory placement, allowed only on
 * the caller itself (pid 0): in landlock mode every other process of the server's uid (the server,
 * the launcher, other users' commands) would accept them. Reading (getrlimit, sched_getaffinity,
 * getpriority) is not filtered: numerical libraries ask their own affinity.
 */
const SELF_ONLY: readonly Call[] = ['prlimit64', 'sched_setparam', 'sched_setscheduler', 'sched_setaffinity', 'sched_setattr', 'migrate_pages', 'move_pages'];
/** Refused in the kernel modes with ENOSYS: the library falls back to an older call. */
const KERNEL_MISSING: readonly Call[] = ['io_uring_setup', 'io_uring_enter', 'io_uring_register', 'clone3'];
/** Refused in every mode (EPERM): a command keeps the identity it was started with. */
const IDENTITY: readonly Call[] = ['setuid', 'setgid', 'setreuid', 'setregid', 'setresuid', 'setresgid', 'setfsuid', 'setfsgid', 'setgroups'];
/** Changes of modes, owners and ACLs: refused with `noModeChanges`. */
const MODE_CHANGES: readonly Call[] = [
  'chmod', 'fchmod', 'fchmodat', 'fchmodat2', 'chown', 'fchown', 'lchown', 'fchownat',
  'setxattr', 'lsetxattr', 'fsetxattr', 'setxattrat', 'removexattr', 'lremovexattr', 'fremovexattr', 'removexattrat',
];

// BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JA = 0x05;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const AND_K = 0x54;
const RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
// Offsets in struct seccomp_data: nr, arch, then args[] as 64-bit values (the low half first on little-endian).
const NR = 0;
const ARCH = 4;
const arg = (i: number) => 16 + 8 * i;

export type Insn = [code: number, jt: number, jf: number, k: number];

/** An instruction whose jump targets are labels (resolved forward), or a label. */
type Step = { op: number; k: number; t?: string; f?: string } | { label: string };

/** Resolves labels to forward offsets (classic BPF jumps only forward, at most 255 for a conditional). */
function assemble(steps: readonly Step[]): Insn[] {
  const at = new Map<string, number>();
  let n = 0;
  for (const s of steps) {
    if ('label' in s) at.set(s.label, n);
    else n++;
  }
  const out: Insn[] = [];
  for (const s of steps) {
    if ('label' in s) continue;
    const i = out.length;
    const rel = (label: string | undefined) => {
      if (label === undefined) return 0;
      const to = at.get(label);
      if (to === undefined || to <= i) throw new Error(`seccomp: bad jump to ${label}`);
      return to - i - 1;
    };
    if (s.op === JA) {
      out.push([JA, 0, 0, rel(s.t)]);
      continue;
    }
    const jt = rel(s.t);
    const jf = rel(s.f);
    if (jt > 255 || jf > 255) throw new Error('seccomp: jump too far');
    out.push([s.op, jt, jf, s.k]);
  }
  return out;
}

/** The command's filter, as hex of its `struct sock_filter` array (little-endian), for the launcher. */
export function commandFilter(arch: ArchCalls, spec: FilterSpec): string {
  const nr = arch.nr;
  const steps: Step[] = [];
  const emit = (op: number, k: number, t?: string, f?: string) => steps.push({ op, k, ...(t !== undefined ? { t } : {}), ...(f !== undefined ? { f } : {}) });
  const label = (name: string) => steps.push({ label: name });
  /** System call `call` (when it exists here) jumps to `to`. */
  const on = (call: Call, to: string) => {
    const n = nr[call];
    if (n !== undefined) emit(JEQ_K, n, to);
  };

  emit(LD_W_ABS, ARCH);
  emit(JEQ_K, arch.audit, undefined, 'kill');
  emit(LD_W_ABS, NR);
  if (arch.x32) emit(JGE_K, 0x40000000, 'kill');
  for (const call of IDENTITY) on(call, 'eperm');
  on('openat2', 'enosys');
  if (spec.noModeChanges) for (const call of MODE_CHANGES) on(call, 'eperm');
  else {
    on('chmod', 'mode1');
    on('fchmod', 'mode1');
    on('fchmodat', 'mode2');
    on('fchmodat2', 'mode2');
  }
  on('creat', 'mode1');
  on('open', 'open1');
  on('openat', 'open2');
  on('mknod', 'mknod1');
  on('mknodat', 'mknod2');
  // In every mode: whatever runs as the server's uid must not reach another of its processes.
  for (const call of SELF_ONLY) on(call, 'self');
  on('setpriority', 'prio');
  on('ioprio_set', 'ioprio');
  on('fallocate', 'fallocate');
  if (spec.kernel) {
    for (const call of KERNEL_DENIED) on(call, 'eperm');
    for (const call of KERNEL_MISSING) on(call, 'enosys');
    on('clone', 'clone');
    on('personality', 'personality');
    on('socket', spec.network ? 'socket' : 'eacces');
  }
  emit(RET_K, RET_ALLOW);

  // open(path, flags, mode) and openat(dir, path, flags, mode): the mode counts only when the call creates a file.
  label('open1');
  emit(LD_W_ABS, arg(1));
  emit(JSET_K, O_CREAT | O_TMPFILE, 'mode2', 'allow');
  label('open2');
  emit(LD_W_ABS, arg(2));
  emit(JSET_K, O_CREAT | O_TMPFILE, 'mode3', 'allow');
  // A mode argument that sets S_ISUID or S_ISGID.
  for (const i of [1, 2, 3]) {
    label(`mode${i}`);
    emit(LD_W_ABS, arg(i));
    emit(JSET_K, SETID_BITS, 'eperm', 'allow');
  }
  // mknod(path, mode, dev) and mknodat(dir, path, mode, dev): a FIFO without set-id bits, nothing else.
  label('mknod1');
  emit(LD_W_ABS, arg(1));
  emit(JA, 0, 'mknod');
  label('mknod2');
  emit(LD_W_ABS, arg(2));
  label('mknod');
  emit(JSET_K, SETID_BITS, 'eperm');
  emit(AND_K, S_IFMT);
  emit(JEQ_K, S_IFIFO, 'allow', 'eperm');
  // pid 0, the caller (a pid_t: the kernel reads the low 32 bits only, so they decide).
  label('self');
  emit(LD_W_ABS, arg(0));
  emit(JEQ_K, 0, 'allow', 'eperm');
  // setpriority(which, who, prio) and ioprio_set(which, who, ioprio): the caller's own process only
  // (a process group or a user would include the server's processes).
  label('prio');
  emit(LD_W_ABS, arg(0));
  emit(JEQ_K, PRIO_PROCESS, 'who', 'eperm');
  label('ioprio');
  emit(LD_W_ABS, arg(0));
  emit(JEQ_K, IOPRIO_WHO_PROCESS, 'who', 'eperm');
  label('who');
  emit(LD_W_ABS, arg(1));
  emit(JEQ_K, 0, 'allow', 'eperm');
  // fallocate(fd, mode, offset, len): space reserved beyond the file's size (KEEP_SIZE, also the flag
  // of hole punching and zero ranges) escapes RLIMIT_FSIZE; without it the size grows and the limit
  // holds. EOPNOTSUPP, as a file system without the mode answers: programs fall back.
  label('fallocate');
  emit(LD_W_ABS, arg(1));
  emit(JSET_K, FALLOC_FL_KEEP_SIZE, 'eopnotsupp', 'allow');
  if (spec.kernel) {
    label('clone');
    emit(LD_W_ABS, arg(0));
    emit(JSET_K, CLONE_NAMESPACES, 'eperm', 'allow');
    // Only the default execution domain, and the question that changes nothing.
    label('personality');
    emit(LD_W_ABS, arg(0));
    emit(JEQ_K, 0, 'allow');
    emit(JEQ_K, PERSONALITY_QUERY, 'allow', 'eperm');
    if (spec.network) {
      label('socket');
      emit(LD_W_ABS, arg(0));
      emit(JEQ_K, AF_INET, 'allow');
      emit(JEQ_K, AF_INET6, 'allow');
      emit(JEQ_K, AF_NETLINK, undefined, 'eacces');
      emit(LD_W_ABS, arg(2));
      emit(JEQ_K, NETLINK_ROUTE, 'allow', 'eacces');
    }
  }
  // The answers, last: every jump to them is forward.
  label('kill');
  emit(RET_K, RET_KILL_PROCESS);
  label('eperm');
  emit(RET_K, RET_ERRNO | EPERM);
  label('enosys');
  emit(RET_K, RET_ERRNO | ENOSYS);
  label('eacces');
  emit(RET_K, RET_ERRNO | EACCES);
  label('eopnotsupp');
  emit(RET_K, RET_ERRNO | EOPNOTSUPP);
  label('allow');
  emit(RET_K, RET_ALLOW);
  return encodeFilter(assemble(steps));
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
