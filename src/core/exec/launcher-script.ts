/**
 * The launcher every command starts through (run with `perl -e`, see launcher.ts for why Perl): it
 * sets the resource limits and CPU priority, optionally confines itself with Landlock and a seccomp
 * filter, then replaces itself with the program (exec, so the program is the process the runner
 * watches, freezes and kills). Perl's builtins make every system call needed, with no module and no
 * compiler; nothing is loaded from @INC.
 *
 * Arguments after `--`:
 *   1. header: nice prctl prlimit merge nnp abi fs net scoped nrules nlimits, then nlimits pairs
 *      (resource value), numbers separated by spaces (system call numbers are the architecture's;
 *      a limit above the current hard limit is lowered to it, so setting one never fails);
 *   2. the seccomp filter as hex, or an empty string for none;
 *   3. nrules pairs (rights path): Landlock rules; a path that cannot be opened is skipped (it
 *      grants nothing), and a file (not a folder) keeps only the rights a file rule may carry
 *      (EXECUTE 1, WRITE_FILE 2, READ_FILE 4, TRUNCATE 16384, IOCTL_DEV 32768: others are EINVAL);
 *   4. the program and its arguments (the program is run as given: no shell, no PATH search).
 * Any failure before the exec writes a message to descriptor 3 (the status pipe) and exits 125, so
 * the command never runs with less confinement or looser limits than asked; the exec closes that
 * descriptor. The priority only ever goes down (the runner may have lowered it already), and is no
 * boundary: failing to set it is not fatal.
 */
export const LAUNCHER_SCRIPT = String.raw`
open(my $status, '>&=', 3) or exit 125;
fcntl($status, 2, 1);
sub fail { syswrite($status, "$_[0]: $!"); exit 125 }
my @h = split(/ /, shift(@ARGV));
my $bpf = shift(@ARGV);
my ($nice, $prctl, $prlimit, $merge, $nnp, $abi, $fs, $net, $scoped, $nrules, $nlimits) = splice(@h, 0, 11);
for (1 .. $nlimits) {
  my ($res, $value) = splice(@h, 0, 2);
  my $old = "\0" x 16;
  syscall($prlimit + 0, 0, $res + 0, 0, $old) == 0 or fail("getrlimit $res");
  my $hard = (unpack('QQ', $old))[1];
  $value = $hard if $hard < $value;
  my $limit = pack('QQ', $value, $value);
  syscall($prlimit + 0, 0, $res + 0, $limit, 0) == 0 or fail("setrlimit $res");
}
setpriority(0, 0, $nice + 0) if getpriority(0, 0) < $nice;
if (open(my $group, '>', '/proc/self/autogroup')) { print $group $nice; close($group) }
if ($merge) { open(STDERR, '>&', \*STDOUT) or fail('stderr') }
my $ruleset = -1;
if ($fs) {
  my $attr = $abi >= 6 ? pack('QQQ', $fs, $net, $scoped) : $abi >= 4 ? pack('QQ', $fs, $net) : pack('Q', $fs);
  $ruleset = syscall(444, $attr, length($attr), 0);
  $ruleset >= 0 or fail('landlock_create_ruleset');
  for (1 .. $nrules) {
    my $rights = shift(@ARGV) + 0;
    my $path = shift(@ARGV);
    sysopen(my $fh, $path, 010000000 | 02000000) or next;
    $rights &= 1 | 2 | 4 | 16384 | 32768 unless -d $fh;
    my $rule = pack('Ql', $rights, fileno($fh));
    syscall(445, $ruleset, 1, $rule, 0) == 0 or fail("landlock_add_rule $path");
    close($fh);
  }
}
if ($nnp) { syscall($prctl + 0, 38, 1, 0, 0, 0) == 0 or fail('no_new_privs') }
if ($bpf ne '') {
  my $prog = pack('H*', $bpf);
  my $fprog = pack('S x6 P', length($prog) / 8, $prog);
  syscall($prctl + 0, 22, 2, $fprog, 0, 0) == 0 or fail('seccomp');
}
if ($ruleset >= 0) { syscall(446, $ruleset, 0) == 0 or fail('landlock_restrict_self') }
exec { $ARGV[0] } @ARGV;
fail("exec $ARGV[0]");
`;
