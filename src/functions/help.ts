/**
 * shed_help: the quick reference (its function list generated from the registry, so it never
 * drifts) and short howtos on demand. Written for small models: short lines, one example each.
 */
import { z } from 'zod';
import { ERROR_CODES } from '../core/base/errors.js';
import { defineFunction, type Category, type FunctionDef } from '../registry/define.js';

const CATEGORY_TITLES: Record<Category, string> = {
  write: 'Write',
  read: 'Read',
  files: 'Files',
  edit: 'Locked edit',
  exec: 'Commands',
  code: 'Code',
  bridges: 'Move between zones',
  archives: 'Archives',
  data: 'Data',
  links: 'Download links',
  groups: 'Groups',
  info: 'Info',
};

/** A piece of advice that only makes sense once the functions it names exist in the registry. */
interface Tip {
  text: string;
  needs: readonly string[];
}

const WORKFLOWS: readonly Tip[] = [
  {
    text: 'Direct write: shed_create_file(zone="storage", path="notes.md", content="# Notes\\n") creates or replaces a file; shed_patch_text(zone="storage", path="notes.md", content="more\\n") appends (see howto edit for insert/replace).',
    needs: ['shed_create_file', 'shed_patch_text'],
  },
  {
    text: 'Locked edit (long edits, nobody else can write meanwhile): shed_lockedit_open -> shed_lockedit_overwrite or shed_lockedit_exec -> shed_lockedit_save (keeps it, closes edit mode) or shed_lockedit_cancel (drops it).',
    needs: ['shed_lockedit_open', 'shed_lockedit_overwrite', 'shed_lockedit_save', 'shed_lockedit_cancel'],
  },
  {
    text: 'Commands: shed_exec(zone="storage", cmd="ls", args=["-la"]). No shell: no pipes, ; or >; save output with stdout_file="out.txt".',
    needs: ['shed_exec'],
  },
  {
    text: 'Undo: answers that changed files name their turn. shed_undo() lists turns and previews undoing the last;\n  shed_undo(apply=true) puts back every file it changed (any zone, commands too).',
    needs: ['shed_undo'],
  },
];

const MISTAKES: readonly Tip[] = [
  { text: 'path="Storage/a.txt" is wrong: the zone is zone=, the path is "a.txt".', needs: [] },
  { text: 'Lines start at 1, not 0.', needs: [] },
  { text: 'To replace a whole file use overwrite=true (there is no position="overwrite").', needs: ['shed_patch_text'] },
  { text: 'args is a list: args=["-n", "TODO", "a.txt"], not "-n TODO a.txt".', needs: ['shed_exec'] },
  { text: 'Uploads is read-only: move a file to Storage before changing it.', needs: [] },
  { text: 'Big file? Read a range: shed_read(zone="storage", path="big.log", start_line=1, end_line=100).', needs: ['shed_read'] },
  { text: 'Read the error hint: it shows a corrected call.', needs: [] },
];

const ZONES = `ZONES (zone=, case-insensitive)
  uploads    files attached in this conversation; read-only (only shed_delete changes it)
  storage    free workspace: create, edit, run commands
  documents  like storage, but every change is committed with git (history, restore)
  group      shared space of a group you belong to; needs group= (shed_group_list)`;

const PATHS = `PATHS
  - Relative to the zone root: path="reports/q3.md".
  - Never start with the zone name: "Storage/a.txt" -> "a.txt" (error PATH_STARTS_WITH_ZONE).
  - A leading "/" is removed; ".." cannot leave the zone.
  - Case-sensitive: "Notes.txt" and "notes.txt" are two files.`;

interface Topic {
  description: string;
  text(): string;
}

