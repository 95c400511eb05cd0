/**
 * Per-command argument rules, as data. The policy engine (policy.ts) parses every argument list
 * the way the program's own option parser would (short clusters like -rt/dir, --long=value and
 * unambiguous --long prefixes, find/sqlite3-style -word options) and consults these rules for what
 * is specific to a program: which options take a value (and whether that value is text, a path or
 * program text), which options run programs or reach other files, and which arguments are program
 * text rather than paths.
 *
 * Getting "takes a value" right matters: an option wrongly listed as taking a value would hide the
 * next argument from the path checks (`column -t /etc/passwd`), so only options whose value is
 * required are listed; options with an optional value (grep --color[=WHEN]) are not.
 *
 * Every option of every whitelisted command was audited against its manual; the counts per command
 * and what the audit changed are in OPTIONS-AUDIT.md beside this file.
 */

export type ScriptLanguage = 'sed' | 'awk' | 'dc' | 'sqlite3' | 'jq';

export interface CommandRule {
  /** Leading positional arguments that are program text or patterns, not paths ('all': every one). */
  textPositionals?: number | 'all';
  /** Positionals before this index are paths even when textPositionals is 'all' (sqlite3's database). */
  textFrom?: number;
  /** Options whose (required) value, attached or the next argument, is text, not a path. */
  textOptions?: readonly string[];
  /** Options whose (required) value, attached or the next argument, is a file or folder: checked like a path. */
  pathOptions?: readonly string[];
  /**
   * Options whose (required) value names a file or folder the command WRITES (sort -o, tar
   * --index-file, zstd --output-dir-flat): checked like a path, and refused in read-only contexts.
   */
  outputOptions?: readonly string[];
  /**
   * Options whose (required) value becomes part of an output file's name (csplit -b suffix format,
   * split --additional-suffix, backup suffixes): the name is prefix + value, so a value holding a
   * slash would be a path of its own (`-b '/../../x%02d'`). Refused when it holds a slash.
   */
  nameOptions?: readonly string[];
  /**
   * Positional operands from this index on are files the command writes (uniq IN OUT, xxd IN OUT,
   * split FILE PREFIX, tee FILE...). `-` counts as an operand (standard input). Refused in read-only contexts.
   */
  outputOperands?: number;
  /** Options followed by two text values (jq --arg NAME VALUE). */
  pairOptions?: readonly string[];
  /**
   * Options whose value supplies the program text (scanned when `script` is set); when present, no
   * positional is program text. An option also listed in pathOptions names a program file (grep -f).
   */
  scriptOptions?: readonly string[];
  /** Options after which no positional is program text (rg --files lists files, it has no pattern). */
  noScriptWith?: readonly string[];
  /** Options refused in every zone and mode (they run programs or reach outside the zone). */
  forbid?: readonly string[];
  /** Short option letters refused wherever they appear in a cluster (tar -xPf). */
  forbidLetters?: string;
  /** Options refused in read-only zones (they write). */
  forbidReadonly?: readonly string[];
  /** Options refused in network_mode "safe" (they send data instead of downloading). */
  forbidNetworkSafe?: readonly string[];
  /** Options that follow symbolic links: refused without the sandbox, where a link could lead outside. */
  dereference?: readonly string[];
  /** Options that read a list of file names from a file: refused without the sandbox (the names are unchecked). */
  listsFiles?: readonly string[];
  /** Options are whole words after one dash (find -name, sqlite3 -separator): no clusters, no attached values. */
  wordOptions?: boolean;
  /** `--word` means the same as `-word` (sqlite3). */
  doubleDashWords?: boolean;
  /**
   * The first argument may be an old-style option cluster without a dash (tar czf out.tgz dir): its
   * letters are options, and these letters take their values from the following arguments in order.
   * The policy rewrites it into ordinary options (-c -z -f out.tgz dir) before checking and running.
   */
  oldStyleFirst?: string;
  /** `@file` (alone, or after `=` in a value) names a file whose content is used: the file is checked like a path. */
  atFiles?: boolean;
  /** Scanner for program text (positional or from scriptOptions). */
  script?: ScriptLanguage;
  /** Shell metacharacters are meaningful in this command's own language (patterns, programs, formats). */
  textLanguage?: boolean;
  /** Arguments placed before the user's (e.g. tar --force-local, curl -q). */
  prefixArgs?: readonly string[];
  /** Can create symbolic links (archives, cp/mv of relative links, patch, git checkouts): outward links are removed afterwards. */
  makesLinks?: boolean;
  /**
   * Follows links it meets while walking or extracting (zip, diff -r, tar and unzip writing into a
   * linked folder): without the sandbox, outward links are removed before it runs.
   */
  followsLinks?: boolean;
  /**
   * Runs only inside the bubblewrap sandbox: its input files or its home-folder configuration can
   * name other files or programs (media playlists, SVG links, LaTeX, lua, config files), which no
   * argument check can see. The text says why.
   */
  sandboxOnly?: string;
  /** A refusal reason for this argument list in any zone (what options alone cannot express). */
  check?: (args: readonly string[]) => string | undefined;
  /** In read-only zones: the reason this call would write, if it would (forms options alone don't show). */
  readonlyCheck?: (args: readonly string[]) => string | undefined;
  /** Arguments added in read-only zones (e.g. sqlite3 -readonly). */
  readonlyPrefix?: readonly string[];
}

