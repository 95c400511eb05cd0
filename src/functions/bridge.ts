/**
 * The zone bridges (reference section 1.10): move or copy a file or folder from one personal zone
 * to another. Shared by the four shed_move_* / shed_copy_* functions, which only say which zones
 * and whether the source stays.
 *
 * Rules: both paths go through the resolver of their own zone; an existing destination needs
 * overwrite=true and is only replaced by the same kind (file by file, folder by folder); the new
 * entry appears in one rename, so a failed copy leaves the destination as it was and the source
 * untouched (a move deletes its source only after the copy is in place); symbolic links and
 * special files never cross zones (a link's meaning depends on where it sits): they are skipped,
 * listed, and a move leaves them in the source. Moves within one disk are a single rename.
 */
import path from 'node:path';
import { z } from 'zod';
import { copyInto, removeCopied, renameInto, scanTree } from '../core/services/bridges/copy.js';
import { plural, renderCall } from '../core/base/text/format.js';
import { shedError } from '../core/base/errors.js';
import { diskRel, ensureNoForeignLock } from '../core/base/files/entries.js';
import { locate, requireNotRoot } from '../core/base/files/located.js';
import { requireNamesKept } from '../core/base/blocked/identity.js';
import { ensureFileSize, ensureQuota } from '../core/services/quota/quota.js';
import type { ZoneName } from '../core/base/zones/zones.js';
import { defineFunction, type CallContext, type HandlerResult } from '../registry/define.js';
import { allowZoneInPath, messageParam } from '../registry/params.js';
import { adoptTree } from '../core/base/fs/owner.js';

export interface BridgeSpec {
  name: `shed_${string}`;
  from: Exclude<ZoneName, 'group'>;
  to: Exclude<ZoneName, 'group'>;
  /** The source is removed once the copy is in place. */
  move: boolean;
  summary: string;
  description: string;
}

const LABELS: Record<string, string> = { uploads: 'Uploads', storage: 'Storage', documents: 'Documents' };

export function defineBridge(spec: BridgeSpec) {
  const versioned = spec.from === 'documents' || spec.to === 'documents';
  const example = { src: 'report.csv', dest: spec.to === 'documents' ? 'reports/report.csv' : 'report.csv' };
  return defineFunction({
    name: spec.name,
    category: 'bridges',
    summary: spec.summary,
    description: spec.description,
    params: {
      src: z.string().min(1).describe(`Path in ${LABELS[spec.from]}`),
      dest: z.string().min(1).describe(`Full new path in ${LABELS[spec.to]}`),
      ...(versioned ? { message: messageParam } : {}),
      overwrite: z.boolean().default(false).describe('Replace an existing dest'),
      allow_zone_in_path: allowZoneInPath,
    },
    example,
    mutates: true,
    hostArgs: ['__event_emitter__'], // large copies report progress
    async handler(args, ctx) {
      return runBridge(spec, args as BridgeArgs, ctx);
    },
  });
}

interface BridgeArgs {
  src: string;
  dest: string;
  overwrite: boolean;
  allow_zone_in_path: boolean;
}

