// STUB: to be replaced by the real implementation.
import { shedError } from '../core/errors.js';
import { defineFunction } from '../registry/define.js';

export const shedHelp = defineFunction({
  name: 'shed_help',
  category: 'info',
  summary: 'Not implemented yet.',
  description: 'Not implemented yet.',
  params: {},
  example: {},
  async handler() {
    throw shedError('INTERNAL_ERROR', 'shed_help is not implemented yet.');
  },
});
