import { z } from 'zod';
import { ShedError, shedError, type ErrorCode } from '../core/base/errors.js';
import { atomicWrite } from '../core/base/fs/atomic.js';
import { errnoCode } from '../core/base/paths/resolve.js';
import { ensureFileSize, ensureQuota } from '../core/services/quota/quota.js';
import { copyFromFd } from '../core/services/uploads/copy.js';
import { fallbackName, safeName, uniqueName } from '../core/services/uploads/names.js';
import { importArea, openSource, Refusal, type Area } from '../core/services/uploads/sources.js';
import type { Zone } from '../core/base/zones/zones.js';
import type { AttachedFile } from '../core/services/host-bridge.js';
import { defineFunction, type CallContext } from '../registry/define.js';
import { allowZoneInPath } from '../registry/params.js';
import { locate, type ZonedPath } from '../core/base/files/located.js';
import { plural } from '../core/base/text/format.js';

const MIB = 1024 * 1024;

interface Imported {
  name: string;
  path: string;
  size: number;
  source: 'file' | 'inline';
  replaced: boolean;
  renamed_from?: string;
  note?: string;
}

interface Failed {
  name: string;
  code: ErrorCode;
  reason: string;
}

export const shedImport = defineFunction({
  name: 'shed_import',
  category: 'bridges',
  summary: 'Copy chat attachments into Uploads.',
  description: 'Copy files the user attached in this chat into Uploads (import_all=true, or one filename).',
  params: {
    filename: z.string().default('').describe('Name of one attached file'),
    import_all: z.boolean().default(false).describe('Import every attached file'),
    earlier_messages: z.boolean().default(false).describe("Also earlier messages' files"),
    dest_subdir: z.string().default('').describe('Folder inside Uploads'),
    allow_zone_in_path: allowZoneInPath,
  },
  mutates: true,
  hostArgs: ['__files__', '__event_emitter__'],
  example: { import_all: true },
  async handler(args, ctx) {
    let attached: AttachedFile[];
    try {
      attached = ctx.attachedFiles();
    } catch {
      attached = []; // an unreadable attachment list is no attachment at all
    }
    // Hosts that read the chat itself (Open WebUI over OpenAPI or MCP with the user's session).
    let chatProblem: string | undefined;
    if (ctx.host.chatFiles) {
      try {
        const fromChat = await ctx.host.chatFiles({ earlier: args.earlier_messages });
        const known = new Set(attached.map((f) => f.id).filter((id) => id !== undefined));
        attached = [...attached, ...fromChat.filter((f) => f.id === undefined || !known.has(f.id))];
      } catch (err) {
        chatProblem = (err as Error).message;
      }
    }
    const skipped = ctx.host.skippedFiles?.() ?? [];
    const skippedText = skipped.length > 0 ? ` Not offered: ${skipped.map((f) => `${f.name} (${f.reason})`).join('; ')}.` : '';
    const skippedOne = (name: string) => skipped.find((f) => f.name === name || f.name === `${name}/`);
    const notOffered = args.filename ? skippedOne(args.filename) : undefined;
    if (notOffered !== undefined) {
      throw shedError('FILE_NOT_FOUND', `'${args.filename}' is not offered for import: ${notOffered.reason}.`, {
        details: { parameter: 'filename', received: args.filename, attached: attached.map((f) => f.name) },
        hint: 'Ask the user to put the file itself (not a link, not a folder) directly in the import folder, then call shed_import again.',
      });
    }
    if (attached.length === 0 && chatProblem !== undefined) {
      throw shedError('IMPORT_REFUSED', `The chat's attachments could not be read: ${chatProblem}.`, {
        hint: 'This is a setting of the Fileshed connection in Open WebUI (Admin Settings > External Tools), not something the user can fix by attaching again.',
      });
    }
    if (attached.length === 0 && ctx.host.chatFiles) {
      throw shedError('FILE_NOT_FOUND', `No files are attached to ${args.earlier_messages ? 'any message of this chat' : "the user's current message"}.`, {
        hint: args.earlier_messages
          ? 'Ask the user to attach the file in the chat, then call shed_import(import_all=true) again. Files imported earlier are listed by shed_tree(zone="uploads").'
          : 'Files attached to earlier messages of this chat: shed_import(import_all=true, earlier_messages=true). Files imported earlier are listed by shed_tree(zone="uploads").',
      });
    }
    if (attached.length === 0) {
      // With a hint from the host (what to set up), the files may well be attached but unreachable.
      throw shedError('FILE_NOT_FOUND', `${ctx.host.attachHint ? 'No attached files reached Fileshed in this call' : 'No files are attached to this conversation'}.${skippedText}`, {
        hint: `${ctx.host.attachHint ?? 'Ask the user to attach the file in the chat'}, then call shed_import(import_all=true) again. Files imported earlier are listed by shed_tree(zone="uploads").`,
      });
    }
    const named = attached.map((file, index) => ({ file, index, name: safeName(file.name, fallbackName(file.id, index)) }));
    const list = named.map((n) => n.name);
    let chosen = named;
    if (args.filename) {
      chosen = named.filter((n) => n.file.name === args.filename || n.name === args.filename);
      if (chosen.length === 0) {
        throw shedError('FILE_NOT_FOUND', `No attached file is named '${args.filename}'. Attached: ${list.join(', ')}.${skippedText}`, {
          details: { parameter: 'filename', received: args.filename, attached: list },
          hint: `Use one of the names exactly, e.g. shed_import(filename="${list[0]}"), or shed_import(import_all=true).`,
        });
      }
    } else if (!args.import_all) {
      throw shedError('MISSING_PARAMETER', `Say which attached files to import: import_all=true for all ${plural(list.length, 'file')}, or filename="..." for one. Attached: ${list.join(', ')}.`, {
        details: { parameter: 'import_all', attached: list },
        hint: `Example: shed_import(import_all=true) or shed_import(filename="${list[0]}")`,
      });
    }

    const zone = ctx.zone('uploads', undefined);
    const folder = args.dest_subdir ? locate(zone, args.dest_subdir, 'dest_subdir', 'write', args.allow_zone_in_path) : undefined;
    if (folder?.stat !== undefined && !folder.stat.isDirectory()) {
      throw shedError('NOT_A_DIRECTORY', `dest_subdir ${folder.shown} is a file, not a folder.`, {
        details: { parameter: 'dest_subdir', received: args.dest_subdir },
        hint: 'Choose a folder name that is not taken by a file, e.g. dest_subdir="imports".',
      });
    }
    const area = importArea(ctx.valves, ctx.user.id);
    const maxBytes = ctx.valves.max_file_size_mb * MIB;
    const imported: Imported[] = [];
    const errors: Failed[] = [];
    const taken = new Set<string>();
    for (const [i, item] of chosen.entries()) {
      const name = uniqueName(item.name, taken);
      taken.add(name);
      await ctx.emit(`Importing ${name} (${i + 1}/${chosen.length})`);
      try {
        const target = locate(zone, folder?.rel ? `${folder.rel}/${name}` : name, 'filename', 'write', true);
        imported.push({ ...(await importOne(ctx, zone, area, item.file, target, maxBytes)), ...(name !== item.file.name ? { renamed_from: item.file.name } : {}) });
      } catch (err) {
        if (err instanceof Refusal || err instanceof ShedError) errors.push({ name, code: err.code, reason: err.message });
        else if (errnoCode(err) !== undefined) errors.push({ name, code: 'IO_ERROR', reason: `the storage refused the write (${errnoCode(err)})` });
        else throw err;
      }
    }
    await ctx.emit(`Imported ${imported.length} of ${plural(chosen.length, 'file')}`, true);

    if (imported.length === 0) {
      const first = errors[0]!;
      throw shedError(first.code, `Nothing was imported: ${errors.map((e) => `${e.name}: ${e.reason}`).join('; ')}.`, {
        details: { errors },
        hint: first.code === 'IMPORT_REFUSED' ? 'An admin can allow the upload folder with the valve import_allowed_paths; otherwise ask the user to paste the content.' : 'See each reason; shed_stats shows the quota.',
      });
    }
    const names = imported.map((f) => f.path);
    const data: Record<string, unknown> = { zone: zone.label, imported, count: imported.length };
    if (errors.length > 0) data.errors = errors;
    if (skipped.length > 0 && args.import_all) data.not_offered = skipped;
    const failed = errors.length > 0 ? ` ${plural(errors.length, 'file')} could not be imported: ${errors.map((e) => `${e.name} (${e.reason})`).join('; ')}.` : '';
    return {
      data,
      message: `Imported ${plural(imported.length, 'file')} into Uploads: ${names.join(', ')}.${failed}${args.import_all ? skippedText : ''} Next: shed_tree(zone="uploads"), or shed_move_uploads_to_storage(src="${names[0]}", dest="${names[0]!.split('/').pop()}") to work on it.`,
    };
  },
});