async function runBridge(spec: BridgeSpec, args: BridgeArgs, ctx: CallContext): Promise<HandlerResult> {
  const from = ctx.zone(spec.from, undefined);
  const to = ctx.zone(spec.to, undefined);
  const call = (extra: Record<string, unknown>) => renderCall(spec.name, { src: args.src, dest: args.dest, ...extra });
  // A move takes the entry itself (a link is not followed); a copy reads what the path leads to.
  const src = locate(from, args.src, 'src', spec.move ? 'delete' : 'read', args.allow_zone_in_path);
  requireNotRoot(src, 'src');
  const dst = locate(to, args.dest, 'dest', 'write', args.allow_zone_in_path);
  requireNotRoot(dst, 'dest');
  const st = src.stat;
  if (st === undefined) {
    throw shedError('FILE_NOT_FOUND', `src ${src.shown} does not exist.`, {
      details: { parameter: 'src', path: src.rel, zone: from.label },
      hint:
        spec.from === 'uploads'
          ? 'Files attached in the chat must be imported first: shed_import(import_all=true), then shed_tree(zone="uploads") shows their names.'
          : `Check the name with shed_tree(zone="${spec.from}"); paths are case-sensitive.`,
    });
  }
  if (st.isSymbolicLink()) {
    throw shedError('NOT_A_FILE', `src ${src.shown} is a symbolic link; links are not moved between zones.`, {
      details: { parameter: 'src', path: src.rel },
      hint: `Move the file it points to instead, or delete the link with shed_delete(zone="${spec.from}", path="${src.rel}").`,
    });
  }
  if (!st.isFile() && !st.isDirectory()) {
    throw shedError('NOT_A_FILE', `src ${src.shown} is not a regular file or folder.`, { details: { parameter: 'src', path: src.rel }, hint: `Example: ${call({})}` });
  }
  const scan = await scanTree(src.abs, st);
  // A folder moved or copied under another name must not rename a blocked entry inside it to an unblocked name.
  if (scan.folder) await requireNamesKept(from.blocked, from.root, diskRel(src), diskRel(dst), 'dest', args.dest);
  const owner = { user_id: ctx.user.id, conv_id: ctx.convId };
  const maxAge = ctx.valves.lock_max_age_hours;
  if (spec.move) ensureNoForeignLock(src, scan.folder, owner, maxAge);

  let replacedBytes = 0;
  const existing = dst.stat;
  if (existing !== undefined) {
    const destFolder = existing.isDirectory();
    if (!args.overwrite) {
      throw shedError('FILE_EXISTS', `dest ${dst.shown} already exists${destFolder ? ' (a folder)' : ''}.`, {
        details: { parameter: 'dest', path: dst.rel, is_directory: destFolder },
        hint:
          destFolder && !scan.folder
            ? `dest is the new path of the file itself: to put it inside that folder use ${call({ dest: `${dst.rel}/${path.posix.basename(src.rel)}` })}; to replace, pass overwrite=true.`
            : `To replace it: ${call({ overwrite: true })}; otherwise choose another dest.`,
      });
    }
    if (destFolder !== scan.folder) {
      throw shedError('FILE_EXISTS', `dest ${dst.shown} is a ${destFolder ? 'folder' : 'file'} and src is a ${scan.folder ? 'folder' : 'file'}; overwrite only replaces the same kind.`, {
        details: { parameter: 'dest', path: dst.rel, is_directory: destFolder },
        hint: destFolder ? `To put the file inside that folder: ${call({ dest: `${dst.rel}/${path.posix.basename(src.rel)}` })}` : `Choose another dest, or delete the file first with shed_delete(zone="${spec.to}", path="${dst.rel}").`,
      });
    }
    ensureNoForeignLock(dst, destFolder, owner, maxAge);
    replacedBytes = (await scanTree(dst.abs, existing)).bytes;
  }
  if (!spec.move) {
    // A copy creates files: the same limits as any write. A move only relocates bytes within the user's quota.
    if (scan.largest.size > 0) ensureFileSize(scan.largest.size, ctx.valves.max_file_size_mb, `${src.shown}${scan.folder ? `/${scan.largest.rel}` : ''}`);
    await ensureQuota(to.scope, scan.bytes - replacedBytes);
  }

  if (scan.folder && scan.files > 200) await ctx.emit(`${spec.move ? 'Moving' : 'Copying'} ${scan.files} files to ${dst.shown}...`);
  // A move on one disk is a single rename; otherwise copy beside the destination, then rename into place.
  if (!(spec.move && scan.skipped.length === 0 && (await renameInto(src.abs, dst.abs, existing !== undefined)))) {
    await copyInto(src.abs, scan.folder, dst.abs, existing !== undefined);
    if (spec.move) await removeCopied(src.abs, scan);
  } else {
    // Moved as it was (an upload is the server's): now the destination folder's owner's.
    await adoptTree(dst.abs);
  }
  if (scan.folder && scan.files > 200) await ctx.emit(`${spec.move ? 'Moved' : 'Copied'} ${scan.files} files to ${dst.shown}.`, true);

  const data: Record<string, unknown> = {
    src: src.rel,
    dest: dst.rel,
    from: from.label,
    to: to.label,
    kind: scan.folder ? 'folder' : 'file',
    files: scan.files,
    bytes: scan.bytes,
    replaced: existing !== undefined,
    source_kept: !spec.move,
  };
  if (scan.skipped.length > 0) data.skipped = scan.skipped.slice(0, 50);
  const what = scan.folder ? `the folder ${src.shown} (${plural(scan.files, 'file')})` : src.shown;
  const skippedNote = scan.skipped.length > 0 ? ` ${plural(scan.skipped.length, 'link or special file')} ${spec.move ? 'stayed in the source' : 'were not copied'} (links never cross zones).` : '';
  const message = `${spec.move ? 'Moved' : 'Copied'} ${what} to ${dst.shown}${existing !== undefined ? ' (replacing what was there)' : ''}.${skippedNote}`;
  const result: HandlerResult = { data, message };
  if (to.versioned) result.change = { zone: to, paths: [diskRel(dst)], summary: `Import ${dst.rel} from ${from.label}` };
  else if (spec.move && from.versioned) result.change = { zone: from, paths: [diskRel(src)], summary: `Move ${src.rel} to ${to.label}` };
  return result;
}

