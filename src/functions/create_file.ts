import { z } from 'zod';
import { defineFunction } from '../registry/define.js';
import { parseArgs } from '../registry/args.js';
import { allowZoneInPath, groupParam, messageParam, modeParam, pathParam, zoneParam } from '../registry/params.js';
import { shedPatchBytes } from './patch_bytes.js';
import { shedPatchText } from './patch_text.js';

const WRITE_ZONES = ['storage', 'documents', 'group'] as const;

/** The simple way to write a whole file: overwrite mode of shed_patch_text (text) or shed_patch_bytes (bytes). */
export const shedCreateFile = defineFunction({
  name: 'shed_create_file',
  category: 'write',
  summary: 'Create a file (or replace it) with the given content; folders are created as needed.',
  description: 'Create or replace a whole file; parent folders are created.',
  params: {
    zone: zoneParam(WRITE_ZONES),
    path: pathParam(),
    content: z.string().describe('Whole file content'),
    file_type: z.enum(['text', 'bytes']).default('text').describe('bytes: content is encoded bytes'),
    content_format: z.enum(['hex', 'base64', 'raw']).default('hex').describe('Encoding of bytes content'),
    group: groupParam,
    message: messageParam,
    mode: modeParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: WRITE_ZONES, writes: true },
  mutates: true,
  example: { zone: 'storage', path: 'reports/summary.md', content: '# Summary\n' },
  async handler(args, ctx) {
    const common = {
      zone: args.zone,
      path: args.path,
      content: args.content,
      overwrite: true,
      group: args.group,
      message: args.message,
      mode: args.mode,
      allow_zone_in_path: args.allow_zone_in_path,
    };
    const result =
      args.file_type === 'bytes'
        ? await shedPatchBytes.handler(parseArgs(shedPatchBytes, { ...common, content_format: args.content_format }), ctx)
        : await shedPatchText.handler(parseArgs(shedPatchText, common), ctx);
    if (result.change) result.change.summary = `${result.data?.created ? 'Create' : 'Replace'} ${result.change.paths[0] ?? args.path}`;
    return result;
  },
});
