// STUB: to be replaced by the real implementation.
import { shedError } from '../core/errors.js';
import { defineFunction } from '../registry/define.js';

export const shedPatchText = defineFunction({
  name: 'shed_patch_text',
  category: 'write',
  summary: 'Not implemented yet.',
  description: 'Not implemented yet.',
  params: {},
  example: {},
  async handler() {
    throw shedError('INTERNAL_ERROR', 'shed_patch_text is not implemented yet.');
  },
});
