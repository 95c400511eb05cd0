// STUB: to be replaced by the real implementation.
import { shedError } from '../core/errors.js';
import { defineFunction } from '../registry/define.js';

export const shedDelete = defineFunction({
  name: 'shed_delete',
  category: 'files',
  summary: 'Not implemented yet.',
  description: 'Not implemented yet.',
  params: {},
  example: {},
  async handler() {
    throw shedError('INTERNAL_ERROR', 'shed_delete is not implemented yet.');
  },
});
