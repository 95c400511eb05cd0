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

import type { Parsed } from './parsed.js';

export type ScriptLanguage = 'sed' | 'awk' | 'dc' | 'sqlite3' | 'jq';

export interface CommandRule {
  /** Leading positional arguments that are program text or patterns, not paths ('all': every one). */
  textPositionals?: number | 'all';
  /** Positionals before this index are paths even when textPositionals is 'all' (sqlite3's database). */
  textFrom?: number;
  /**
   * Options whose (required) value, attached or the next argument, is a plain value (a number, a
   * name, a charset, a date) the program does not document as a file. A program may still open
   * one as a file (iconv -f /x reads a charmap), so a value that could name a file outside the zone
   * (absolute, `..` above the root, a link leading out) is refused.
   */
  textOptions?: readonly string[];
  /**
   * Options whose (required) value is in the program's own language: a pattern, a glob, a format,
   * a header or text to print. Never a file name, never path-checked (grep -e '^/usr', find -path '/x/*').
   */
  patternOptions?: readonly string[];
  /**
   * Options whose value is optional and can only be attached (--time[=WORD], -d[FILE]): the next
   * argument is never theirs. An attached value is checked as a path (it often is one).
   */
  optionalOptions?: readonly string[];
  /**
   * Long options without a value that are a prefix of a longer valued one (tar --exclude-vcs, du
   * --time): getopt takes the exact name, so the model must know them to resolve abbreviations.
   */
  flagOptions?: readonly string[];
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
  /** A grammar of the program's own (see parse.ts): Info-ZIP's (unzip, zipinfo), or one option per argument named by its first letter (xxd). */
  parser?: 'unzip' | 'letter';
  /** Options end at the first operand (POSIX order: awk's program text, tr's sets); the rest are operands even if they start with `-`. */
  posix?: boolean;
  /** `--` does not end the options: it is skipped and what follows is still parsed as options (find). */
  dashDash?: 'ignored';
  /** The operands are names inside an archive (tar -x/-t), not files of the zone: not expanded as globs (still path-checked). */
  members?: (parsed: Parsed) => boolean;
  /** Standalone shell operators (`|`, `>`, `&`) are operands of the program's own language (expr, tr). */
  operatorOperands?: boolean;
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
  /**
   * An argument `@FILE` is a response file: the program reads more arguments from it (binutils'
   * expandargv, any argument, option values included). Their names cannot be checked as text: refused
   * in validated mode (the kernel modes confine what they name).
   */
  responseFiles?: boolean;
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
  /** A refusal reason for this argument list in any zone (what options alone cannot express), judged on the engine's parse. */
  check?: (parsed: Parsed) => string | undefined;
  /** In read-only zones: the reason this call would write, if it would, judged on the engine's parse. */
  readonlyCheck?: (parsed: Parsed) => string | undefined;
  /** Arguments added in read-only zones (e.g. sqlite3 -readonly). */
  readonlyPrefix?: readonly string[];
}

const has = (parsed: Parsed, ...names: string[]) => parsed.options.some((o) => names.includes(o.name));

