/**
 * Text as git prints it: commit headers (medium and oneline), dates, --stat blocks, name lists and
 * unified diffs with `diff --git` headers. Hunks come from the `diff` package (structuredPatch);
 * the headers, hunk ranges and function-context lines follow git's own layout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readBytes } from '../../../base/fs/read.js';
import { structuredPatch } from 'diff';
import { fromKey, LINK_MODE } from '../../../formats/git/names.js';
import { type Commit } from '../../../formats/git/objects.js';
import { readBlob } from '../objects.js';
import type { Repo } from '../repo.js';
import type { FileChange, FileState } from './trees.js';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const ZERO = '0000000';
/** Files larger than this together are not diffed line by line (Myers diff is quadratic at worst). */
const DIFF_LIMIT = 8 * 1024 * 1024;
const DIFF_TIMEOUT_MS = 3000;
const OUTPUT_BUDGET = 1024 * 1024;

function lineCount(bytes: Buffer): number {
  let n = 0;
  for (const byte of bytes) if (byte === 10) n++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== 10 ? n + 1 : n;
}

/** The commit's local time: minutes east of UTC from "+0130". */
function local(time: number, tz: string): Date {
  const sign = tz.startsWith('-') ? -1 : 1;
  const minutes = sign * (Number(tz.slice(1, 3)) * 60 + Number(tz.slice(3, 5)));
  return new Date((time + minutes * 60) * 1000);
}

