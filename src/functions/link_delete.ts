import { z } from 'zod';
import { shedError, showValue } from '../core/base/errors.js';
import { deleteOpenWebUILink } from '../core/services/links/openwebui.js';
import { deleteStandaloneLink } from '../core/services/links/standalone.js';
import { defineFunction } from '../registry/define.js';

export const shedLinkDelete = defineFunction({
  name: 'shed_link_delete',
  category: 'links',
  summary: 'Revoke a link.',
  description: 'Delete one of your download links; its URL stops working.',
  params: {
    link_id: z.string().optional().describe('From shed_link_list.'),
    file_id: z.string().optional().describe('Old name of link_id.'),
  },
  example: { link_id: 'Xy3...' },
  async handler(args, ctx) {
    const id = (args.link_id ?? args.file_id ?? '').trim();
    if (id === '') {
      throw shedError('MISSING_PARAMETER', 'link_id is required: the id of the link to delete.', {
        details: { parameter: 'link_id', received: args.link_id },
        hint: 'shed_link_list() shows your links; then shed_link_delete(link_id="...").',
      });
    }
    if (args.link_id !== undefined && args.file_id !== undefined && args.link_id.trim() !== args.file_id.trim()) {
      throw shedError('INVALID_PARAMETER', `link_id ${showValue(args.link_id)} and file_id ${showValue(args.file_id)} differ; give only link_id.`, {
        details: { parameter: 'file_id', received: args.file_id },
        hint: `shed_link_delete(link_id=${JSON.stringify(args.link_id)})`,
      });
    }
    return ctx.valves.link_backend === 'openwebui' ? deleteOpenWebUILink(ctx, id) : deleteStandaloneLink(ctx, id);
  },
});