const GREP: CommandRule = {
  textPositionals: 1,
  scriptOptions: ['-e', '--regexp', '-f', '--file'],
  pathOptions: ['-f', '--file', '--exclude-from'],
  patternOptions: ['--include', '--exclude', '--exclude-dir', '--label', '--group-separator'],
  textOptions: ['-m', '--max-count', '-A', '-B', '-C', '--context', '--after-context', '--before-context', '-d', '--directories', '-D', '--devices', '--binary-files'],
  // --binary takes no value; getopt matches it exactly before --binary-files.
  flagOptions: ['--binary'],
  dereference: ['-R', '--dereference-recursive'],
  textLanguage: true,
};
const AWK: CommandRule = {
  textPositionals: 1,
  scriptOptions: ['-e', '--source'],
  patternOptions: ['-F', '--field-separator', '-v', '--assign'],
  // gawk -d[FILE], -p[FILE], -o[FILE], -L[fatal|invalid|no-ext], -D[FILE]: optional values, attached only.
  optionalOptions: ['-d', '--dump-variables', '-p', '--profile', '-o', '--pretty-print', '-L', '--lint', '-D', '--debug'],
  // Options end at the program text: what follows it is an input file or an assignment, even `-F /x`.
  posix: true,
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
const GZIP: CommandRule = { nameOptions: ['-S', '--suffix'] };
// --files[=FILE] and --files0[=FILE] read the names to work on from a file (standard input without one).
const XZ: CommandRule = {
  nameOptions: ['-S', '--suffix'],
  textOptions: ['-T', '--threads', '-F', '--format', '-C', '--check', '-M', '--memlimit', '--memlimit-compress', '--memlimit-decompress', '--memlimit-mt-decompress', '--flush-timeout', '--block-size', '--block-list', '--filters', '--filters1', '--filters2', '--filters3', '--filters4', '--filters5', '--filters6', '--filters7', '--filters8', '--filters9', '--filters-help'],
  optionalOptions: ['--files', '--files0', '-H', '--long-help'],
  listsFiles: ['--files', '--files0'],
};
const MEDIA = 'media tools follow references inside their input files (playlists, concat lists, SVG or HTML links) and read configuration that can run programs';

export const RULES: Readonly<Record<string, CommandRule>> = {
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  rg: {
    ...GREP,
    pathOptions: ['-f', '--file', '--ignore-file'],
    forbid: ['--pre', '--pre-glob', '--search-zip', '-z', '--hostname-bin'],
    patternOptions: [...(GREP.patternOptions ?? []), '-g', '--glob', '--iglob', '-r', '--replace', '--type-add'],
    textOptions: [...(GREP.textOptions ?? []), '-t', '--type', '-T', '--type-not', '-M', '--max-columns', '-j', '--threads', '--sort', '--sortr', '-E', '--encoding'],
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
    // -i[SUFFIX]: the backup suffix is optional and attached only.
    optionalOptions: ['-i', '--in-place'],
    forbid: ['-f', '--file'],
    forbidReadonly: ['-i', '--in-place'],
    script: 'sed',
    textLanguage: true,
  },
  jq: JQ,
  yq: { ...JQ, textOptions: [...(JQ.textOptions ?? []), '-w', '--width', '--yaml-output-grammar-version', '--yml-out-ver'], forbidReadonly: ['-i', '--in-place'] },
  xmllint: {
    patternOptions: ['--xpath', '--pattern'],
    textOptions: ['--encode', '--maxmem'],
    // External entities, DTDs, XInclude and catalogs make libxml2 open other files or URLs.
    forbid: ['--output', '-o', '--shell', '--dtdvalid', '--dtdvalidfpi', '--path', '--load-trace', '--noent', '--xinclude', '--loaddtd', '--dtdattr', '--valid', '--postvalid', '--catalogs', '--relaxng', '--schema', '--schematron', '--huge'],
    prefixArgs: ['--nonet'],
    textLanguage: true,
  },
  find: {
    wordOptions: true,
    // -perm /MODE means "any of these bits", not a path.
    patternOptions: ['-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-lname', '-ilname', '-printf', '-context', '-perm'],
    textOptions: ['-type', '-xtype', '-size', '-user', '-group', '-uid', '-gid', '-mtime', '-mmin', '-atime', '-amin', '-ctime', '-cmin', '-maxdepth', '-mindepth', '-regextype', '-newermt', '-newerat', '-newerct', '-newerBt', '-links', '-inum', '-used', '-fstype', '-D'],
    // Tests comparing with another file's times or identity.
    pathOptions: ['-newer', '-anewer', '-cnewer', '-samefile', '-files0-from', '-neweraa', '-newerac', '-neweram', '-newerca', '-newercc', '-newercm', '-newerma', '-newermc', '-newermm', '-newerBa', '-newerBc', '-newerBm', '-newerBB', '-newerab', '-newercb', '-newermb'],
    forbid: ['-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprint0', '-fprintf', '-fls'],
    // find reads `--` only to end its leading options (-H -L -P -D -O); tests and actions after it are still expression words.
    dashDash: 'ignored',
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
    patternOptions: ['-K', '--starting-file', '-V', '--label', '--exclude', '--pax-option', '--quote-chars', '--no-quote-chars', '--xattrs-include', '--xattrs-exclude'],
    textOptions: ['-b', '--blocking-factor', '-H', '--format', '-L', '--tape-length', '--owner', '--group', '--mode', '--strip-components', '--record-size', '--quoting-style', '--sort', '--hole-detection', '--sparse-version', '--level', '--warning'],
    optionalOptions: ['--atime-preserve', '--backup', '--checkpoint', '--occurrence', '--one-top-level', '--totals'],
    // Flags that are prefixes of valued options: getopt matches them exactly.
    flagOptions: ['--exclude-vcs', '--exclude-vcs-ignores', '--list', '--sparse', '--xattrs', '--exclude-caches', '--exclude-caches-all', '--exclude-caches-under'],
    listsFiles: ['-T', '--files-from'],
    forbidReadonly: ['--extract', '--get', '--create', '--append', '--update', '--delete', '--catenate', '--concatenate'],
    // Old-style "xzf" and clusters like "-xzf": extraction or creation letters write.
    readonlyCheck: (p) => (has(p, ...TAR_WRITES) ? 'tar would extract or write an archive' : undefined),
    // Extracting, listing, comparing and deleting name members of the archive; creating, appending and updating name files.
    members: (p) => !has(p, '-c', '--create', '-r', '--append', '-u', '--update', '-A', '--catenate', '--concatenate'),
    prefixArgs: ['--force-local', '--no-same-owner', '--no-same-permissions'],
    dereference: ['-h', '--dereference'],
    makesLinks: true,
  },
  unzip: {
    parser: 'unzip',
    patternOptions: ['-P'],
    // Debian's unzip: -O and -I name the character set of member names.
    textOptions: ['-O', '-I'],
    outputOptions: ['-d'],
    // -: keeps ../ in member names (extraction above the target folder); -^ keeps control characters.
    forbid: ['-:', '-^'],
    forbidLetters: ':^',
    // -T sets the archive's time to its newest member's.
    forbidReadonly: ['-T'],
    readonlyCheck: unzipWrites,
    makesLinks: true,
  },
  // zipinfo reads the same grammar (-d DIR after the archive is read and ignored).
  zipinfo: { parser: 'unzip', outputOptions: ['-d'] },
  zip: {
    followsLinks: true,
    forbid: ['-TT', '--unzip-command', '-T', '--test'],
    // -x and -i start lists of name patterns (inside the archive), which is what their values are.
    patternOptions: ['-P', '--password', '-n', '--suffixes', '-x', '--exclude', '-i', '--include'],
    textOptions: ['-t', '--from-date', '-tt', '--before-date', '-Z', '--compression-method', '-s', '--split-size'],
    outputOptions: ['-b', '--temp-path', '--temp-dir', '-O', '--output-file', '--out'],
  },
  '7z': {
    sandboxOnly: '7-Zip reads list files (@file) and archive links that argument checks cannot follow',
    makesLinks: true,
    readonlyCheck: (p) => (['l', 't', 'i', 'h'].includes(p.operands[0]?.text ?? '') ? undefined : 'only 7z l (list) and t (test) leave files alone'),
  },
  '7za': { sandboxOnly: '7-Zip reads list files (@file) and archive links that argument checks cannot follow', makesLinks: true },
  sort: {
    forbid: ['--compress-program'],
    patternOptions: ['-t', '--field-separator'],
    textOptions: ['-k', '--key', '-S', '--buffer-size', '--parallel', '--batch-size', '--sort'],
    pathOptions: ['--random-source', '--files0-from'],
    outputOptions: ['-o', '--output', '-T', '--temporary-directory'],
    listsFiles: ['--files0-from'],
  },
  // split [FILE [PREFIX]]: the second operand is the output name prefix (a path).
  split: { forbid: ['--filter'], patternOptions: ['-t', '--separator'], textOptions: ['-b', '--bytes', '-l', '--lines', '-n', '--number', '-a', '--suffix-length', '-C', '--line-bytes'], optionalOptions: ['--numeric-suffixes', '--hex-suffixes'], nameOptions: ['--additional-suffix'], outputOperands: 1 },
  csplit: { textPositionals: 'all', textFrom: 1, textOptions: ['-n', '--digits'], outputOptions: ['-f', '--prefix'], nameOptions: ['-b', '--suffix-format'] },
  // uniq [INPUT [OUTPUT]]: `uniq - FILE` reads standard input and writes FILE.
  uniq: { textOptions: ['-f', '--skip-fields', '-s', '--skip-chars', '-w', '--check-chars'], outputOperands: 1 },
  shuf: { textOptions: ['-n', '--head-count', '-i', '--input-range'], pathOptions: ['--random-source'], outputOptions: ['-o', '--output'] },
  cut: { patternOptions: ['-d', '--delimiter', '--output-delimiter'], textOptions: ['-f', '--fields', '-b', '--bytes', '-c', '--characters'] },
  // tr SET1 [SET2]: options end at the first set (`tr a -d` translates to "-d").
  tr: { textPositionals: 'all', textLanguage: true, posix: true, operatorOperands: true },
  paste: { patternOptions: ['-d', '--delimiters'] },
  join: { patternOptions: ['-t', '-e'], textOptions: ['-j', '-1', '-2', '-o', '-a', '-v'] },
  // -d (--table-noheadings) takes no value; --table (-t) neither, though it starts longer valued names.
  column: {
    patternOptions: ['-s', '--separator', '-o', '--output-separator', '-N', '--table-columns', '-n', '--table-name'],
    textOptions: ['-c', '--output-width', '-R', '--table-right', '-E', '--table-noextreme', '-H', '--table-hide', '-W', '--table-wrap', '-T', '--table-truncate', '-O', '--table-order', '-l', '--table-columns-limit', '-r', '--tree', '-i', '--tree-id', '-p', '--tree-parent'],
    flagOptions: ['--table'],
  },
  fold: { textOptions: ['-w', '--width'] },
  fmt: { patternOptions: ['-p', '--prefix'], textOptions: ['-w', '--width', '-g', '--goal'] },
  // -s[CHAR], -S[STRING], -e[CHAR[WIDTH]], -i[CHAR[WIDTH]], -n[SEP[DIGITS]] take optional attached values only.
  pr: {
    patternOptions: ['-h', '--header', '-D', '--date-format'],
    textOptions: ['-w', '--width', '-l', '--length', '-W', '--page-width', '-o', '--indent', '-N', '--first-line-number', '--columns', '--pages'],
    optionalOptions: ['-s', '--separator', '-S', '--sep-string', '-e', '--expand-tabs', '-i', '--output-tabs', '-n', '--number-lines'],
  },
  nl: { patternOptions: ['-s', '--number-separator', '-b', '--body-numbering', '-d', '--section-delimiter', '-f', '--footer-numbering', '-h', '--header-numbering'], textOptions: ['-i', '--line-increment', '-l', '--join-blank-lines', '-n', '--number-format', '-v', '--starting-line-number', '-w', '--number-width'] },
  tac: { patternOptions: ['-s', '--separator'] },
  expand: { textOptions: ['-t', '--tabs'] },
  unexpand: { textOptions: ['-t', '--tabs'] },
  numfmt: { textPositionals: 'all', patternOptions: ['--format', '--suffix', '-d', '--delimiter'], textOptions: ['--to', '--from', '--field', '--padding', '--round', '--from-unit', '--to-unit', '--invalid'], optionalOptions: ['--header'] },
  echo: { textPositionals: 'all', textLanguage: true },
  printf: { textPositionals: 'all', textLanguage: true },
  // expr's operators (| & < > ...) are its operands.
  expr: { textPositionals: 'all', textLanguage: true, operatorOperands: true },
  factor: { textPositionals: 'all' },
  // Options end at the first number (seq -1 counts down from -1).
  seq: { textPositionals: 'all', patternOptions: ['-s', '--separator', '-f', '--format'], posix: true },
  bc: { textLanguage: true, forbid: ['-f', '--file'] },
  dc: {
    scriptOptions: ['-e', '--expression'],
    forbid: ['-f', '--file'],
    script: 'dc',
    textLanguage: true,
    // A positional is a program file the scanner cannot see.
    check: (p) => (p.operands.length > 0 ? 'dc runs program files, which cannot be checked; give the program with -e' : undefined),
  },
  date: {
    textPositionals: 'all',
    textOptions: ['-d', '--date', '--rfc-3339'],
    optionalOptions: ['-I', '--iso-8601'],
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
    // sqlite3 has no `--` (it is the unknown option "-"): what follows is still read as options.
    dashDash: 'ignored',
    patternOptions: ['-separator', '-newline', '-nullvalue'],
    textOptions: ['-escape', '-mmap', '-maxsize'],
    forbid: ['-cmd', '-init', '-A', '-archive', '-append', '-deserialize', '-memtrace', '-safe-off', '-unsafe-testing', '-vfs', '-zip', '-lookaside', '-pagecache', '-heap', '-nonce', '-sorterref', '-multiplex', '-pcachetrace'],
    script: 'sqlite3',
    textLanguage: true,
    // -safe: no .shell/.system/.load/.output/ATTACH/readfile...; -init: never read the home folder's .sqliterc.
    prefixArgs: ['-safe', '-init', '/dev/null'],
    readonlyPrefix: ['-readonly'],
    // The CLI opens file: URIs (the policy checks the path inside); their parameters can name other files or VFSes.
    check: (p) => sqliteUriProblem(p.operands[0]?.text),
  },
  cp: {
    forbid: ['-s', '--symbolic-link', '-l', '--link'],
    forbidLetters: 'sl',
    outputOptions: ['-t', '--target-directory'],
    nameOptions: ['-S', '--suffix'],
    textOptions: ['--no-preserve', '--sparse'],
    optionalOptions: ['--preserve', '--backup', '--reflink', '--context'],
    dereference: ['-L', '--dereference', '-H'],
    makesLinks: true,
  },
  mv: { outputOptions: ['-t', '--target-directory'], nameOptions: ['-S', '--suffix'], optionalOptions: ['--backup', '--context'], makesLinks: true },
  install: { forbid: ['-m', '--mode', '-o', '--owner', '-g', '--group', '-s', '--strip', '--strip-program'], outputOptions: ['-t', '--target-directory'], nameOptions: ['-S', '--suffix'], optionalOptions: ['--backup', '--context'] },
  ls: {
    dereference: ['-L', '--dereference', '-H', '--dereference-command-line'],
    patternOptions: ['-I', '--ignore', '--hide', '--time-style'],
    textOptions: ['-w', '--width', '-T', '--tabsize', '--format', '--sort', '--time', '--block-size', '--quoting-style', '--indicator-style'],
  },
  // --time[=WORD] takes an optional value only (a prefix of --time-style, which takes one always).
  du: { dereference: ['-L', '--dereference'], listsFiles: ['--files0-from'], patternOptions: ['--exclude', '--time-style'], textOptions: ['-d', '--max-depth', '-B', '--block-size', '-t', '--threshold'], optionalOptions: ['--time'], pathOptions: ['-X', '--exclude-from', '--files0-from'] },
  wc: { listsFiles: ['--files0-from'], pathOptions: ['--files0-from'] },
  stat: { patternOptions: ['-c', '--format', '--printf'], textOptions: ['--cached'], dereference: ['-L', '--dereference'] },
  file: { forbid: ['-m', '--magic-file', '-C', '--compile'], listsFiles: ['-f', '--files-from'], pathOptions: ['-f', '--files-from'], patternOptions: ['-F', '--separator'], textOptions: ['-e', '--exclude', '--exclude-quiet', '-P', '--parameter'], dereference: ['-L', '--dereference'] },
  // -R with -H writes 00Tree.html into every folder at the -L depth; --hintro/--houtro/--gitfile/--infofile read files.
  tree: { outputOptions: ['-o'], forbidReadonly: ['-R'], pathOptions: ['--gitfile', '--infofile', '--hintro', '--houtro'], patternOptions: ['-P', '-I', '-H', '-T', '--timefmt'], textOptions: ['-L', '--charset', '--filelimit', '--sort'], dereference: ['-l'], forbid: ['--fromfile'] },
  // glibc iconv reads a charset name holding a slash as a charmap file: a plain value, path-checked when it could be one.
  iconv: { textOptions: ['-f', '--from-code', '-t', '--to-code'], outputOptions: ['-o', '--output'] },
  touch: { textOptions: ['-d', '--date', '-t', '--time'], pathOptions: ['-r', '--reference'] },
  truncate: { textOptions: ['-s', '--size'], pathOptions: ['-r', '--reference'] },
  mktemp: { nameOptions: ['--suffix'], outputOptions: ['-p'], optionalOptions: ['--tmpdir'] },
  mkdir: { textOptions: ['-m', '--mode'], optionalOptions: ['--context'] },
  shred: { textOptions: ['-n', '--iterations', '-s', '--size'], pathOptions: ['--random-source'], optionalOptions: ['--remove'] },
  cmp: { textOptions: ['-i', '--ignore-initial', '-n', '--bytes'] },
  comm: { patternOptions: ['--output-delimiter'] },
  df: { textOptions: ['-B', '--block-size', '-t', '--type', '-x', '--exclude-type'], optionalOptions: ['--output'] },
  more: { textOptions: ['-n', '--lines'] },
  nproc: { textOptions: ['--ignore'] },
  realpath: { pathOptions: ['--relative-to', '--relative-base'] },
  // basename NAME [SUFFIX]: options end at the name.
  basename: { patternOptions: ['-s', '--suffix'], posix: true },
  pathchk: { posix: true },
  gettext: { textPositionals: 'all', textOptions: ['-d', '--domain', '-c', '--context'], posix: true },
  head: { textOptions: ['-n', '--lines', '-c', '--bytes'] },
  tail: { textOptions: ['-n', '--lines', '-c', '--bytes', '-s', '--sleep-interval', '--pid', '--max-unchanged-stats'] },
  xxd: {
    parser: 'letter',
    textOptions: ['-c', '-g', '-l', '-s', '-o', '-n', '-cols', '-groupsize', '-len', '-seek', '-name'],
    forbidReadonly: ['-r', '-revert'],
    // xxd [INFILE [OUTFILE]]: `xxd - FILE` reads standard input and writes FILE.
    outputOperands: 1,
  },
  // -w[BYTES] and --width[=BYTES], --strings[=BYTES] take optional attached values only.
  od: { textOptions: ['-A', '--address-radix', '-t', '--format', '-j', '--skip-bytes', '-N', '--read-bytes', '-S', '--endian'], optionalOptions: ['-w', '--width', '--strings'] },
  // -f/--format-file read format strings from a file (which can name other files to read... and is unchecked).
  hexdump: { patternOptions: ['-e', '--format'], textOptions: ['-n', '--length', '-s', '--skip'], optionalOptions: ['-L', '--color'], forbid: ['-f', '--format-file'] },
  // binutils reads options from @FILE arguments (response files): the file is checked like a path.
  strings: { atFiles: true, responseFiles: true, patternOptions: ['-s', '--output-separator'], textOptions: ['-n', '--bytes', '-t', '--radix', '-e', '--encoding', '-T', '--target', '-U', '--unicode'] },
  md5sum: CHECKSUM,
  sha1sum: CHECKSUM,
  sha256sum: CHECKSUM,
  sha512sum: CHECKSUM,
  b2sum: { ...CHECKSUM, textOptions: ['-l', '--length'] },
  cksum: { ...CHECKSUM, textOptions: ['-a', '--algorithm', '-l', '--length'] },
  uudecode: {
    outputOptions: ['-o', '--output-file'],
    // Without -o the output file is named inside the encoded data (any path on the server).
    check: (p) => (has(p, '-o', '--output-file') ? undefined : 'uudecode without -o writes to the file named inside the encoded data; give the output file with -o'),
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
    readonlyCheck: (p) => (p.options.some((o) => /[=<]/.test(o.name)) ? 'exiftool tag assignments rewrite the file' : undefined),
  },
  colordiff: { sandboxOnly: 'colordiff reads ~/.colordiffrc, which names the program it runs' },
  locate: { sandboxOnly: "locate searches the server's whole file list, not the zone" },
  less: {
    forbid: ['-k', '--lesskey-file', '-o', '--log-file', '-O', '--LOG-FILE', '--lesskey-src', '-T', '--tag-file'],
    patternOptions: ['-p', '--pattern', '-P', '--prompt', '-t', '--tag'],
    textOptions: ['-b', '--buffers', '-D', '--color', '-h', '--max-back-scroll', '-j', '--jump-target', '-x', '--tabs', '-y', '--max-forw-scroll', '-z', '--window', '--quotes', '--shift', '--line-num-width', '--rscroll', '--status-col-width', '--wheel-lines'],
  },
  patch: {
    forbid: ['--merge', '-o', '--output', '-B', '--prefix', '-Y', '--basename-prefix', '-z', '--suffix', '-r', '--reject-file', '--follow-symlinks'],
    patternOptions: ['-D', '--ifdef'],
    textOptions: ['-p', '--strip', '-F', '--fuzz', '-V', '--version-control', '--quoting-style', '-g', '--get', '--read-only', '--reject-format'],
    pathOptions: ['-i', '--input', '-d', '--directory'],
    flagOptions: ['--version', '--verbose', '--dry-run'],
    // git-style patches can create symbolic links.
    makesLinks: true,
  },
  tee: { outputOperands: 0 },
  diff: {
    followsLinks: true,
    patternOptions: ['--label', '-I', '--ignore-matching-lines', '--line-format', '--old-line-format', '--new-line-format', '--unchanged-line-format', '--old-group-format', '--new-group-format', '--changed-group-format', '--unchanged-group-format', '-F', '--show-function-line', '-D', '--ifdef', '-x', '--exclude', '--palette'],
    textOptions: ['-U', '-C', '-W', '--width', '--tabsize', '--horizon-lines'],
    optionalOptions: ['--unified', '--context', '--color'],
    // --new-file (-N) takes no value; getopt matches it before the --new-*-format options.
    flagOptions: ['--new-file'],
    pathOptions: ['--to-file', '--from-file', '-X', '--exclude-from', '-S', '--starting-file'],
    // -U NUM and -C NUM need a value; --unified[=NUM] and --context[=NUM] only take an attached one.
    textLanguage: true,
  },
  diff3: { forbid: ['--diff-program'], patternOptions: ['-L', '--label'] },
  sdiff: { forbid: ['-o', '--output', '--diff-program'], patternOptions: ['-I', '--ignore-matching-lines'], textOptions: ['-w', '--width', '--tabsize'] },
  base64: { textOptions: ['-w', '--wrap'] },
  base32: { textOptions: ['-w', '--wrap'] },
  basenc: { textOptions: ['-w', '--wrap'] },
  gzip: GZIP,
  gunzip: GZIP,
  zcat: GZIP,
  xz: XZ,
  unxz: XZ,
  xzcat: XZ,
  zstd: { pathOptions: ['-D', '--patch-from', '--filelist'], outputOptions: ['-o', '--output-dir-flat', '--output-dir-mirror', '--trace'], listsFiles: ['--filelist'], textOptions: ['--maxdict', '--dictID', '--stream-size', '--size-hint', '--target-compressed-block-size', '--auto-threads', '--priority', '--format'] },
  // lz4 [IN [OUT]] writes its second operand (with -m every operand is an input).
  lz4: { pathOptions: ['-D', '--list'], outputOperands: 1 },
  curl: {
    textLanguage: true,
    atFiles: true,
    // -q (first) keeps curl from reading ~/.curlrc in the zone.
    prefixArgs: ['-q'],
    patternOptions: ['-H', '--header', '--proxy-header', '-A', '--user-agent', '-e', '--referer', '-w', '--write-out', '-X', '--request', '--request-target', '-d', '--data', '--data-raw', '--data-binary', '--data-urlencode', '--data-ascii', '--json', '--url-query', '-F', '--form', '--form-string', '-u', '--user', '-U', '--proxy-user', '-Q', '--quote', '-t', '--telnet-option', '--resolve', '--connect-to', '--noproxy', '--oauth2-bearer', '--pass', '--proxy-pass', '--tlsuser', '--tlspassword', '--proxy-tlsuser', '--proxy-tlspassword', '--mail-auth', '--mail-from', '--mail-rcpt', '--login-options', '--sasl-authzid', '--aws-sigv4', '--ftp-account', '--ftp-alternative-to-user', '--hostpubmd5', '--hostpubsha256', '--pinnedpubkey', '--proxy-pinnedpubkey'],
    textOptions: ['-r', '--range', '-m', '--max-time', '--connect-timeout', '--retry', '--retry-delay', '--retry-max-time', '-x', '--proxy', '--proxy1.0', '--preproxy', '--socks4', '--socks4a', '--socks5', '--socks5-hostname', '--socks5-gssapi-service', '-C', '--continue-at', '-Y', '--speed-limit', '-y', '--speed-time', '--limit-rate', '--max-filesize', '--max-redirs', '-P', '--ftp-port', '--proto', '--proto-redir', '--proto-default', '--cert-type', '--key-type', '--proxy-cert-type', '--proxy-key-type', '--ciphers', '--proxy-ciphers', '--tls13-ciphers', '--proxy-tls13-ciphers', '--curves', '--create-file-mode', '--delegation', '--dns-interface', '--dns-ipv4-addr', '--dns-ipv6-addr', '--dns-servers', '--doh-url', '--expect100-timeout', '--ftp-method', '--ftp-ssl-ccc-mode', '--happy-eyeballs-timeout-ms', '--interface', '--keepalive-time', '--krb', '--local-port', '--parallel-max', '--rate', '--service-name', '--proxy-service-name', '--tftp-blksize', '--tls-max', '--tlsauthtype', '--proxy-tlsauthtype'],
    // -z/--time-cond takes a date or a file whose time is used; -b/--cookie data or a file to read.
    pathOptions: ['-o', '--output', '--output-dir', '-T', '--upload-file', '-c', '--cookie-jar', '-b', '--cookie', '-z', '--time-cond', '-D', '--dump-header', '--trace', '--trace-ascii', '--stderr', '--libcurl', '-E', '--cert', '--key', '--cacert', '--capath', '--crlfile', '--proxy-cert', '--proxy-key', '--proxy-cacert', '--proxy-capath', '--proxy-crlfile', '--pubkey', '--random-file', '--egd-file', '--netrc-file', '--etag-save', '--etag-compare', '--hsts', '--alt-svc', '--url'],
    // Flags that are prefixes of valued options (curl matches long names by prefix, like getopt).
    flagOptions: ['--crlf', '--ftp-ssl-ccc', '--head', '--netrc', '--parallel', '--socks5-gssapi'],
    forbid: ['-K', '--config', '--engine', '--unix-socket', '--abstract-unix-socket'],
    forbidNetworkSafe: ['-X', '--request', '-d', '--data', '--data-raw', '--data-binary', '--data-urlencode', '--data-ascii', '-F', '--form', '--form-string', '-T', '--upload-file', '--post301', '--post302', '--post303', '--json', '-u', '--user'],
  },
  wget: {
    textLanguage: true,
    // --no-config keeps wget from reading ~/.wgetrc in the zone.
    prefixArgs: ['--no-config'],
    patternOptions: ['-U', '--user-agent', '--header', '-A', '--accept', '-R', '--reject', '-D', '--domains', '--user', '--password', '--method', '--post-data', '--body-data', '--accept-regex', '--reject-regex', '--exclude-domains', '--follow-tags', '--ignore-tags', '--ftp-user', '--ftp-password', '--http-user', '--http-password', '--proxy-user', '--proxy-password', '--referer', '--warc-header', '-I', '--include-directories', '-X', '--exclude-directories'],
    textOptions: ['-t', '--tries', '-T', '--timeout', '-l', '--level', '-w', '--wait', '-Q', '--quota', '--limit-rate', '-n', '--bind-address', '--certificate-type', '--ciphers', '--compression', '--connect-timeout', '--cut-dirs', '--default-page', '--dns-timeout', '--local-encoding', '--max-redirect', '--prefer-family', '--private-key-type', '--progress', '--read-timeout', '--regex-type', '--remote-encoding', '--retry-on-http-error', '--secure-protocol', '--start-pos', '--waitretry', '--warc-max-size', '--pinnedpubkey'],
    pathOptions: ['-O', '--output-document', '-P', '--directory-prefix', '--post-file', '--body-file', '--load-cookies', '--save-cookies', '--ca-certificate', '--certificate', '--private-key', '-a', '--append-output', '-o', '--output-file', '--ca-directory', '--crl-file', '--warc-dedup', '--hsts-file', '--rejected-log', '--warc-file', '--warc-tempdir'],
    forbid: ['-e', '--execute', '--config', '-i', '--input-file', '--use-askpass', '-B', '--base'],
    forbidNetworkSafe: ['--post-data', '--post-file', '--body-data', '--body-file', '--method'],
  },
};

/** tar operations that write files or archives (the long forms are also in forbidReadonly, for their abbreviations). */
const TAR_WRITES = ['-x', '--extract', '--get', '-c', '--create', '-r', '--append', '-u', '--update', '-A', '--catenate', '--concatenate', '--delete'];

/**
 * unzip extracts unless an option before the archive lists, tests, prints or shows the comment
 * (unzip.c: extract_flag is off for -c -p -t -l -v -z -T); -Z first makes it zipinfo. A `-`
 * inside a cluster negates the next letter, so with one nothing is judged safe.
 */
function unzipWrites(p: Parsed): string | undefined {
  const archive = p.operands[0]?.index ?? Infinity;
  const before = p.options.filter((o) => o.index < archive);
  if (before.some((o) => o.name === '--')) return "unzip options negated with a second '-' cannot be judged";
  if (before.some((o) => ['-l', '-v', '-t', '-p', '-c', '-z'].includes(o.name)) || p.args[0]?.startsWith('-Z')) return undefined;
  return 'unzip extracts unless -l (list), -v, -t (test), -p or -c (print) comes before the archive name';
}

/** SQLite URI parameters that only tune how the file is opened; vfs= and modeof= reach other code or files. */
const SQLITE_URI_PARAMS = ['mode', 'cache', 'immutable', 'nolock', 'psow'];

function sqliteUriProblem(db: string | undefined): string | undefined {
  const m = db === undefined ? null : /^file:[^?#]*\?([^#]*)/is.exec(db);
  if (!m) return undefined;
  for (const pair of m[1]!.split('&')) {
    const key = decodeURIComponent(pair.split('=')[0]!.replace(/%(?![0-9A-Fa-f]{2})/g, '%25')).toLowerCase();
    if (key !== '' && !SQLITE_URI_PARAMS.includes(key)) return `the sqlite3 URI parameter "${key}" is not allowed (allowed: ${SQLITE_URI_PARAMS.join(', ')})`;
  }
  return undefined;
}

export function ruleFor(cmd: string): CommandRule {
  return RULES[cmd] ?? {};
}
