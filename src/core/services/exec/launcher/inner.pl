# Inside bubblewrap, after confine.pl: applies CONFINE and starts the program (see launcher-script.ts).
open($STATUS, '>&=', 3) or exit 125;
$EXIT = sub { exit $_[0] };
my %c;
while (@ARGV) { my $k = shift(@ARGV); last if $k eq '--'; push @{$c{$k}}, shift(@ARGV) }
%NR = map { split(/=/, $_, 2) } @{$c{nr} // []};
confine(\%c);
# A script's code goes to the /tmp mounted above; the file size limit waited for it (see command()).
place_file(\%c);
setlimit(1, one(\%c, 'fsize')) if defined one(\%c, 'fsize');
fcntl($STATUS, 2, 1);
syswrite($STATUS, "ok\n");
exec { $ARGV[0] } @ARGV;
fail("exec $ARGV[0]");
