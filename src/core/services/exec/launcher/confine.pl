# CONFINE: the confinement routine both launcher scripts share (see launcher-script.ts). Builtins and syscall only.
my (%NR, $STATUS, $EXIT);
sub fail { my $e = "$!"; syswrite($STATUS, "$_[0]: $e\n") if $STATUS; $EXIT->(125) }
sub one { my ($c, $k, $d) = @_; defined $c->{$k} ? $c->{$k}[0] : $d }
sub setlimit {
  my ($res, $value) = @_;
  my $old = "\0" x 16;
  syscall($NR{prlimit64}, 0, $res + 0, 0, $old) == 0 or fail("getrlimit $res");
  my $hard = (unpack('QQ', $old))[1];
  $value = $hard if $hard < $value;
  my $new = pack('QQ', $value, $value);
  syscall($NR{prlimit64}, 0, $res + 0, $new, 0) == 0 or fail("setrlimit $res");
}
sub caps {
  my ($hdr, $data) = (pack('LL', 0x20080522, 0), "\0" x 24);
  syscall($NR{capget}, $hdr, $data) == 0 or fail('capget');
  unpack('L6', $data);
}
sub drop_caps {
  my $setpcap = (caps())[0] & (1 << 8);
  my $last = 63;
  if (open(my $f, '<', '/proc/sys/kernel/cap_last_cap')) { $last = <$f> + 0; close($f) }
  if ($setpcap) {
    # SECBIT_NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE and KEEP_CAPS, each locked: root gets nothing back at exec.
    syscall($NR{prctl}, 28, 0xef, 0, 0, 0) == 0 or fail('securebits');
    for my $cap (0 .. $last) { syscall($NR{prctl}, 24, $cap, 0, 0, 0) == 0 or fail("capability bounding set ($cap)") }
  }
  syscall($NR{prctl}, 47, 4, 0, 0, 0);
  my ($hdr, $none) = (pack('LL', 0x20080522, 0), "\0" x 24);
  syscall($NR{capset}, $hdr, $none) == 0 or fail('capset');
  $! = 0;
  (grep { $_ } caps()) and fail('capabilities remain');
  if ($setpcap) { for my $cap (0 .. $last) { syscall($NR{prctl}, 23, $cap, 0, 0, 0) == 0 or fail("capability bounding set ($cap) remains") } }
}
# Lowers the nice value of a process's session scheduling group (autogroup) to the one given, never raising
# it; true once it is there. Without CAP_SYS_ADMIN the kernel takes one such change per 100 ms for
# the whole system (EAGAIN): the caller tries again.
sub autogroup {
  my ($pid, $nice) = @_;
  open(my $r, '<', "/proc/$pid/autogroup") or return 0;
  my $current = (<$r> // '') =~ /nice (-?\d+)/ ? $1 : return 0;
  return 1 if $current >= $nice;
  sysopen(my $w, "/proc/$pid/autogroup", 1) or return 0;
  defined(syswrite($w, $nice)) ? 1 : 0;
}
# A script's code, written into the call's temp folder (made for this call: O_EXCL, nothing is replaced).
sub place_file {
  my ($c) = @_;
  my $path = one($c, 'file');
  return unless defined $path;
  my $data = join('', @{$c->{filedata} // []});
  sysopen(my $fh, $path, 1 | 0100 | 0200, 0600) or fail('script file');
  for (my $at = 0; $at < length($data);) { my $n = syswrite($fh, $data, length($data) - $at, $at) or fail('script file'); $at += $n }
  close($fh) or fail('script file');
}
# The caller's own identity (`uid`, `gid`, `groups`; nothing when the request names none): every
# capability bound dropped while CAP_SETPCAP may still be held (nothing a program runs can gain one
# back), then the supplementary groups (exactly those asked), real, effective and saved gid, then uid,
# and every one of them checked with the kernel (getresuid, getresgid, the file system ids,
# getgroups). Moving root's every uid to another clears its capabilities in the kernel; confine()
# then drops what a non-root server's might have kept.
# Real = effective = saved, so Perl does not turn taint mode on, shells keep their privileges as they
# are (none) and access(2) answers for the uid that opens.
sub become {
  my ($c) = @_;
  my $uid = one($c, 'uid');
  return unless defined $uid;
  my $gid = one($c, 'gid');
  my @groups = map { $_ + 0 } @{$c->{groups} // []};
  defined $gid && $uid =~ /\A\d+\z/ && $gid =~ /\A\d+\z/ && $uid > 0 && $gid > 0 or do { $! = 22; fail('identity') };
  if ((caps())[0] & (1 << 8)) {
    my $last = 63;
    if (open(my $f, '<', '/proc/sys/kernel/cap_last_cap')) { $last = <$f> + 0; close($f) }
    for my $cap (0 .. $last) { syscall($NR{prctl}, 24, $cap, 0, 0, 0) == 0 or fail("capability bounding set ($cap)") }
  }
  my $list = pack('L*', @groups);
  syscall($NR{setgroups}, scalar(@groups), @groups ? $list : 0) == 0 or fail('setgroups');
  syscall($NR{setresgid}, $gid + 0, $gid + 0, $gid + 0) == 0 or fail('setresgid');
  syscall($NR{setresuid}, $uid + 0, $uid + 0, $uid + 0) == 0 or fail('setresuid');
  my $now = join(' ', ids('getresuid'), ids('getresgid'));
  my $fs = join(' ', syscall($NR{setfsuid}, -1), syscall($NR{setfsgid}, -1));
  my $n = syscall($NR{getgroups}, 0, 0);
  my $in = "\0" x (4 * ($n > 0 ? $n : 0));
  $n = $n > 0 ? syscall($NR{getgroups}, $n, $in) : $n;
  $n >= 0 or fail('getgroups');
  my $held = join(' ', sort { $a <=> $b } unpack("L$n", $in));
  $! = 1;
  $now eq join(' ', ($uid) x 3, ($gid) x 3) && $fs eq "$uid $gid" or fail("identity: uid and gid $now $fs");
  $held eq join(' ', sort { $a <=> $b } @groups) or fail("identity: groups $held");
}
# Real, effective and saved uid (getresuid) or gid (getresgid), as the kernel holds them now.
sub ids {
  my ($r, $e, $s) = ("\0" x 4) x 3;
  syscall($NR{$_[0]}, $r, $e, $s) == 0 or fail($_[0]);
  map { unpack('L', $_) } $r, $e, $s;
}
sub confine {
  my ($c) = @_;
  if (defined(my $t = one($c, 'tmpfs'))) {
    my ($src, $type) = ('tmpfs', 'tmpfs');
    my ($dir, $opts) = split(/ /, $t, 2);
    syscall($NR{mount}, $src, $dir, $type, 2 | 4 | 8, $opts) == 0 or fail("mount $dir");
  }
  for my $dir (@{$c->{mkdir} // []}) { mkdir($dir, 0700) or fail("mkdir $dir") }
  for my $dir (@{$c->{noexec} // []}) {
    my $attr = pack('QQQQ', 2 | 4 | 8, 0, 0, 0);
    syscall($NR{mount_setattr}, -100, $dir, 0x8000, $attr, 32) == 0 or fail("noexec $dir");
  }
  if (defined(my $n = one($c, 'nproc'))) { setlimit(6, $n) }
  my $ruleset = -1;
  my $abi = one($c, 'abi', 0);
  if ($abi > 0) {
    my ($fs, $net, $scoped) = map { one($c, $_, 0) + 0 } qw(fs net scoped);
    my $attr = $abi >= 6 ? pack('QQQ', $fs, $net, $scoped) : $abi >= 4 ? pack('QQ', $fs, $net) : pack('Q', $fs);
    $ruleset = syscall(444, $attr, length($attr), 0);
    $ruleset >= 0 or fail('landlock_create_ruleset');
    # Raw descriptors (O_PATH), no Perl handle: a rule costs three system calls. A path that is not
    # there is skipped; a file takes only the rights a file can have (the kernel refuses a folder's
    # rights on a file with EINVAL).
    for (@{$c->{rule} // []}) {
      my ($rights, $path) = split(/ /, $_, 2);
      my $fd = syscall($NR{openat}, -100, $path, 010000000 | 02000000);
      next if $fd < 0;
      my $added = syscall(445, $ruleset, 1, pack('Ql', $rights, $fd), 0) == 0
        || ($! == 22 && syscall(445, $ruleset, 1, pack('Ql', $rights & (1 | 2 | 4 | 16384 | 32768), $fd), 0) == 0);
      $added or fail("landlock_add_rule $path");
      syscall($NR{close}, $fd);
    }
  }
  syscall($NR{prctl}, 38, 1, 0, 0, 0) == 0 or fail('no_new_privs');
  drop_caps();
  my $bpf = one($c, 'bpf', '');
  if ($bpf ne '') {
    my $prog = pack('H*', $bpf);
    my $fprog = pack('S x6 P', length($prog) / 8, $prog);
    syscall($NR{prctl}, 22, 2, $fprog, 0, 0) == 0 or fail('seccomp');
  }
  if ($ruleset >= 0) { syscall(446, $ruleset, 0) == 0 or fail('landlock_restrict_self') }
}

