// STUB: to be replaced by the real implementation.
import { shedError } from '../core/errors.js';
import { defineFunction } from '../registry/define.js';

export const shedTree = defineFunction({
  name: 'shed_tree',
  category: 'files',
  summary: 'Not implemented yet.',
  description: 'Not implemented yet.',
  params: {},
  example: {},
  async handler() {
    throw shedError('INTERNAL_ERROR', 'shed_tree is not implemented yet.');
  },
});
