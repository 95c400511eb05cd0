import { z } from 'zod';
import { shedError } from '../core/base/errors.js';
import { readFile } from '../core/base/fs/atomic.js';
import { applyTextPatch, splitLines, type Position, type TextPatch } from '../core/base/text/patch.js';
import { runTextPatch } from '../core/base/text/jobs.js';
import { translatePattern } from '../core/base/text/regex.js';
import type { CallContext } from '../registry/define.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, lineNumber, messageParam, modeParam, pathParam, unlisted, zoneParam } from '../registry/params.js';
import { locate, requireFile, requireNotRoot, type ZonedPath } from '../core/base/files/located.js';
import { looksBinary } from '../core/base/text/format.js';
import { underLock, writeChecked } from '../core/services/write.js';

const WRITE_ZONES = ['storage', 'documents', 'group'] as const;


export const shedPatchText = defineFunction({
  name: 'shed_patch_text',
  category: 'write',
  summary: 'Insert, append, or replace text in a file (by line number or regex); overwrite=true replaces the whole file.',
  description: 'Edit a text file. position: start | end | before/after (line, or first line matching pattern) | replace (lines line..end_line, or the pattern\'s match). overwrite=true replaces the file.',
  params: {
    zone: zoneParam(WRITE_ZONES),
    path: pathParam(),
    content: z.string().describe('Text; whole lines for line positions'),
    position: z.enum(['start', 'end', 'before', 'after', 'replace']).default('end').describe('Where to write'),
    line: lineNumber('Line number'),
    end_line: lineNumber('Last line to replace'),
    pattern: z.string().optional().describe('Regex (no backreferences or lookarounds) instead of line'),
    regex_flags: z.string().optional().describe('Any of i, m, s'),
    match_all: z.boolean().default(false).describe('Every match, not only the first'),
    overwrite: z.boolean().default(false).describe('Replace the whole file'),
    safe: unlisted(z.boolean().default(true).describe('true: lock the file during the edit; false: write even while this conversation has a locked edit open on it.')),
    group: groupParam,
    message: messageParam,
    mode: modeParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: WRITE_ZONES, writes: true },
  mutates: true,
  example: { zone: 'storage', path: 'notes.txt', content: 'New line', position: 'end' },
  overwriteIgnores: ['position', 'line', 'end_line', 'pattern', 'regex_flags', 'match_all'],
  paramHints: {
    position: 'To replace the whole file use overwrite=true (not position="overwrite"); "at" is a shed_patch_bytes position.',
    line: 'Lines start at 1.',
    end_line: 'Lines start at 1; end_line goes with position="replace" and line.',
  },
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, args.group);
    const target = locate(zone, args.path, 'path', 'write', args.allow_zone_in_path);
    requireNotRoot(target);
    const patch = args.overwrite ? undefined : checkPositioning(args);
    const outcome = await underLock(ctx, target, args.safe, () => writeText(ctx, target, args.content, patch));
    const position = patch ? patch.position : 'overwrite';
    const data: Record<string, unknown> = {
      path: target.rel,
      zone: zone.label,
      position,
      lines_affected: outcome.linesAffected,
      created: outcome.created,
      file_size: outcome.size,
      safe_mode: args.safe,
    };
    if (outcome.matches !== undefined) data.pattern_matches = outcome.matches;
    const verb = outcome.created ? 'Created' : patch ? `Patched (${outcome.where})` : 'Overwrote';
    return {
      data,
      message: `${verb} ${target.shown}: ${outcome.linesAffected} line${outcome.linesAffected === 1 ? '' : 's'} affected, ${outcome.size} bytes.`,
      change: { zone, paths: [target.rel], summary: `Patch ${target.rel}: ${position}` },
    };
  },
});

interface PositionArgs {
  position: Position;
  line?: number | undefined;
  end_line?: number | undefined;
  pattern?: string | undefined;
  regex_flags?: string | undefined;
  match_all: boolean;
  zone: string;
  path: string;
}