async function importOne(ctx: CallContext, zone: Zone, area: Area, file: AttachedFile, target: ZonedPath, maxBytes: number): Promise<Imported> {
  if (target.stat?.isDirectory()) throw new Refusal('FILE_EXISTS', `a folder named ${target.shown} already exists in Uploads`);
  const oldSize = target.stat?.isFile() ? target.stat.size : 0;
  const base = { name: target.rel.split('/').pop()!, path: target.rel, replaced: target.stat !== undefined };
  let note: string | undefined;
  if (file.bytes !== undefined) return importBytes(ctx, zone, base, file.bytes, target, oldSize, 'file');
  if (file.path !== undefined) {
    try {
      const src = openSource(area, file.path, maxBytes);
      try {
        await ensureQuota(zone.scope, src.size - oldSize);
        const size = await copyFromFd(src.fd, target.abs, maxBytes);
        return { ...base, size, source: 'file' };
      } finally {
        src.close();
      }
    } catch (err) {
      if (!(err instanceof Refusal && err.fallback && file.content !== undefined)) throw err;
      note = `the file's path was not usable (${err.message}); its text content from the chat was imported instead`;
    }
  }
  if (file.content === undefined && file.fetch !== undefined) {
    let fetched: Uint8Array;
    try {
      fetched = await file.fetch(maxBytes);
    } catch (err) {
      throw new Refusal('IMPORT_REFUSED', `the chat platform did not deliver it (${(err as Error).message})`);
    }
    return importBytes(ctx, zone, base, fetched, target, oldSize, 'file', note);
  }
  if (file.content === undefined) throw new Refusal('FILE_NOT_FOUND', 'the host gave neither a readable path nor content for it');
  return importBytes(ctx, zone, base, Buffer.from(file.content, 'utf8'), target, oldSize, 'inline', note);
}

/** Bytes already in memory (inline text, host-given or fetched uploads): size cap, quota, atomic write. */
async function importBytes(ctx: CallContext, zone: Zone, base: Pick<Imported, 'name' | 'path' | 'replaced'>, bytes: Uint8Array, target: ZonedPath, oldSize: number, source: Imported['source'], note?: string): Promise<Imported> {
  ensureFileSize(bytes.length, ctx.valves.max_file_size_mb, target.shown);
  await ensureQuota(zone.scope, bytes.length - oldSize);
  await atomicWrite(target.abs, bytes);
  return { ...base, size: bytes.length, source, ...(note ? { note } : {}) };
}