const TOPICS = {
  download: {
    description: 'Fetch a file from the internet into a zone.',
    text: () => `HOWTO download
Needs network_mode "safe" or "all" (an admin setting; shed_parameters shows it).
1. shed_exec(zone="storage", cmd="curl", args=["-L", "-o", "data.json", "https://example.com/data.json"])
   (or cmd="wget", args=["-O", "data.json", URL]). Always save to a file with -o / -O.
2. Unknown file kind? shed_file_type(zone="storage", path="data.json"), then shed_rename to the right extension.
3. A .zip: shed_unzip(zone="storage", src="data.zip", dest="data"). A CSV: see howto csv_to_sqlite.
With network_mode "disabled" (default) downloads are refused: ask the user to upload the file instead.`,
  },
  csv_to_sqlite: {
    description: 'Import a CSV file into SQLite and query it.',
    text: () => `HOWTO csv_to_sqlite
1. Look at the file first: shed_read(zone="storage", path="sales.csv", end_line=5).
2. Import: shed_sqlite(zone="storage", path="sales.db", import_csv="sales.csv", table="sales")
   Delimiter, encoding and header are detected; column types (INTEGER, REAL, TEXT, dates) are inferred.
   Options: delimiter=";", encoding="latin-1", decimal="," (European numbers), date_columns=["day"],
   date_format="%d/%m/%Y", skip_rows=2, has_header=false, if_exists="fail"|"replace"|"append".
3. Query: shed_sqlite(zone="storage", path="sales.db", query="SELECT region, SUM(total) FROM sales GROUP BY region")
   Values go in params: query="SELECT * FROM sales WHERE region = ?", params=["North"].
   A SELECT returns a limited number of rows: set limit=N, or export all rows with output_csv="result.csv".
Read data.import_info after an import: it shows the detected delimiter, encoding and types.`,
  },
  upload: {
    description: 'Work with files the user attached in the chat.',
    text: () => `HOWTO upload
1. shed_import(import_all=true) copies the files attached in this conversation into Uploads.
2. shed_tree(zone="uploads") lists them.
3. Uploads is read-only. To change a file, move it first:
   shed_move_uploads_to_storage(src="report.csv", dest="report.csv")
   or shed_move_uploads_to_documents(src="report.csv", dest="report.csv") for a versioned copy.
Reading works in place: shed_read(zone="uploads", path="report.csv").`,
  },
  share: {
    description: 'Give the user a download link to a file or folder.',
    text: () => `HOWTO share
shed_link_create(zone="storage", path="report.pdf") returns a Markdown link: show it to the user exactly as returned.
A folder link opens a page listing it (with a zip of everything). Links expire: expires_hours=48 (default 24, max 168).
shed_link_list() lists your links; shed_link_delete(link_id="...") revokes one.`,
  },
  edit: {
    description: 'Create, insert, replace and overwrite text or bytes; locked edits.',
    text: () => `HOWTO edit
CREATE OR REPLACE A FILE
  shed_create_file(zone="storage", path="a.txt", content="hello\\n")   folders are created as needed.
PATCH TEXT: shed_patch_text(zone, path, content, position=..., line=..., end_line=..., pattern=...)
  position="end" (default)        append at the end
  position="start"                insert before line 1
  position="before", line=N       insert before line N      (or pattern="regex": before the first matching line)
  position="after",  line=N       insert after line N       (or pattern="regex": after the first matching line)
  position="replace", line=N, end_line=M   replace lines N..M (end_line omitted: only line N)
  position="replace", pattern="regex"      replace the matched text
  match_all=true applies a pattern to every match; regex_flags="i" ignore case, "m" multiline, "s" dot matches newline.
  overwrite=true                  the file becomes exactly content (position, line, end_line, pattern are ignored)
NEWLINES
  - start, end, before, after, and replace by line: content is whole lines; a missing final newline is added.
    shed_patch_text(zone="storage", path="a.txt", content="new line", position="after", line=3) inserts one line.
  - replace with pattern: exactly the matched text is replaced by content, no newline added. content is literal
    text: $1 or \\1 are NOT group references.
  - overwrite=true: content is written exactly as given.
RULES
  - Lines start at 1 (line=0 is an error). end_line must be >= line. Give line or pattern, not both.
  - position="at" (a byte offset) exists only in shed_patch_bytes.
  - To replace the whole file use overwrite=true; there is no position="overwrite".
BYTES: shed_patch_bytes(zone, path, content="48656c6c6f", content_format="hex"|"base64"|"raw", position="start"|"end"|"at"|"replace", offset=N, length=N)
  position="at" inserts at byte offset; "replace" replaces length bytes at offset. Offsets start at 0.
LOCKED EDIT (a longer edit nobody else may touch meanwhile)
  shed_lockedit_open(zone, path) -> shed_lockedit_overwrite(zone, path, content) or shed_lockedit_exec(zone, path, cmd, args)
  -> shed_lockedit_save(zone, path) to keep the result (this closes edit mode) or shed_lockedit_cancel(zone, path) to drop it.
  Another conversation gets FILE_LOCKED until then. After a crash: shed_force_unlock(zone, path).
In Documents every change is committed; message="..." sets the commit message.`,
  },
  commands: {
    description: 'Run command-line tools (ls, grep, sed, git history...).',
    text: () => `HOWTO commands
shed_exec(zone="storage", cmd="grep", args=["-n", "TODO", "notes.md"])
  - cmd is the program, args is a LIST of strings. The command runs in the zone root, without a shell:
    no pipes |, no ; && > < $( ) or backticks. Chain steps as separate calls.
  - Save long output to a file: stdout_file="out.txt" (stderr_file, redirect_stderr_to_stdout=true also exist).
  - A command that fails still returns success=true: check data.returncode and data.stderr.
  - Output is cut at max_output characters; timeout=N seconds (capped by the admin).
  - Uploads allows read-only commands only. shed_allowed_commands() lists what is installed.
  - Paths in args follow the path rules: relative, inside the zone.
  - Documents: git history works without git installed: cmd="git", args=["log", "--oneline", "-n", "10"],
    args=["diff", "HEAD~1"], args=["show", "HEAD~1:notes.md"], args=["restore", ...].
Useful: ls, cat, head, tail, wc, grep, sort, uniq, cut, sed, awk, find, mkdir, cp, mv, rm, diff, jq, tar.`,
  },
  network: {
    description: 'What network access commands have (network_mode).',
    text: () => `HOWTO network
The admin setting network_mode decides (see it with shed_parameters()):
  disabled  (default) no network at all; URLs in arguments are refused.
  safe      downloads only: curl and wget GET, git clone / fetch / pull.
  all       everything, uploads included.
Only an admin can change it. If a download is refused, ask the user to upload the file in the chat.`,
  },
  paths: {
    description: 'How to write path parameters.',
    text: () => `HOWTO paths
${PATHS}
  - Zone names (storage, documents, ...) are case-insensitive; group names are case-sensitive.
  - A real folder named like the zone (Storage/storage/x): pass allow_zone_in_path=true, only when the user says so.
  - No control characters or NUL bytes; symbolic links may not lead outside the zone.
  - In Documents and group spaces a folder named .git is never versioned: named writes into one are refused (keep repositories in Storage).
  - Parameters the function specs leave out (the error that needs one names it): allow_zone_in_path,
    safe=false (write while this conversation has a locked edit open), mode= for new group files.
  - To see what exists: shed_tree(zone="storage").`,
  },
  large_files: {
    description: 'Work with big files without flooding the conversation.',
    text: () => `HOWTO large_files
  - Read a slice: shed_read(zone="storage", path="big.log", start_line=1000, end_line=1100).
    Output is cut at max_output characters; the message says which start_line to continue from.
  - Size and line count first: shed_exec(zone="storage", cmd="wc", args=["-l", "big.log"]).
  - Search instead of reading: cmd="grep", args=["-n", "ERROR", "big.log"] (or -c to count).
  - Keep results on disk: stdout_file="errors.txt", then read that file.
  - Split: cmd="split", args=["-l", "100000", "big.csv", "part_"].
  - Tables: import into SQLite (howto csv_to_sqlite) and query with limit=N.
  - Binary: shed_hexdump(zone="storage", path="x.bin", offset=0, length=256) or shed_read_bytes.`,
  },
  errors: {
    description: 'Every error code and what it means.',
    text: () =>
      `HOWTO errors
An error response is {"success": false, "error": {"code", "message", "details", "hint"}}. The hint shows a corrected call.
${Object.entries(ERROR_CODES)
  .map(([code, meaning]) => `  ${code} - ${meaning}`)
  .join('\n')}`,
  },
  full: {
    description: 'Everything: the quick reference and every howto.',
    text: () => '', // assembled by the handler, which has the registry
  },
} satisfies Record<string, Topic>;