const positionals = (args: readonly string[]) => args.filter((a) => !a.startsWith('-'));

/** Positionals that are not the separate value of one of `valued` (e.g. dc's files beside -e EXPR). */
function filesBesideValues(args: readonly string[], valued: readonly string[]): string[] {
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (valued.includes(a)) i++;
    else if (!a.startsWith('-') || a === '-') files.push(a);
  }
  return files;
}

const GREP: CommandRule = {
  textPositionals: 1,
  scriptOptions: ['-e', '--regexp', '-f', '--file'],
  pathOptions: ['-f', '--file', '--exclude-from'],
  textOptions: ['--include', '--exclude', '--exclude-dir', '--label', '-m', '--max-count', '-A', '-B', '-C', '--context', '--after-context', '--before-context', '-d', '--directories', '-D', '--devices', '--binary-files', '--group-separator'],
  dereference: ['-R', '--dereference-recursive'],
  textLanguage: true,
};
const AWK: CommandRule = {
  textPositionals: 1,
  scriptOptions: ['-e', '--source'],
  textOptions: ['-F', '--field-separator', '-v', '--assign'],
  // -W (mawk) and --exec/-E/-f (gawk) read the program from a file the scanner cannot see; -l/-i load code;
  // -D/--debug reads debugger commands (which can write files: dump, save) from a file.
  forbid: ['-f', '--file', '-E', '--exec', '-l', '--load', '-i', '--include', '-W', '-D', '--debug'],
  // gawk -d[FILE] -p[FILE] -o[FILE] write awkvars.out / awkprof.out or the attached FILE (checked as a path).
  forbidReadonly: ['-d', '--dump-variables', '-p', '--profile', '-o', '--pretty-print'],
  script: 'awk',
  textLanguage: true,
};
const JQ: CommandRule = {
  textPositionals: 1,
  textOptions: ['--indent'],
  pairOptions: ['--arg', '--argjson'],
  forbid: ['--rawfile', '--slurpfile', '-L', '--from-file', '-f'],
  script: 'jq',
  textLanguage: true,
};
const CHECKSUM: CommandRule = { listsFiles: ['-c', '--check'] };
const MEDIA = 'media tools follow references inside their input files (playlists, concat lists, SVG or HTML links) and read configuration that can run programs';

