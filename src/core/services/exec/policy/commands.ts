/**
 * Which programs may run, per zone, and where to get a missing one. Based on the Python original's
 * lists (reference section 3.5) with deliberate removals: chmod (permissions), rename (Debian's is
 * Perl's file-rename: its argument is Perl code that can run programs).
 */

const READONLY_LIST = `
cat head tail less more nl wc stat file du tac
ls tree find
grep egrep fgrep rg awk gawk mawk sed
sort uniq cut paste tr fold fmt column rev shuf expand unexpand pr join
diff diff3 cmp comm
tar unzip zipinfo 7z
zcat bzcat xzcat
md5sum sha1sum sha256sum sha512sum b2sum cksum
base32 base64 basenc
strings od hexdump xxd
jq xmllint yq
iconv
bc dc expr factor numfmt
basename dirname realpath
echo printf
ffprobe identify exiftool
sqlite3`;

const WRITE_EXTRA = `
df locate which whereis
split csplit
sdiff patch colordiff
zip 7za
gzip gunzip bzip2 bunzip2 xz unxz lz4 zstd
sum
uuencode uudecode
touch mkdir rm rmdir mv cp truncate mktemp install shred
pandoc dos2unix unix2dos recode
seq date cal readlink pathchk pwd uname nproc sleep yes tee gettext tsort true false
ffmpeg magick convert
git`;

const words = (text: string) => text.split(/\s+/).filter(Boolean);

export const READONLY_COMMANDS: ReadonlySet<string> = new Set(words(READONLY_LIST));
export const READWRITE_COMMANDS: ReadonlySet<string> = new Set([...READONLY_COMMANDS, ...words(WRITE_EXTRA)]);
/** Handled by network_mode before the whitelists (as the original), in any zone. */
/**
 * Programs that write nothing but their standard output, except through the options or operands the
 * policy names as outputs (refused in a read-only zone): run without the call lock when they only
 * read (execute.ts, executeReading). Not the ones with a language that can write a file the policy
 * does not see (awk's `print >`, sed's `w`, sqlite3, find's -fprint), nor archivers and git.
 */
export const PURE_READERS: ReadonlySet<string> = new Set(
  words(`
cat head tail nl wc stat file du tac ls tree grep egrep fgrep rg
sort uniq cut paste tr fold fmt column rev shuf expand unexpand pr join diff cmp comm zipinfo
md5sum sha1sum sha256sum sha512sum b2sum cksum base32 base64 basenc strings od hexdump xxd
jq iconv expr factor numfmt basename dirname realpath echo printf
`),
);

export const DOWNLOADERS: ReadonlySet<string> = new Set(['curl', 'wget']);

/** Refused whatever the zone: shells, interpreters, privilege, process and system control. */
export const BLACKLIST: ReadonlySet<string> = new Set(
  words(`bash sh zsh fish dash csh tcsh ksh busybox python python2 python3 perl ruby node nodejs deno bun php lua tclsh wish
  exec eval source env xargs timeout nohup disown setsid nice ionice chroot unshare nsenter screen tmux at batch crontab
  sudo su doas pkexec chown chgrp chmod chattr ln rename fetch ssh scp sftp rsync nc netcat ncat socat telnet ftp ping
  traceroute dd mount umount kill killall pkill reboot shutdown halt poweroff systemctl service mkfs fdisk parted
  iptables nft firewall-cmd gdb strace ltrace vim vi nano emacs ed ex`),
);

/** Debian package that provides a command, for COMMAND_NOT_FOUND hints. */
const PACKAGES: Record<string, string> = {
  rg: 'ripgrep', '7z': 'p7zip-full', '7za': 'p7zip-full', xmllint: 'libxml2-utils', pandoc: 'pandoc', ffmpeg: 'ffmpeg',
  ffprobe: 'ffmpeg', identify: 'imagemagick', convert: 'imagemagick', magick: 'imagemagick (IM7; Debian 12 ships IM6 only)',
  exiftool: 'libimage-exiftool-perl', dos2unix: 'dos2unix', unix2dos: 'dos2unix', tree: 'tree', jq: 'jq', yq: 'yq',
  sqlite3: 'sqlite3', zip: 'zip', unzip: 'unzip', zipinfo: 'unzip', file: 'file', xxd: 'xxd', hexdump: 'bsdextrautils',
  column: 'bsdextrautils', colordiff: 'colordiff', recode: 'recode', uuencode: 'sharutils', uudecode: 'sharutils',
  lz4: 'lz4', zstd: 'zstd', bc: 'bc', dc: 'dc', git: 'git', curl: 'curl', wget: 'wget', locate: 'plocate',
  gettext: 'gettext-base', gawk: 'gawk', mawk: 'mawk', strings: 'binutils', patch: 'patch', less: 'less',
  cal: 'ncal', more: 'util-linux',
};

export function packageFor(cmd: string): string {
  return PACKAGES[cmd] ?? 'coreutils';
}

/** Commands that accept URLs (and so may use the network) when network_mode allows it. */
export const MEDIA_NETWORK: ReadonlySet<string> = new Set(['ffmpeg', 'ffprobe', 'pandoc', 'magick', 'convert', 'identify']);