type TopicName = keyof typeof TOPICS;
const TOPIC_NAMES = Object.keys(TOPICS) as [TopicName, ...TopicName[]];

function available(tips: readonly Tip[], registered: ReadonlySet<string>): string[] {
  return tips.filter((t) => t.needs.every((n) => registered.has(n))).map((t) => t.text);
}

function quickReference(functions: readonly FunctionDef[]): string {
  const registered = new Set(functions.map((f) => f.name));
  const width = Math.max(...functions.map((f) => f.name.length));
  const groups = (Object.keys(CATEGORY_TITLES) as Category[])
    .map((cat) => {
      const members = functions.filter((f) => f.category === cat);
      if (members.length === 0) return '';
      return ` ${CATEGORY_TITLES[cat]}:\n${members.map((f) => `  ${f.name.padEnd(width)}  ${f.summary}`).join('\n')}`;
    })
    .filter(Boolean);
  const workflows = available(WORKFLOWS, registered).map((w, i) => `  ${i + 1}. ${w}`);
  const mistakes = available(MISTAKES, registered).map((m) => `  - ${m}`);
  const howtos = TOPIC_NAMES.map((t) => `  ${t.padEnd(13)} ${TOPICS[t].description}`);
  return [
    'FILESHED QUICK REFERENCE',
    'Your files, kept across conversations. Every call returns JSON: success, data, message (or error: code, message, hint).',
    '',
    ZONES,
    '',
    'FUNCTIONS',
    ...groups,
    '',
    'WORKFLOWS',
    ...workflows,
    '',
    PATHS,
    '',
    'COMMON MISTAKES',
    ...mistakes,
    '',
    'HOWTOS: shed_help(howto="edit")',
    ...howtos,
  ].join('\n');
}