export const RULES: Readonly<Record<string, CommandRule>> = {
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  rg: {
    ...GREP,
    pathOptions: ['-f', '--file', '--ignore-file'],
    forbid: ['--pre', '--pre-glob', '--search-zip', '-z', '--hostname-bin'],
    textOptions: [...(GREP.textOptions ?? []), '-g', '--glob', '--iglob', '-t', '--type', '-T', '--type-not', '-r', '--replace', '-M', '--max-columns', '-j', '--threads', '--sort', '--sortr', '-E', '--encoding', '--type-add'],
    noScriptWith: ['--files', '--type-list'],
    dereference: ['-L', '--follow'],
  },
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  sed: {
    textPositionals: 1,
    scriptOptions: ['-e', '--expression'],
    textOptions: ['-l', '--line-length'],
    forbid: ['-f', '--file'],
    forbidReadonly: ['-i', '--in-place'],
    script: 'sed',
    textLanguage: true,
  },
  jq: JQ,
  yq: { ...JQ, textOptions: [...(JQ.textOptions ?? []), '-w', '--width', '--yaml-output-grammar-version', '--yml-out-ver'], forbidReadonly: ['-i', '--in-place'] },
  xmllint: {
    textOptions: ['--xpath', '--encode', '--pattern', '--maxmem'],
    // External entities, DTDs, XInclude and catalogs make libxml2 open other files or URLs.
    forbid: ['--output', '-o', '--shell', '--dtdvalid', '--dtdvalidfpi', '--path', '--load-trace', '--noent', '--xinclude', '--loaddtd', '--dtdattr', '--valid', '--postvalid', '--catalogs', '--relaxng', '--schema', '--schematron', '--huge'],
    prefixArgs: ['--nonet'],
    textLanguage: true,
  },
  find: {
    wordOptions: true,
    textOptions: ['-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-lname', '-ilname', '-type', '-xtype', '-size', '-printf', '-perm', '-user', '-group', '-uid', '-gid', '-mtime', '-mmin', '-atime', '-amin', '-ctime', '-cmin', '-maxdepth', '-mindepth', '-regextype', '-newermt', '-newerat', '-newerct', '-links', '-inum', '-used', '-fstype', '-context'],
    forbid: ['-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprint0', '-fprintf', '-fls'],
    forbidReadonly: ['-delete'],
    dereference: ['-L', '-follow'],
    listsFiles: ['-files0-from'],
    textLanguage: true,
  },
  tar: {
    forbid: ['--to-command', '-I', '--use-compress-program', '-P', '--absolute-names', '--checkpoint-action', '-F', '--info-script', '--new-volume-script', '--rsh-command', '--rmt-command', '--transform', '--xform', '--force-local'],
    forbidLetters: 'PIF',
    oldStyleFirst: 'bCfFgHIKLNTVX',
    // -N/--newer/--after-date/--newer-mtime/--mtime take DATE-OR-FILE: a value starting with / or . is a
    // file whose time is read, so each is a path (a date passes the path check unchanged).
    pathOptions: ['-f', '--file', '-C', '--directory', '-T', '--files-from', '-X', '--exclude-from', '-N', '--newer', '--after-date', '--newer-mtime', '--mtime', '--owner-map', '--group-map', '--add-file', '--exclude-ignore', '--exclude-ignore-recursive', '--exclude-tag', '--exclude-tag-all', '--exclude-tag-under'],
    // Written: the verbose listing, the volume number file, the incremental snapshot (-g is read and rewritten).
    outputOptions: ['--index-file', '--volno-file', '-g', '--listed-incremental'],
    // --suffix is the backup suffix appended to extracted file names.
    nameOptions: ['--suffix'],
    // --occurrence[=N], --checkpoint[=N], --one-top-level[=DIR] take optional values (attached only), --wildcards-match-slash none.
    textOptions: ['-b', '--blocking-factor', '-H', '--format', '-K', '--starting-file', '-V', '--label', '-L', '--tape-length', '--exclude', '--owner', '--group', '--mode', '--strip-components', '--record-size', '--quoting-style', '--sort', '--pax-option', '--quote-chars', '--no-quote-chars', '--hole-detection', '--sparse-version', '--xattrs-include', '--xattrs-exclude', '--exclude-vcs'],
    listsFiles: ['-T', '--files-from'],
    forbidReadonly: ['--extract', '--get', '--create', '--append', '--update', '--delete', '--catenate', '--concatenate'],
    // Old-style "xzf" and clusters like "-xzf": extraction or creation letters write.
    readonlyCheck: (args) => (args.some((a, i) => /^-?[A-Za-z]+$/.test(a) && (a.startsWith('-') || i === 0) && /[xcruA]/.test(a)) ? 'tar would extract or write an archive' : undefined),
    prefixArgs: ['--force-local', '--no-same-owner', '--no-same-permissions'],
    dereference: ['-h', '--dereference'],
    makesLinks: true,
  },
  unzip: {
    textOptions: ['-P'],
    outputOptions: ['-d'],
    // -: keeps ../ in member names (extraction above the target folder); -^ keeps control characters.
    forbid: ['-:', '-^'],
    forbidLetters: ':^',
    readonlyCheck: (args) => (args.some((a) => /^-[lvtpZzc]/.test(a)) ? undefined : 'unzip extracts unless -l (list), -v, -t (test), -p or -c (print) is given'),
    makesLinks: true,
  },
  zipinfo: {},
  zip: {
    followsLinks: true,
    forbid: ['-TT', '--unzip-command', '-T', '--test'],
    textOptions: ['-P', '--password', '-n', '--suffixes', '-t', '--from-date', '-tt', '--before-date'],
    outputOptions: ['-b', '--temp-path', '-O', '--output-file'],
  },
  '7z': {
    sandboxOnly: '7-Zip reads list files (@file) and archive links that argument checks cannot follow',
    makesLinks: true,
    readonlyCheck: (args) => (['l', 't', 'i', 'h'].includes(positionals(args)[0] ?? '') ? undefined : 'only 7z l (list) and t (test) leave files alone'),
  },
  '7za': { sandboxOnly: '7-Zip reads list files (@file) and archive links that argument checks cannot follow', makesLinks: true },
  sort: {
    forbid: ['--compress-program'],
    textOptions: ['-t', '--field-separator', '-k', '--key', '-S', '--buffer-size', '--parallel', '--batch-size'],
    pathOptions: ['--random-source'],
    outputOptions: ['-o', '--output', '-T', '--temporary-directory'],
    listsFiles: ['--files0-from'],
  },
  // split [FILE [PREFIX]]: the second operand is the output name prefix (a path).
  split: { forbid: ['--filter'], textOptions: ['-b', '--bytes', '-l', '--lines', '-n', '--number', '-a', '--suffix-length', '-C', '--line-bytes', '-t', '--separator'], nameOptions: ['--additional-suffix'], outputOperands: 1 },
  csplit: { textPositionals: 'all', textFrom: 1, textOptions: ['-n', '--digits'], outputOptions: ['-f', '--prefix'], nameOptions: ['-b', '--suffix-format'] },
  // uniq [INPUT [OUTPUT]]: `uniq - FILE` reads standard input and writes FILE.
  uniq: { textOptions: ['-f', '--skip-fields', '-s', '--skip-chars', '-w', '--check-chars'], outputOperands: 1 },
  shuf: { textOptions: ['-n', '--head-count', '-i', '--input-range'], pathOptions: ['--random-source'], outputOptions: ['-o', '--output'] },
  cut: { textOptions: ['-d', '--delimiter', '-f', '--fields', '-b', '--bytes', '-c', '--characters', '--output-delimiter'] },
  tr: { textPositionals: 'all', textLanguage: true },
  paste: { textOptions: ['-d', '--delimiters'] },
  join: { textOptions: ['-t', '-j', '-1', '-2', '-o', '-e', '-a', '-v'] },
  // -d (--table-noheadings) takes no value.
  column: { textOptions: ['-s', '--separator', '-o', '--output-separator', '-c', '--output-width', '-N', '--table-columns', '-R', '--table-right', '-E', '--table-noextreme', '-H', '--table-hide', '-W', '--table-wrap', '-T', '--table-truncate', '-n', '--table-name', '-O', '--table-order', '-l', '--table-columns-limit', '-r', '--tree', '-i', '--tree-id', '-p', '--tree-parent'] },
  fold: { textOptions: ['-w', '--width'] },
  fmt: { textOptions: ['-w', '--width', '-p', '--prefix', '-g', '--goal'] },
  // -s[CHAR], -S[STRING], -e -i -n take optional attached values only.
  pr: { textOptions: ['-h', '--header', '-w', '--width', '-l', '--length', '-W', '--page-width', '-o', '--indent', '-N', '--first-line-number', '--columns'] },
  nl: { textOptions: ['-s', '--number-separator', '-b', '--body-numbering', '-d', '--section-delimiter', '-f', '--footer-numbering', '-h', '--header-numbering', '-i', '--line-increment', '-l', '--join-blank-lines', '-n', '--number-format', '-v', '--starting-line-number', '-w', '--number-width'] },
  tac: { textOptions: ['-s', '--separator'] },
  expand: { textOptions: ['-t', '--tabs'] },
  unexpand: { textOptions: ['-t', '--tabs'] },
  numfmt: { textPositionals: 'all', textOptions: ['--to', '--from', '--format', '--suffix', '-d', '--delimiter', '--field', '--padding', '--round', '--from-unit', '--to-unit', '--invalid'] },
  echo: { textPositionals: 'all', textLanguage: true },
  printf: { textPositionals: 'all', textLanguage: true },
  expr: { textPositionals: 'all', textLanguage: true },
  factor: { textPositionals: 'all' },
  seq: { textPositionals: 'all', textOptions: ['-s', '--separator', '-f', '--format'] },
  bc: { textLanguage: true, forbid: ['-f', '--file'] },
  dc: {
    scriptOptions: ['-e', '--expression'],
    forbid: ['-f', '--file'],
    script: 'dc',
    textLanguage: true,
    // A positional is a program file the scanner cannot see.
    check: (args) => (filesBesideValues(args, ['-e', '--expression']).length > 0 ? 'dc runs program files, which cannot be checked; give the program with -e' : undefined),
  },
  date: {
    textPositionals: 'all',
    textOptions: ['-d', '--date', '--rfc-3339'],
    pathOptions: ['-f', '--file', '-r', '--reference'],
    forbid: ['-s', '--set'],
    textLanguage: true,
  },
  cal: { textPositionals: 'all' },
  sqlite3: {
    // The first positional is the database file; the rest are SQL or dot-commands.
    textFrom: 1,
    textPositionals: 'all',
    wordOptions: true,
    doubleDashWords: true,
    textOptions: ['-separator', '-newline', '-nullvalue', '-escape', '-mmap', '-maxsize'],
    forbid: ['-cmd', '-init', '-A', '-archive', '-append', '-deserialize', '-memtrace', '-safe-off', '-unsafe-testing', '-vfs', '-zip', '-lookaside', '-pagecache', '-heap', '-nonce', '-sorterref', '-multiplex', '-pcachetrace'],
    script: 'sqlite3',
    textLanguage: true,
    // -safe: no .shell/.system/.load/.output/ATTACH/readfile...; -init: never read the home folder's .sqliterc.
    prefixArgs: ['-safe', '-init', '/dev/null'],
    readonlyPrefix: ['-readonly'],
    // The CLI opens file: URIs, which name any file on the server.
    check: (args) => (positionals(args)[0]?.toLowerCase().startsWith('file:') ? 'sqlite3 would open a file: URI, which can name files outside the zone' : undefined),
  },
  cp: {
    forbid: ['-s', '--symbolic-link', '-l', '--link'],
    forbidLetters: 'sl',
    outputOptions: ['-t', '--target-directory'],
    nameOptions: ['-S', '--suffix'],
    dereference: ['-L', '--dereference', '-H'],
    makesLinks: true,
  },
  mv: { outputOptions: ['-t', '--target-directory'], nameOptions: ['-S', '--suffix'], makesLinks: true },
  install: { forbid: ['-m', '--mode', '-o', '--owner', '-g', '--group', '-s', '--strip', '--strip-program'], outputOptions: ['-t', '--target-directory'], nameOptions: ['-S', '--suffix'] },
  ls: { dereference: ['-L', '--dereference', '-H', '--dereference-command-line'], textOptions: ['-I', '--ignore', '--hide', '-w', '--width', '-T', '--tabsize', '--time-style', '--format', '--sort', '--time', '--block-size', '--quoting-style', '--indicator-style'] },
  du: { dereference: ['-L', '--dereference'], listsFiles: ['--files0-from'], textOptions: ['-d', '--max-depth', '-B', '--block-size', '-t', '--threshold', '--exclude', '--time-style', '--time'], pathOptions: ['-X', '--exclude-from'] },
  wc: { listsFiles: ['--files0-from'] },
  stat: { textOptions: ['-c', '--format', '--printf'], dereference: ['-L', '--dereference'] },
  file: { forbid: ['-m', '--magic-file', '-C', '--compile'], listsFiles: ['-f', '--files-from'], pathOptions: ['-f', '--files-from'], textOptions: ['-F', '--separator', '-e', '--exclude', '-P', '--parameter'], dereference: ['-L', '--dereference'] },
  // -R with -H writes 00Tree.html into every folder at the -L depth; --hintro/--houtro/--gitfile/--infofile read files.
  tree: { outputOptions: ['-o'], forbidReadonly: ['-R'], pathOptions: ['--gitfile', '--infofile', '--hintro', '--houtro'], textOptions: ['-P', '-I', '-L', '-H', '-T', '--charset', '--filelimit', '--timefmt', '--sort'], dereference: ['-l'], forbid: ['--fromfile'] },
  iconv: { textOptions: ['-f', '--from-code', '-t', '--to-code'], outputOptions: ['-o', '--output'] },
  touch: { textOptions: ['-d', '--date', '-t'], pathOptions: ['-r', '--reference'] },
  truncate: { textOptions: ['-s', '--size'], pathOptions: ['-r', '--reference'] },
  mktemp: { nameOptions: ['--suffix'], outputOptions: ['-p'] },
  head: { textOptions: ['-n', '--lines', '-c', '--bytes'] },
  tail: { textOptions: ['-n', '--lines', '-c', '--bytes', '-s', '--sleep-interval', '--pid', '--max-unchanged-stats'] },
  xxd: {
    textOptions: ['-c', '-g', '-l', '-s', '-o', '-n', '-cols', '-groupsize', '-len', '-seek', '-name'],
    forbidReadonly: ['-r', '-revert'],
    // xxd [INFILE [OUTFILE]]: `xxd - FILE` reads standard input and writes FILE.
    outputOperands: 1,
  },
  // -w[BYTES] and --width[=BYTES], --strings[=BYTES] take optional attached values only.
  od: { textOptions: ['-A', '--address-radix', '-t', '--format', '-j', '--skip-bytes', '-N', '--read-bytes', '-S', '--endian'] },
  hexdump: { textOptions: ['-e', '-n', '-s'], forbid: ['-f'] },
  // binutils reads options from @FILE arguments (response files): the file is checked like a path.
  strings: { atFiles: true, textOptions: ['-n', '--bytes', '-t', '--radix', '-e', '--encoding', '-s', '--output-separator', '-T', '--target'] },
  md5sum: CHECKSUM,
  sha1sum: CHECKSUM,
  sha256sum: CHECKSUM,
  sha512sum: CHECKSUM,
  b2sum: { ...CHECKSUM, textOptions: ['-l', '--length'] },
  cksum: { ...CHECKSUM, textOptions: ['-a', '--algorithm', '-l', '--length'] },
  uudecode: {
    outputOptions: ['-o', '--output-file'],
    // Without -o the output file is named inside the encoded data (any path on the server).
    check: (args) => (args.some((a) => /^-[A-Za-z]*o/.test(a) || a.startsWith('--output-file') || a.startsWith('--o')) ? undefined : 'uudecode without -o writes to the file named inside the encoded data; give the output file with -o'),
  },
  // The subcommand comes first, so git's global options (-c, -C, --git-dir) cannot be given at all; these are the
  // subcommand options that run programs or set configuration (git runs only in the sandbox anyway).
  git: { makesLinks: true, forbid: ['-c', '--config', '--config-env', '--exec-path', '--git-dir', '--work-tree', '--separate-git-dir', '--upload-pack', '--receive-pack', '--exec', '--template', '--ext-diff', '--textconv'], textLanguage: true, textPositionals: 'all' },
  pandoc: {
    sandboxOnly: 'pandoc reads files named inside documents (images, includes, LaTeX) and runs Lua from custom readers and writers',
    forbid: ['--filter', '-F', '--lua-filter', '-L', '--extract-media', '--pdf-engine', '--pdf-engine-opt', '--data-dir', '--resource-path', '--include-in-header', '-H', '--include-before-body', '-B', '--include-after-body', '-A', '--template', '--reference-doc', '-d', '--defaults', '--embed-resources', '--self-contained'],
    textOptions: ['-f', '--from', '-r', '--read', '-t', '--to', '-w', '--write', '-M', '--metadata', '-V', '--variable', '--toc-depth'],
  },
  ffmpeg: { sandboxOnly: MEDIA, wordOptions: true, forbid: ['-filter_complex_script', '-filter_script', '-dump_attachment', '-attach', '-report'], textOptions: ['-f', '-c', '-c:v', '-c:a', '-codec', '-vf', '-af', '-filter:v', '-filter:a', '-ss', '-t', '-to', '-r', '-b:v', '-b:a', '-s', '-ar', '-ac', '-q:v', '-q:a', '-crf', '-preset', '-map', '-metadata', '-loglevel', '-v'], textLanguage: true },
  ffprobe: { sandboxOnly: MEDIA, wordOptions: true, forbid: ['-report'], textOptions: ['-show_entries', '-of', '-print_format', '-select_streams', '-v', '-loglevel', '-f'] },
  convert: { sandboxOnly: MEDIA, wordOptions: true, forbid: ['-script', '-write'] },
  magick: { sandboxOnly: MEDIA, wordOptions: true, forbid: ['-script', '-write'] },
  identify: { sandboxOnly: MEDIA, wordOptions: true, textOptions: ['-format'] },
  exiftool: {
    sandboxOnly: 'exiftool runs Perl from ~/.ExifTool_config and copies tags from files named in its arguments (-TAG<=FILE)',
    wordOptions: true,
    forbid: ['-@', '-config', '-o', '-out', '-w', '-W', '-tagsFromFile'],
    textOptions: ['-p', '-d'],
    readonlyCheck: (args) => (args.some((a) => a.startsWith('-') && a.includes('=')) ? 'exiftool tag assignments rewrite the file' : undefined),
  },
  colordiff: { sandboxOnly: 'colordiff reads ~/.colordiffrc, which names the program it runs' },
  locate: { sandboxOnly: "locate searches the server's whole file list, not the zone" },
  less: { forbid: ['-k', '--lesskey-file', '-o', '--log-file', '-O', '--LOG-FILE', '--lesskey-src', '-T', '--tag-file'] },
  patch: {
    forbid: ['--merge', '-o', '--output', '-B', '--prefix', '-Y', '--basename-prefix', '-z', '--suffix', '-r', '--reject-file', '--follow-symlinks'],
    textOptions: ['-p', '--strip', '-F', '--fuzz', '-D', '--ifdef', '-V', '--version-control', '--quoting-style'],
    pathOptions: ['-i', '--input', '-d', '--directory'],
    // git-style patches can create symbolic links.
    makesLinks: true,
  },
  tee: { outputOperands: 0 },
  diff: {
    followsLinks: true,
    textOptions: ['-U', '-C', '--label', '-I', '--ignore-matching-lines', '-W', '--width', '--line-format', '--old-line-format', '--new-line-format', '--unchanged-line-format', '--old-group-format', '--new-group-format', '--changed-group-format', '--unchanged-group-format', '-F', '--show-function-line', '-D', '--ifdef', '--tabsize', '-x', '--exclude', '--horizon-lines', '--palette'],
    pathOptions: ['--to-file', '--from-file', '-X', '--exclude-from', '-S', '--starting-file'],
    // -U NUM and -C NUM need a value; --unified[=NUM] and --context[=NUM] only take an attached one.
    textLanguage: true,
  },
  diff3: { forbid: ['--diff-program'], textOptions: ['-L', '--label'] },
  sdiff: { forbid: ['-o', '--output', '--diff-program'], textOptions: ['-w', '--width', '-I', '--ignore-matching-lines', '--tabsize'] },
  more: {},
  base64: { textOptions: ['-w', '--wrap'] },
  base32: { textOptions: ['-w', '--wrap'] },
  basenc: { textOptions: ['-w', '--wrap'] },
  gzip: { nameOptions: ['-S', '--suffix'] },
  gunzip: { nameOptions: ['-S', '--suffix'] },
  xz: { nameOptions: ['-S', '--suffix'], textOptions: ['-T', '--threads', '-F', '--format', '-C', '--check', '-M', '--memlimit', '--memlimit-compress', '--memlimit-decompress', '--block-size', '--block-list', '--filters'], listsFiles: ['--files', '--files0'] },
  unxz: { nameOptions: ['-S', '--suffix'], listsFiles: ['--files', '--files0'] },
  zstd: { pathOptions: ['-D', '--patch-from'], outputOptions: ['-o', '--output-dir-flat', '--output-dir-mirror', '--trace'], listsFiles: ['--filelist'], textOptions: ['--maxdict', '--dictID', '--stream-size', '--size-hint', '--target-compressed-block-size', '--auto-threads', '--priority'] },
  // lz4 [IN [OUT]] writes its second operand (with -m every operand is an input).
  lz4: { pathOptions: ['-D', '--list'], outputOperands: 1 },
  curl: {
    textLanguage: true,
    atFiles: true,
    // -q (first) keeps curl from reading ~/.curlrc in the zone.
    prefixArgs: ['-q'],
    textOptions: ['-H', '--header', '-A', '--user-agent', '-e', '--referer', '-r', '--range', '-m', '--max-time', '--connect-timeout', '--retry', '-w', '--write-out', '-X', '--request', '-d', '--data', '--data-raw', '--data-binary', '--data-urlencode', '--data-ascii', '--json', '-F', '--form', '--form-string', '-u', '--user', '-x', '--proxy', '-U', '--proxy-user', '-z', '--time-cond', '-C', '--continue-at', '-Y', '--speed-limit', '-y', '--speed-time', '--limit-rate', '--max-filesize', '--max-redirs', '-Q', '--quote', '-P', '--ftp-port', '-t', '--telnet-option', '--retry-delay', '--retry-max-time', '--resolve', '--connect-to', '--proto', '--proto-redir'],
    pathOptions: ['-o', '--output', '--output-dir', '-T', '--upload-file', '-c', '--cookie-jar', '-b', '--cookie', '-D', '--dump-header', '--trace', '--trace-ascii', '--stderr', '--libcurl', '-E', '--cert', '--key', '--cacert', '--capath', '--netrc-file', '--etag-save', '--etag-compare', '--hsts', '--alt-svc'],
    forbid: ['-K', '--config', '--engine', '--unix-socket', '--abstract-unix-socket'],
    forbidNetworkSafe: ['-X', '--request', '-d', '--data', '--data-raw', '--data-binary', '--data-urlencode', '--data-ascii', '-F', '--form', '--form-string', '-T', '--upload-file', '--post301', '--post302', '--post303', '--json', '-u', '--user'],
  },
  wget: {
    textLanguage: true,
    // --no-config keeps wget from reading ~/.wgetrc in the zone.
    prefixArgs: ['--no-config'],
    textOptions: ['-U', '--user-agent', '--header', '-t', '--tries', '-T', '--timeout', '-l', '--level', '-w', '--wait', '-Q', '--quota', '--limit-rate', '-A', '--accept', '-R', '--reject', '-D', '--domains', '--user', '--password', '--method', '--post-data', '--body-data'],
    pathOptions: ['-O', '--output-document', '-P', '--directory-prefix', '--post-file', '--body-file', '--load-cookies', '--save-cookies', '--ca-certificate', '--certificate', '--private-key', '-a', '--append-output', '-o', '--output-file'],
    forbid: ['-e', '--execute', '--config', '-i', '--input-file', '--use-askpass', '-B', '--base'],
    forbidNetworkSafe: ['--post-data', '--post-file', '--body-data', '--body-file', '--method'],
  },
};

export function ruleFor(cmd: string): CommandRule {
  return RULES[cmd] ?? {};
}
