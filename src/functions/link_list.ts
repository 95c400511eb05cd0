import { listOpenWebUILinks } from '../core/services/links/openwebui.js';
import { listStandaloneLinks } from '../core/services/links/standalone.js';
import { defineFunction } from '../registry/define.js';

export const shedLinkList = defineFunction({
  name: 'shed_link_list',
  category: 'links',
  summary: 'Your links.',
  description: 'List your download links with their ids, URLs and expiry.',
  params: {},
  example: {},
  async handler(_args, ctx) {
    return ctx.valves.link_backend === 'openwebui' ? listOpenWebUILinks(ctx) : listStandaloneLinks(ctx);
  },
});
