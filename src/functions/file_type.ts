// STUB: to be replaced by the real implementation.
import { shedError } from '../core/errors.js';
import { defineFunction } from '../registry/define.js';

export const shedFileType = defineFunction({
  name: 'shed_file_type',
  category: 'data',
  summary: 'Not implemented yet.',
  description: 'Not implemented yet.',
  params: {},
  example: {},
  async handler() {
    throw shedError('INTERNAL_ERROR', 'shed_file_type is not implemented yet.');
  },
});