/** git's default date: "Thu Jan 4 10:00:00 2024 +0100". */
export function gitDate(time: number, tz: string): string {
  const d = local(time, tz);
  const hms = [d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ${hms} ${d.getUTCFullYear()} ${tz}`;
}

/** "2024-01-04 10:00:00 +0100" (blame, --date=iso). */
export function isoDate(time: number, tz: string): string {
  const d = local(time, tz);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} ${tz}`;
}

export function subject(c: Commit): string {
  return c.message.split('\n')[0] ?? '';
}

export function onelineHeader(c: Commit): string {
  return `${c.oid.slice(0, 7)} ${subject(c)}\n`;
}

export function mediumHeader(c: Commit): string {
  const lines = [`commit ${c.oid}`];
  if (c.parents.length > 1) lines.push(`Merge: ${c.parents.map((p) => p.slice(0, 7)).join(' ')}`);
  lines.push(`Author: ${c.author}`, `Date:   ${gitDate(c.authorTime, c.authorTz)}`, '');
  const body = c.message.replace(/\s+$/, '');
  for (const line of body.split('\n')) lines.push(`    ${line}`);
  return `${lines.join('\n')}\n`;
}

/** Bytes of one side of a change: from the object store, or from the working tree. */
export async function sideContent(repo: Repo, key: string, state: FileState | undefined, worktree: boolean): Promise<Buffer> {
  if (state === undefined) return Buffer.alloc(0);
  if (!worktree) return readBlob(repo.gitdir, state.oid);
  const abs = path.join(repo.root, fromKey(key));
  try {
    return state.mode === LINK_MODE ? fs.readlinkSync(abs, { encoding: 'buffer' }) : readBytes(abs);
  } catch {
    return Buffer.alloc(0);
  }
}

/** git's rule: a NUL byte in the first 8000 bytes makes a file binary. */
export function isBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

interface Counted {
  change: FileChange;
  added: number;
  removed: number;
  binary: boolean;
  oldSize: number;
  newSize: number;
}

async function count(repo: Repo, change: FileChange, worktree: boolean): Promise<Counted> {
  const a = await sideContent(repo, change.path, change.old, false);
  const b = await sideContent(repo, change.path, change.new, worktree);
  if (isBinary(a) || isBinary(b)) return { change, added: 0, removed: 0, binary: true, oldSize: a.length, newSize: b.length };
  const patch = a.length + b.length > DIFF_LIMIT ? undefined : structuredPatch('a', 'b', a.toString('utf8'), b.toString('utf8'), undefined, undefined, { context: 0, timeout: DIFF_TIMEOUT_MS });
  // Too large to diff line by line: count every line as changed.
  if (patch === undefined) return { change, added: lineCount(b), removed: lineCount(a), binary: false, oldSize: a.length, newSize: b.length };
  let added = 0;
  let removed = 0;
  for (const h of patch.hunks) {
    for (const line of h.lines) {
      if (line.startsWith('+')) added++;
      else if (line.startsWith('-')) removed++;
    }
  }
  return { change, added, removed, binary: false, oldSize: a.length, newSize: b.length };
}

/**
 * The --stat block as git lays it out for 80 columns: the graph gets at most 3/8 of the width,
 * long names are cut from the left ("...tail", from a '/' when there is one), bars scale linearly.
 */
export async function statBlock(repo: Repo, changes: FileChange[], worktree = false): Promise<string> {
  if (changes.length === 0) return '';
  const rows: Counted[] = [];
  for (const c of changes) rows.push(await count(repo, c, worktree));
  const names = rows.map((r) => quote(fromKey(r.change.path)));
  const width = 80;
  const maxLen = Math.max(...names.map((n) => n.length));
  let maxChange = 0;
  let binWidth = 0;
  let numberWidth = 0;
  for (const r of rows) {
    if (r.binary) {
      binWidth = Math.max(binWidth, 14 + String(r.newSize).length + String(r.oldSize).length);
      numberWidth = 3;
    } else maxChange = Math.max(maxChange, r.added + r.removed);
  }
  numberWidth = Math.max(numberWidth, String(maxChange).length);
  let graphWidth = maxChange + 4 > binWidth ? maxChange : binWidth - 4;
  let nameWidth = maxLen;
  if (nameWidth + numberWidth + 6 + graphWidth > width) {
    if (graphWidth > Math.trunc((width * 3) / 8) - numberWidth - 6) graphWidth = Math.max(Math.trunc((width * 3) / 8) - numberWidth - 6, 6);
    if (nameWidth > width - numberWidth - 6 - graphWidth) nameWidth = width - numberWidth - 6 - graphWidth;
    else graphWidth = width - numberWidth - 6 - nameWidth;
  }
  const scale = (n: number) => (n === 0 ? 0 : 1 + Math.trunc((n * (graphWidth - 1)) / maxChange));
  const lines = rows.map((r, i) => {
    let name = names[i]!;
    let prefix = '';
    if (name.length > nameWidth) {
      prefix = '...';
      name = name.slice(name.length - (nameWidth - 3));
      const slash = name.indexOf('/');
      if (slash >= 0) name = name.slice(slash);
    }
    const cell = `${prefix}${name}`.padEnd(nameWidth);
    if (r.binary) return r.oldSize === 0 && r.newSize === 0 ? ` ${cell} | Bin` : ` ${cell} | Bin ${r.oldSize} -> ${r.newSize} bytes`;
    let plus = r.added;
    let minus = r.removed;
    if (graphWidth <= maxChange) {
      let total = scale(plus + minus);
      if (total < 2 && plus > 0 && minus > 0) total = 2;
      if (plus < minus) {
        plus = scale(plus);
        minus = total - plus;
      } else {
        minus = scale(minus);
        plus = total - minus;
      }
    }
    const changed = r.added + r.removed;
    return ` ${cell} | ${String(changed).padStart(numberWidth)}${changed > 0 ? ' ' : ''}${'+'.repeat(plus)}${'-'.repeat(minus)}`;
  });
  const added = rows.reduce((s, r) => s + r.added, 0);
  const removed = rows.reduce((s, r) => s + r.removed, 0);
  let summary = ` ${rows.length} file${rows.length === 1 ? '' : 's'} changed`;
  if (added > 0 || removed === 0) summary += `, ${added} insertion${added === 1 ? '' : 's'}(+)`;
  if (removed > 0 || added === 0) summary += `, ${removed} deletion${removed === 1 ? '' : 's'}(-)`;
  return `${lines.join('\n')}\n${summary}\n`;
}

export function nameOnly(changes: FileChange[]): string {
  return changes.map((c) => `${quote(fromKey(c.path))}\n`).join('');
}

export function nameStatus(changes: FileChange[]): string {
  return changes.map((c) => `${c.old === undefined ? 'A' : c.new === undefined ? 'D' : c.old.mode !== c.new.mode && (c.old.mode === LINK_MODE) !== (c.new.mode === LINK_MODE) ? 'T' : 'M'}\t${quote(fromKey(c.path))}\n`).join('');
}

/** Unified diff of all changes, each with git's `diff --git` header (stops after OUTPUT_BUDGET characters). */
export async function patchText(repo: Repo, changes: FileChange[], worktree = false): Promise<string> {
  const parts: string[] = [];
  let size = 0;
  for (const [i, c] of changes.entries()) {
    if (size > OUTPUT_BUDGET) {
      parts.push(`... (${changes.length - i} more changed file(s) not shown: add -- path to see one, or use --stat)\n`);
      break;
    }
    // A link that became a file (or back) is shown as git does: a deletion and an addition.
    if (c.old !== undefined && c.new !== undefined && (c.old.mode === LINK_MODE) !== (c.new.mode === LINK_MODE)) {
      parts.push(await filePatch(repo, { path: c.path, old: c.old, new: undefined }, worktree));
      parts.push(await filePatch(repo, { path: c.path, old: undefined, new: c.new }, worktree));
    } else {
      parts.push(await filePatch(repo, c, worktree));
    }
    size += parts[parts.length - 1]!.length;
  }
  return parts.join('');
}

async function filePatch(repo: Repo, c: FileChange, worktree: boolean): Promise<string> {
  const name = fromKey(c.path);
  const a = quote(`a/${name}`);
  const b = quote(`b/${name}`);
  const lines = [`diff --git ${a} ${b}`];
  const oldId = c.old ? c.old.oid.slice(0, 7) : ZERO;
  const newId = c.new ? c.new.oid.slice(0, 7) : ZERO;
  if (c.old === undefined) lines.push(`new file mode ${c.new!.mode}`);
  else if (c.new === undefined) lines.push(`deleted file mode ${c.old.mode}`);
  else if (c.old.mode !== c.new.mode) lines.push(`old mode ${c.old.mode}`, `new mode ${c.new.mode}`);
  const sameMode = c.old !== undefined && c.new !== undefined && c.old.mode === c.new.mode;
  if (c.old?.oid !== c.new?.oid) lines.push(`index ${oldId}..${newId}${sameMode ? ` ${c.new!.mode}` : ''}`);
  const before = await sideContent(repo, c.path, c.old, false);
  const after = await sideContent(repo, c.path, c.new, worktree);
  const from = c.old === undefined ? '/dev/null' : a;
  const to = c.new === undefined ? '/dev/null' : b;
  if (c.old?.oid === c.new?.oid) return `${lines.join('\n')}\n`;
  if (isBinary(before) || isBinary(after)) {
    lines.push(`Binary files ${from} and ${to} differ`);
    return `${lines.join('\n')}\n`;
  }
  const oldText = before.toString('utf8');
  const patch = before.length + after.length > DIFF_LIMIT ? undefined : structuredPatch(name, name, oldText, after.toString('utf8'), undefined, undefined, { context: 3, timeout: DIFF_TIMEOUT_MS });
  if (patch === undefined) {
    lines.push(`(${before.length} -> ${after.length} bytes: too large to show as a line diff here; see the file with git show REV:${name})`);
    return `${lines.join('\n')}\n`;
  }
  // git ends a ---/+++ name that contains a space with a tab, so patch tools know where it ends.
  const tab = (n: string) => (n.includes(' ') ? `${n}\t` : n);
  if (patch.hunks.length > 0) lines.push(`--- ${tab(from)}`, `+++ ${tab(to)}`);
  const oldLines = oldText.split('\n');
  for (const h of patch.hunks) {
    const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
    const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
    const range = (start: number, n: number) => (n === 1 ? `${start}` : `${start},${n}`);
    const fn = funcLine(oldLines, h.oldStart - 2);
    lines.push(`@@ -${range(oldStart, h.oldLines)} +${range(newStart, h.newLines)} @@${fn ? ` ${fn}` : ''}`);
    lines.push(...h.lines);
  }
  return `${lines.join('\n')}\n`;
}

/** git's default hunk context: the nearest earlier line starting with a letter, '_' or '$' (80 bytes, trailing spaces cut). */
function funcLine(lines: string[], from: number): string | undefined {
  for (let i = Math.min(from, lines.length - 1); i >= 0; i--) {
    const line = lines[i]!;
    if (/^[A-Za-z_$]/.test(line)) {
      const bytes = Buffer.from(line.replace(/\r$/, ''));
      return bytes.subarray(0, 80).toString('utf8').replace(/\s+$/, '');
    }
  }
  return undefined;
}

/**
 * Names as git prints them with core.quotePath=false: UTF-8 names as they are (an LLM can use
 * them as paths again), quoted with C escapes only when they hold quotes, backslashes or controls.
 */
export function quote(name: string): string {
  if (!/["\\\u0000-\u001f\u007f]/.test(name)) return name;
  const named: Record<string, string> = { '\u0007': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r', '"': '"', '\\': '\\' };
  let out = '"';
  for (const ch of name) {
    if (named[ch] !== undefined) out += `\\${named[ch]}`;
    else if (ch < ' ' || ch === '\u007f') out += `\\${ch.charCodeAt(0).toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