export const shedHelp = defineFunction({
  name: 'shed_help',
  category: 'info',
  summary: 'This quick reference; shed_help(howto="edit") for a topic.',
  description: 'Fileshed reference: zones, functions, rules, mistakes; howto= explains a topic. Call it when unsure. Paths are relative to the zone root; zone="group" needs group=.',
  params: {
    howto: z
      .enum(TOPIC_NAMES)
      .optional()
      .describe('Topic; omit for the overview'),
  },
  example: { howto: 'edit' },
  paramHints: { howto: `Topics: ${TOPIC_NAMES.join(', ')}.` },
  needsUser: false,
  async handler(args, ctx) {
    const FUNCTIONS = ctx.functions;
    const howtos = Object.fromEntries(TOPIC_NAMES.map((t) => [t, TOPICS[t].description]));
    const topic = args.howto;
    if (topic === undefined) {
      return {
        data: { help: quickReference(FUNCTIONS), howtos },
        message: `Quick reference of ${FUNCTIONS.length} functions. Details: shed_help(howto="<topic>") with a topic from data.howtos.`,
      };
    }
    const help =
      topic === 'full'
        ? [quickReference(FUNCTIONS), ...TOPIC_NAMES.filter((t) => t !== 'full').map((t) => TOPICS[t].text())].join('\n\n')
        : TOPICS[topic].text();
    return { data: { help, topic, howtos }, message: `Help on '${topic}'.` };
  },
});