/** Checks that the positioning parameters make sense together, before anything is read. */
function checkPositioning(args: PositionArgs): TextPatch {
  const { position } = args;
  const call = (extra: string) => `shed_patch_text(zone="${args.zone}", path="${args.path}", content="...", ${extra})`;
  const needsAnchor = position === 'before' || position === 'after' || position === 'replace';
  if (needsAnchor && args.line === undefined && args.pattern === undefined) {
    throw shedError('MISSING_PARAMETER', `position="${position}" needs line= (a line number) or pattern= (a regular expression).`, {
      details: { parameter: 'line', position },
      hint: `Example: ${call(`position="${position}", line=3`)}`,
    });
  }
  if (args.line !== undefined && args.pattern !== undefined) {
    throw shedError('INVALID_PARAMETER', `Give either 'line' or 'pattern', not both (got line=${args.line} and pattern="${args.pattern}").`, {
      details: { parameter: 'pattern', received: args.pattern },
      hint: `Example: ${call(`position="${position}", line=${args.line}`)}`,
    });
  }
  if (args.end_line !== undefined) {
    if (position !== 'replace' || args.line === undefined) {
      throw shedError('INVALID_PARAMETER', `'end_line' only works with position="replace" and line= (got position="${position}"${args.line === undefined ? ', no line' : ''}).`, {
        details: { parameter: 'end_line', received: args.end_line },
        hint: `Example: ${call('position="replace", line=2, end_line=4')}`,
      });
    }
    if (args.end_line < args.line) {
      throw shedError('INVALID_PARAMETER', `'end_line' (${args.end_line}) is before 'line' (${args.line}).`, {
        details: { parameter: 'end_line', received: args.end_line },
        hint: `Example: ${call(`position="replace", line=${args.line}, end_line=${args.line + 1}`)}`,
      });
    }
  }
  if ((position === 'start' || position === 'end') && (args.line !== undefined || args.pattern !== undefined)) {
    throw shedError('INVALID_PARAMETER', `position="${position}" does not use line or pattern; use position="before", "after" or "replace" with them.`, {
      details: { parameter: 'position', received: position },
      hint: `Example: ${call(`position="after", line=${args.line ?? 1}`)}`,
    });
  }
  const patch: TextPatch = { position, line: args.line, endLine: args.end_line, matchAll: args.match_all };
  if (args.pattern !== undefined) {
    const compiled = translatePattern(args.pattern, args.regex_flags ?? '');
    patch.pattern = compiled.pattern;
    patch.matchAll = args.match_all || compiled.matchAll;
  }
  return patch;
}

interface WriteOutcome {
  created: boolean;
  size: number;
  linesAffected: number;
  where: string;
  matches?: number;
}

async function writeText(ctx: CallContext, target: ZonedPath, content: string, patch: TextPatch | undefined): Promise<WriteOutcome> {
  const exists = target.stat !== undefined;
  if (exists) requireFile(target);
  let next: string;
  let linesAffected: number;
  let where = 'overwrite';
  let matches: number | undefined;
  if (patch === undefined) {
    next = content;
    linesAffected = splitLines(content).length;
  } else if (!exists) {
    if (patch.position !== 'start' && patch.position !== 'end') {
      throw shedError('FILE_NOT_FOUND', `${target.shown} does not exist, so position="${patch.position}" has nothing to anchor to.`, {
        details: { parameter: 'path', path: target.rel },
        hint: `Create it first: shed_create_file(zone="${target.zone.name}", path="${target.rel}", content="...")`,
      });
    }
    ({ text: next, linesAffected, where } = applyTextPatch('', content, patch));
  } else {
    const original = decodeText(target);
    // The model's pattern runs on a worker with a deadline (the default command timeout), never here.
    const outcome = patch.pattern === undefined ? applyTextPatch(original, content, patch) : await runTextPatch(original, content, patch, ctx.valves.exec_timeout_default);
    ({ text: next, linesAffected, where, matches } = outcome);
  }
  const bytes = Buffer.from(next, 'utf8');
  const oldSize = exists ? target.stat!.size : 0;
  await writeChecked(ctx, target, bytes, oldSize);
  return { created: !exists, size: bytes.length, linesAffected, where, ...(matches === undefined ? {} : { matches }) };
}

/** The file as text, refusing anything that a text edit could not write back unchanged. */
function decodeText(target: ZonedPath): string {
  const bytes = readFile(target.abs);
  const advice = `Use shed_patch_bytes for binary data, or overwrite=true to replace the whole file.`;
  if (looksBinary(bytes)) {
    throw shedError('INVALID_FORMAT', `${target.shown} looks binary (it contains NUL bytes); a text edit could corrupt it.`, {
      details: { path: target.rel },
      hint: advice,
    });
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw shedError('INVALID_FORMAT', `${target.shown} is not valid UTF-8 (maybe Latin-1 or Windows-1252); editing it as text would damage its other lines.`, {
      details: { path: target.rel },
      hint: `Convert it first: shed_exec(zone="${target.zone.name}", cmd="iconv", args=["-f", "latin1", "-t", "utf-8", "${target.rel}"], stdout_file="${target.rel}.utf8"). ${advice}`,
    });
  }
}
