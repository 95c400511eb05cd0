import fs from 'node:fs';
import { z } from 'zod';
import { atomicWrite, fsyncOffLoop, writeAllOffLoop } from '../core/base/fs/atomic.js';
import { lockFile, refreshLock } from '../core/base/locks/locks.js';
import { requireSession } from '../core/base/locks/session.js';
import { ensureFileSize } from '../core/services/quota/quota.js';
import { ensureCopyRoom } from '../core/services/quota/working-copies.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, pathParam, zoneParam } from '../registry/params.js';
import { EDIT_ZONES, editTarget } from '../core/base/files/edit-target.js';

export const shedLockeditOverwrite = defineFunction({
  name: 'shed_lockedit_overwrite',
  category: 'edit',
  summary: 'Replace/append the working copy.',
  description: 'Replace the working copy of a locked edit with content (append=true adds it at the end). Written exactly as given.',
  params: {
    zone: zoneParam(EDIT_ZONES),
    path: pathParam('The file being edited'),
    content: z.string().describe('New text of the working copy'),
    append: z.boolean().default(false).describe('Add at the end instead'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: EDIT_ZONES, writes: true },
  mutates: true,
  example: { zone: 'storage', path: 'report.md', content: '# Report\nNew text\n' },
  async handler(args, ctx) {
    const t = editTarget(ctx, args, 'write');
    const s = requireSession(t.zone, t.key, t.owner, t.names);
    const bytes = Buffer.from(args.content, 'utf8');
    const oldCopy = s.copyStat!.size;
    const newSize = args.append ? oldCopy + bytes.length : bytes.length;
    ensureFileSize(newSize, ctx.valves.max_file_size_mb, `The working copy of ${t.target.shown}`);
    await ensureCopyRoom(t.zone.scope, newSize - oldCopy);
    if (args.append) {
      const fd = fs.openSync(s.copy, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_NOFOLLOW);
      try {
        await writeAllOffLoop(fd, bytes);
        await fsyncOffLoop(fd);
      } finally {
        fs.closeSync(fd);
      }
    } else {
      await atomicWrite(s.copy, bytes);
    }
    await refreshLock(lockFile(t.zone, t.key)!, s.lock!); // an active edit does not expire
    const mode = args.append ? 'append' : 'overwrite';
    return {
      data: { zone: t.zone.label, path: t.target.rel, bytes_written: bytes.length, new_size: newSize, mode },
      message: `${args.append ? 'Appended' : 'Wrote'} ${bytes.length} bytes ${args.append ? 'to' : 'as'} the working copy of ${t.target.shown} (now ${newSize} bytes). Not saved yet: call ${t.names.save} to write it to the file.`,
    };
  },
});
