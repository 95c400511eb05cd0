# The fork server, after confine.pl: supervisors and the command's process (see launcher-script.ts).
use POSIX ();
my ($header, $INNER) = @ARGV;
my %H = map { split(/=/, $_, 2) } split(/ /, $header);
%NR = map { /^nr\.(.*)$/ ? ($1 => $H{$_}) : () } keys %H;
$0 = 'fileshed launcher';
$SIG{$_} = 'IGNORE' for qw(INT HUP PIPE QUIT);
my $SERVER = $$;
my $NODE = getppid();
my $PAGE = POSIX::sysconf(POSIX::_SC_PAGESIZE()) || 4096;
syscall($NR{prctl}, 36, 1, 0, 0, 0);
my %sup;
my $buf = '';
# The launcher's own process limit as high as it may go; commands' limits stay below it (see bound).
my $NPROC_HARD = do { my $l = "\0" x 16; syscall($NR{prlimit64}, 0, 6, 0, $l); (unpack('QQ', $l))[1] };
{ my $l = pack('QQ', $NPROC_HARD, $NPROC_HARD); syscall($NR{prlimit64}, 0, 6, $l, 0) }

sub now { my $ts = "\0" x 16; syscall($NR{clock_gettime}, 1, $ts); my ($s, $ns) = unpack('qq', $ts); $s + $ns / 1e9 }
sub report { send_message(\*STDOUT, "$_[0]\n") }
sub hexs { my $t = substr($_[0] // '', 0, 1500); $t eq '' ? '-' : unpack('H*', $t) }

# The processes under pid (Linux /proc/PID/task/TID/children), depth first.
sub children {
  my ($pid) = @_;
  my @out;
  opendir(my $d, "/proc/$pid/task") or return;
  for my $t (readdir($d)) {
    next if $t =~ /^\./;
    open(my $f, '<', "/proc/$pid/task/$t/children") or next;
    push @out, split(' ', scalar(<$f>) // '');
  }
  @out;
}
sub sid { open(my $f, '<', "/proc/$_[0]/stat") or return -1; my $s = <$f> // ''; $s =~ s/^.*\) //s; (split(/ /, $s))[3] // -1 }
sub descendants { my @all; my @todo = children($_[0]); while (@todo) { my $p = shift(@todo); push @all, $p; push @todo, children($p) } @all }

# RLIMIT_NPROC counts every task of a real uid, so it bounds one command alone only where the command
# has a count of its own: its user namespace (bwrap, server run as an ordinary user; the kernel never
# counts root's tasks), or the caller's own uid (`uid`: the budget then holds for all of that user's
# commands together). There it is the command's budget (exact: 1). Everywhere else the supervisor
# counts the command's tasks and stops it past its budget, and RLIMIT_NPROC only keeps the last 64 of
# the uid's hard limit free, so the launcher's own forks never fail.
sub bound {
  my ($q) = @_;
  return (one($q, 'budget') + 0, 1) if (one($q, 'mode') eq 'bwrap' && $> != 0) || defined one($q, 'uid');
  ($NPROC_HARD < 2 ** 62 ? $NPROC_HARD - 64 : undef, 0);
}

sub parse {
  my %q;
  my @f = split(/\0/, $_[0], -1);
  while (@f) { my ($k, $v) = splice(@f, 0, 2); push @{$q{$k}}, $v }
  \%q;
}

# One request: a message, its byte length first.
sub message { length($_[0]) . "\n" . $_[0] }
sub read_message {
  my ($fh) = @_;
  my $buf = '';
  while ($buf !~ /\n/) { sysread($fh, $buf, 65536, length($buf)) or return undef }
  my ($len, $rest) = $buf =~ /\A(\d+)\n(.*)\z/s or return undef;
  while (length($rest) < $len) { sysread($fh, $rest, $len - length($rest), length($rest)) or return undef }
  $rest;
}

# A spare: a supervisor with its pipes and its command's process, forked before any request and
# waiting for one, so that no fork lies on a command's path. One is kept ready (the next one is made
# when the main loop says); a request is written to both at once (each has its own pipe from here),
# so neither waits for the other to pass it on.
# $spare_due: when the next one is made at the latest (see the main loop); $spare_retry: not before
# (a fork that failed is tried again 100 ms later, not in a loop).
my ($spare, $spare_due, $spare_retry) = (undef, 0, 0);
sub make_spare {
  my $failed = sub { $spare_retry = now() + 0.1; return };
  pipe(my $req_r, my $req_w) && pipe(my $cmd_r, my $cmd_w) or return $failed->();
  my $pid = fork();
  return $failed->() unless defined $pid;
  if ($pid == 0) { close($_) for $req_w, $cmd_w; supervise($req_r, $cmd_r); POSIX::_exit(0) }
  close($_) for $req_r, $cmd_r;
  $spare = { pid => $pid, req => $req_w, cmd => $cmd_w };
}

# Writes a whole message; false if the reader is gone. The launcher's SIGCHLD (see the main loop)
# interrupts no write: one interrupted before its first byte is made again.
sub send_message {
  my ($fh, $msg) = @_;
  my $sent = 0;
  while ($sent < length($msg)) {
    my $n = syswrite($fh, $msg, length($msg) - $sent, $sent);
    if (!$n) { next if !defined $n && $! == 4; return 0 }
    $sent += $n;
  }
  1;
}

sub start {
  my ($payload) = @_;
  # The fields the server needs come first (forkserver.ts); the rest is for the supervisor and the command.
  my ($id, $mode, $budget, $uid) = $payload =~ /\Aid\0(\d+)\0mode\0(\w+)\0budget\0(\d+)\0(?:uid\0(\d+)\0)?/ or return;
  my ($nproc, $exact) = bound({ mode => [$mode], budget => [$budget], defined $uid ? (uid => [$uid]) : () });
  my $msg = message(join("\0", 'nproc', $nproc // '', 'exact', $exact, $payload));
  # A spare that died meanwhile (its pipes are closed) is replaced.
  for (1 .. 2) {
    make_spare() unless $spare;
    my $s = $spare or last;
    undef $spare;
    my $ok = send_message($s->{req}, $msg) && send_message($s->{cmd}, $msg);
    close($_) for $s->{req}, $s->{cmd};
    if (!$ok) { kill('KILL', $s->{pid}); next }
    $sup{$s->{pid}} = { id => $id };
    $spare_due = now() + 0.005;
    return;
  }
  report("F $id " . hexs("fork: $!"));
}

# Supervisors that ended are reaped; any other child is an orphan of one that died: killed with its own.
sub reap {
  while ((my $pid = waitpid(-1, 1)) > 0) {
    undef $spare if $spare && $pid == $spare->{pid};
    my $s = delete $sup{$pid} or next;
    report("D $s->{id}");
  }
  for my $pid (children($$)) { kill('KILL', $pid, descendants($pid)) unless $sup{$pid} || ($spare && $pid == $spare->{pid}) }
}

sub supervise {
  my ($req_r, $cmd_r) = @_;
  $0 = 'fileshed supervisor';
  # Set up before any request: anything failing here ends the spare, and the server makes another.
  syscall($NR{prctl}, 36, 1, 0, 0, 0) == 0 && syscall($NR{prctl}, 1, 15, 0, 0, 0) == 0 or POSIX::_exit(0);
  POSIX::_exit(0) if getppid() != $SERVER;
  my $dying = 0;
  $SIG{TERM} = sub { $dying = 1 };
  $SIG{CHLD} = 'DEFAULT';
  my ($out_r, $out_w, $err_r, $err_w, $st_r, $st_w, $ctl_r, $ctl_w);
  pipe($out_r, $out_w) && pipe($err_r, $err_w) && pipe($st_r, $st_w) && pipe($ctl_r, $ctl_w) or POSIX::_exit(0);
  my $child = fork();
  defined $child or POSIX::_exit(0);
  if ($child == 0) {
    # The command's process, waiting for its request: it dies with its supervisor.
    syscall($NR{prctl}, 1, 9, 0, 0, 0);
    close($req_r);
    prepare_command();
    my $q = parse(read_message($cmd_r) // POSIX::_exit(0));
    command($q, $out_w, $err_w, $st_w, one($q, 'nproc', '') eq '' ? undef : one($q, 'nproc'));
  }
  close($_) for $out_w, $err_w, $st_w, $cmd_r;
  my $request = read_message($req_r);
  if (!defined $request) { kill('KILL', $child); POSIX::_exit(0) }
  my $q = parse($request);
  my $exact = one($q, 'exact');
  my $id = one($q, 'id');
  my ($code, $why, $nice, $status, $acked) = (-1, '-', one($q, 'nice') + 0, '', 0);
  my $folders = (split(/ /, one($q, 'folders', ''), 2))[1];
  # Output that goes to files: no pipe to read.
  if (one($q, 'stdout') ne 'pipe') { close($out_r); undef $out_r }
  if (one($q, 'stderr') ne 'pipe') { close($err_r); undef $err_r }
  report(join(' ', 'S', $id, $$, (map { defined $_ ? fileno($_) : '-' } $out_r, $err_r), fileno($ctl_w)));

  my $exited = 0;
  my $reap = sub { my $r; while (($r = waitpid(-1, 1)) > 0) { ($code, $exited) = ($?, 1) if $r == $child } $r };
  # Every process of the command: SIGKILLed and reaped (orphans come to this subreaper), until none is left.
  my $kill_all = sub {
    my $until = now() + 10;
    while (now() < $until) {
      my @d = descendants($$);
      kill('KILL', @d) if @d;
      last if $reap->() == -1;
      select(undef, undef, undef, 0.001);
    }
  };
  # Every process of the command at that nice value, and each session it made (one scheduling group each, never
  # the launcher's own): true once every such group is there too (see autogroup).
  my $grouped = 0;
  my $lower = sub {
    my ($mine, $sessions, $done) = (sid($$), 0, 1);
    for my $pid (descendants($$)) {
      setpriority(0, $pid, $nice) if getpriority(0, $pid) < $nice;
      my $sid = sid($pid);
      next if $sid < 0 || $sid == $mine;
      $sessions++;
      $done = 0 unless autogroup($pid, $nice);
    }
    $grouped = $sessions > 0 && $done;
  };
  my $stop_all = sub { my %seen; for (1 .. 100) { my @new = grep { !$seen{$_}++ } descendants($$); last unless @new; kill('STOP', @new) } };
  my $control = sub {
    my $n = sysread($ctl_r, my $m, 4096);
    if (!$n) { close($ctl_r); undef $ctl_r; $kill_all->() unless $exited; return }
    for (split(/\n/, $m)) {
      if ($_ eq 'O') { $acked = 1; close($_) for grep { defined } $ctl_w, $out_r, $err_r; undef $ctl_w }
      elsif ($_ eq 'K') { $kill_all->() }
      elsif ($_ eq 'S') { $stop_all->(); report("H $id") }
      elsif ($_ eq 'C') { kill('CONT', descendants($$)) }
      elsif (/^N(\d+)$/) { $nice = $1; $lower->() }
    }
  };
  my ($max_bytes, $max_entries, $watch) = split(/ /, one($q, 'watch', ''), 3);
  # Without an exact RLIMIT_NPROC (see bound), the command's tasks are counted here and it is stopped
  # past its budget: every 20 ms while it runs a few, every 5 ms once it runs more.
  my $max_tasks = $exact ? undef : one($q, 'budget') + 0;
  my $tasks = sub { my $n = 0; for (descendants($$)) { my @st = stat("/proc/$_/task") or next; $n += $st[3] - 2 } $n };
  # The anonymous memory its processes hold together (resident minus file-backed and shared pages),
  # checked every 20 ms when the request bounds it: RLIMIT_AS bounds each process alone.
  my $max_memory = one($q, 'memory');
  my $memory = sub { my $n = 0; for (descendants($$)) { open(my $f, '<', "/proc/$_/statm") or next; my @m = split(' ', scalar(<$f>) // ''); $n += $m[1] - $m[2] if @m > 2 } $n * $PAGE };
  my $pidfd = syscall($NR{pidfd_open}, $child, 0);
  # The command's priority: lowered here once it has run `nice_after` ms (a short command keeps the
  # server's), or checked from 20 ms on when its process lowered it itself (see command), so a short
  # command does not share the processors with its supervisor.
  my $after = one($q, 'nice_after', 0) / 1000;
  my ($next_watch, $next_count, $next_group, $next_memory) = (now() + 0.05, 0, now() + ($after > 0.02 ? $after : 0.02), 0);
  while (!$exited) {
    my $rin = '';
    vec($rin, fileno($ctl_r), 1) = 1 if $ctl_r;
    vec($rin, fileno($st_r), 1) = 1 if $st_r;
    vec($rin, $pidfd, 1) = 1 if $pidfd >= 0;
    my $wait = $pidfd < 0 ? 0.005 : 1;
    $wait = $next_watch - now() if $watch && $next_watch - now() < $wait;
    $wait = $next_count - now() if $max_tasks && $next_count - now() < $wait;
    $wait = $next_memory - now() if $max_memory && $next_memory - now() < $wait;
    $wait = $next_group - now() if !$grouped && $status =~ /^ok$/m && $next_group - now() < $wait;
    select(my $rout = $rin, undef, undef, $wait > 0 ? $wait : 0);
    if ($dying) { $why = 'launcher'; $kill_all->(); last }
    if ($st_r && vec($rout, fileno($st_r), 1)) {
      my $n = sysread($st_r, $status, 4096, length($status));
      if (!$n) { close($st_r); undef $st_r }
    }
    # Until the command's group has its priority (a change may have been refused for a while), and
    # again after a yield ordered while it was starting.
    if (!$grouped && $status =~ /^ok$/m && now() >= $next_group) { $lower->(); $next_group = now() + 0.02 }
    $control->() if $ctl_r && vec($rout, fileno($ctl_r), 1);
    $reap->();
    if ($watch && !$exited && now() >= $next_watch) {
      $next_watch = now() + 0.05;
      if (usage_over($watch, $max_bytes, $max_entries)) { $why = 'call_folders'; $kill_all->() }
    }
    if ($max_tasks && !$exited && now() >= $next_count) {
      my $n = $tasks->();
      $next_count = now() + ($n > 4 ? 0.005 : 0.02);
      if ($n > $max_tasks) { $why = 'processes'; $kill_all->() }
    }
    if ($max_memory && !$exited && now() >= $next_memory) {
      $next_memory = now() + 0.02;
      if ($memory->() > $max_memory) { $why = 'memory'; $kill_all->() }
    }
  }
  $kill_all->();
  if ($st_r) { while (sysread($st_r, $status, 4096, length($status))) {} }
  my $ru = "\0" x 144;
  syscall($NR{getrusage}, -1, $ru);
  my ($us, $uus, $ss, $sus, $rss) = unpack('q5', $ru);
  # The call's folders (the command's process made them, or took over an earlier call's): removed, or
  # kept for another call when the command left them exactly as made.
  # A script's code is ours, not the command's: gone before the folders are judged.
  unlink(one($q, 'file')) if defined $folders && defined one($q, 'file');
  my $kept = defined $folders && !$dying && pristine($folders, one($q, 'uid'), one($q, 'gid')) ? 1 : 0;
  remove_tree($folders) if defined $folders && !$kept;
  my ($exit, $sig) = $code == -1 ? (-1, 0) : $code & 127 ? (-1, $code & 127) : ($code >> 8, 0);
  report("E $id $exit $sig " . ($us * 1000000 + $uus) . ' ' . ($ss * 1000000 + $sus) . " $rss $why $kept " . hexs($status));
  my $until = now() + 10;
  while (!$acked && $ctl_r && !$dying && now() < $until) {
    my $rin = '';
    vec($rin, fileno($ctl_r), 1) = 1;
    $control->() if select(my $rout = $rin, undef, undef, 1) > 0;
  }
  POSIX::_exit(0);
}

# The call's folders exactly as made: ours, 0700, holding home/ and tmp/ (ours, 0700), both empty. For
# a command run as the caller's uid (see become): the root folder stays ours, 0711 (the command may not
# rename what is in it), home/ and tmp/ are the caller's (uid, gid), 0700.
sub pristine {
  my ($root, $uid, $gid) = @_;
  for my $dir ($root, "$root/home", "$root/tmp") {
    my @st = lstat($dir) or return 0;
    my ($mode, $owner, $group) = defined $uid && $dir ne $root ? (0700, $uid, $gid) : (defined $uid ? 0711 : 0700, $>, undef);
    return 0 unless -d _ && ($st[2] & 07777) == $mode && $st[4] == $owner && (!defined $group || $st[5] == $group);
    opendir(my $d, $dir) or return 0;
    my @in = sort grep { $_ ne '.' && $_ ne '..' } readdir($d);
    return 0 unless "@in" eq ($dir eq $root ? 'home tmp' : '');
  }
  1;
}

# Removes a folder and what is in it, even what the command left without permissions; follows no link.
sub remove_tree {
  my ($dir) = @_;
  chmod(0700, $dir);
  if (opendir(my $d, $dir)) {
    for my $e (readdir($d)) {
      next if $e eq '.' || $e eq '..';
      lstat("$dir/$e");
      -d _ ? remove_tree("$dir/$e") : unlink("$dir/$e");
    }
  }
  rmdir($dir);
}

# What the command's call folders hold: over the cap (bytes of apparent size, or entries)?
sub usage_over {
  my ($root, $max_bytes, $max_entries) = @_;
  my ($bytes, $entries, @todo) = (0, 0, $root);
  while (@todo) {
    my $dir = pop(@todo);
    opendir(my $d, $dir) or next;
    for my $e (readdir($d)) {
      next if $e eq '.' || $e eq '..';
      my @st = lstat("$dir/$e") or next;
      $bytes += $st[7];
      return 1 if ++$entries > $max_entries || $bytes > $max_bytes;
      push @todo, "$dir/$e" if -d _;
    }
  }
  0;
}

# What the command's process needs whatever its request, done while the spare waits for one (off the
# command's path): stdin /dev/null, its own session, signals as a program expects them, and the
# kernel's OOM killer taking it before the server or any other program. A failure ends the spare.
sub prepare_command {
  open(my $null, '<', '/dev/null') or POSIX::_exit(0);
  defined(POSIX::dup2(fileno($null), 0)) or POSIX::_exit(0);
  defined(POSIX::setsid()) or POSIX::_exit(0);
  $SIG{$_} = 'DEFAULT' for qw(INT HUP PIPE QUIT TERM CHLD USR1 USR2 ALRM);
  POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new()) or POSIX::_exit(0);
  if (open(my $oom, '>', '/proc/self/oom_score_adj')) { print $oom "1000\n"; close($oom) }
}

# The command's own process: never returns.
sub command {
  my ($q, $out_w, $err_w, $st_w, $nproc) = @_;
  ($STATUS, $EXIT) = ($st_w, \&POSIX::_exit);
  my @keep;
  my $target = sub {
    my ($spec, $pipe) = @_;
    return fileno($pipe) if $spec eq 'pipe';
    $spec =~ /^fd:(\d+)$/ or fail("output $spec");
    sysopen(my $f, "/proc/$NODE/fd/$1", 1 | 02000000) or fail('output file');
    push @keep, $f;
    fileno($f);
  };
  defined(POSIX::dup2($target->(one($q, 'stdout'), $out_w), 1)) or fail('stdout');
  my $se = one($q, 'stderr');
  defined(POSIX::dup2($se eq 'merge' ? 1 : $target->($se, $err_w), 2)) or fail('stderr');
  defined(POSIX::dup2(fileno($st_w), 3)) or fail('status');
  open($STATUS, '>&=', 3) or fail('status');
  # Nothing else reaches the program: every other descriptor (the launcher's, and any the server
  # inherited without close-on-exec) closes at exec.
  syscall($NR{close_range}, 4, 0xffffffff, 4) == 0 or fail('close_range');
  # The call's own folders (landlock and validated modes): an earlier call's if still exactly as made,
  # else made new.
  my ($reused, $folders) = split(/ /, one($q, 'folders', ''), 2);
  my ($uid, $gid) = (one($q, 'uid'), one($q, 'gid'));
  if (defined $folders && !($reused && pristine($folders, $uid, $gid))) {
    remove_tree($folders) if $reused;
    mkdir($folders, 0700) && mkdir("$folders/home", 0700) && mkdir("$folders/tmp", 0700) or fail('call folders');
    if (defined $uid) {
      chown($uid + 0, $gid + 0, "$folders/home", "$folders/tmp") == 2 && chmod(0711, $folders) or fail('call folders');
    }
  }
  chdir(one($q, 'cwd')) or fail('chdir');
  %ENV = map { split(/=/, $_, 2) } @{$q->{env} // []};
  # Its priority, and its session's scheduling group's, when it applies from the start (near the
  # quota), while it may still have CAP_SYS_ADMIN (the group's change is rate-limited without it: then
  # its supervisor sees to it). Otherwise the supervisor lowers it once the command has run a while.
  my $nice = one($q, 'nice') + 0;
  if (!one($q, 'nice_after', 0)) {
    setpriority(0, 0, $nice) if getpriority(0, 0) < $nice;
    autogroup('self', $nice);
  }
  # The caller's own identity, from here on (bubblewrap then runs unprivileged as that uid). The
  # kernel clears the parent death signal when the uid changes: set again.
  become($q);
  syscall($NR{prctl}, 1, 9, 0, 0, 0) == 0 or fail('parent death signal');
  # A script's code (landlock and validated modes): in its own call folder, before the file size limit.
  place_file($q) unless one($q, 'mode') eq 'bwrap';
  my %c = map { $_ => $q->{$_} } grep { defined $q->{$_} } qw(abi fs net scoped rule bpf tmpfs mkdir noexec file filedata);
  for (@{$q->{limit} // []}) {
    my ($res, $value) = split(/ /, $_);
    # bwrap mode with a script: the inner launcher writes its code first, then sets the file size limit.
    if ($res == 1 && defined $c{file} && one($q, 'mode') eq 'bwrap') { $c{fsize} = [$value]; next }
    setlimit($res, $value);
  }
  $c{nproc} = [$nproc] if defined $nproc;
  my @argv = @{$q->{argv}};
  if (one($q, 'mode') eq 'bwrap') {
    fcntl($STATUS, 2, 0) or fail('status');
    my @inner = map { my $k = $_; map { ($k, $_) } @{$c{$k}} } sort keys %c;
    push @inner, map { ('nr', "$_=$NR{$_}") } sort keys %NR;
    my @bwrap = @{$q->{bwrap}};
    exec { $bwrap[0] } @bwrap, '--', $H{perl}, '-e', $INNER, @inner, '--', @argv;
    fail("exec $bwrap[0]");
  }
  confine(\%c);
  fcntl($STATUS, 2, 1) or fail('status');
  syswrite($STATUS, "ok\n");
  exec { $argv[0] } @argv;
  fail("exec $argv[0]");
}

# The next spare is made once the command just started has ended (its supervisor's SIGCHLD ends the
# wait), or 5 ms after it started, whichever comes first: forking the next spare while a short
# command starts would take a processor from it (on two cores, a third of a call). A request that
# finds no spare forks one then.
$SIG{CHLD} = sub {};
make_spare();
while (1) {
  my $rin = '';
  vec($rin, 0, 1) = 1;
  my $wait = %sup ? 0.25 : 1;
  if (!$spare) {
    my $at = %sup && $spare_due > $spare_retry ? $spare_due : $spare_retry;
    $wait = $at - now() if $at - now() < $wait;
  }
  if (select(my $rout = $rin, undef, undef, $wait > 0 ? $wait : 0) > 0) {
    my $n = sysread(STDIN, $buf, 1 << 16, length($buf));
    last if defined $n ? $n == 0 : $! != 4;
    while ($buf =~ /\A(\d+)\n/ && length($buf) >= length($1) + 1 + $1) {
      my $len = $1;
      my $payload = substr($buf, length($len) + 1, $len);
      substr($buf, 0, length($len) + 1 + $len) = '';
      start($payload);
    }
  }
  reap();
  make_spare() if !$spare && now() >= $spare_retry && (!%sup || now() >= $spare_due);
}
# Node is gone: so are the call folders it kept (its supervisors remove the ones in use).
{
  my $prefix = pack('H*', $H{folders});
  my ($dir, $name) = $prefix =~ m{\A(.*)/([^/]*)\z}s;
  if (defined $dir && opendir(my $d, $dir)) { for (readdir($d)) { remove_tree("$dir/$_") if index($_, $name) == 0 } }
}
POSIX::_exit(0);
