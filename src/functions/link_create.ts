import { z } from 'zod';
import { shedError, showValue } from '../core/base/errors.js';
import { locate, notFound } from '../core/base/files/located.js';
import { createOpenWebUILink } from '../core/services/links/openwebui.js';
import { createStandaloneLink } from '../core/services/links/standalone.js';
import { ZONE_NAMES } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, zoneParam } from '../registry/params.js';

export const shedLinkCreate = defineFunction({
  name: 'shed_link_create',
  category: 'links',
  summary: 'Download link to a file or folder.',
  description: 'Create an expiring download link to a file or folder (a folder opens a page listing it). Show clickable_link to the user.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    path: z.string().min(1).describe('File or folder, e.g. "report.pdf" ("." = zone root).'),
    group: groupParam,
    expires_hours: z.number().optional().describe('Hours the link works (default 24, max 168).'),
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  example: { zone: 'storage', path: 'report.pdf' },
  async handler(args, ctx) {
    const max = ctx.valves.link_max_hours;
    const hours = args.expires_hours ?? ctx.valves.link_default_hours;
    if (!Number.isFinite(hours) || hours <= 0 || hours > max) {
      throw shedError('INVALID_PARAMETER', `expires_hours must be more than 0 and at most ${max}; got ${showValue(args.expires_hours)}.`, {
        details: { parameter: 'expires_hours', received: args.expires_hours, expected: `0 < expires_hours <= ${max}` },
        hint: `Example: shed_link_create(zone="${args.zone}", path=${JSON.stringify(args.path)}, expires_hours=${Math.min(24, max)})`,
      });
    }
    const target = locate(ctx.zone(args.zone, args.group), args.path, 'path', 'read', args.allow_zone_in_path);
    if (target.stat === undefined) throw notFound(target);
    const isFolder = target.stat.isDirectory();
    if (!isFolder && !target.stat.isFile()) throw shedError('NOT_A_FILE', `${target.shown} is not a regular file or folder.`, { details: { parameter: 'path', path: target.rel } });
    if (ctx.valves.link_backend === 'openwebui') {
      if (isFolder) {
        throw shedError('NOT_A_FILE', `${target.shown} is a folder; Open WebUI links hold single files.`, {
          details: { parameter: 'path', path: target.rel },
          hint: `Zip it first: shed_zip(zone="${args.zone}", src=${JSON.stringify(target.rel || '.')}, dest="folder.zip"), then link the zip.`,
        });
      }
      return createOpenWebUILink(ctx, target);
    }
    if (target.zone.name === 'group' && ctx.host.groups !== undefined) {
      // The server re-checks membership at every download without the caller's session, so it can
      // only ask the standalone directory; a link to a host-managed group would never open.
      throw shedError('ZONE_FORBIDDEN', 'Links to group files need the standalone group directory; this platform manages groups itself.', {
        details: { zone: 'group', link_backend: 'standalone' },
        hint: 'Copy the file to your Storage and link it there, or ask an admin to set link_backend="openwebui".',
      });
    }
    return createStandaloneLink(ctx, target, isFolder ? 'folder' : 'file', hours);
  },
});
