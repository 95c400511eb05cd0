import { defineBridge } from './bridge.js';

export const shedMoveDocumentsToStorage = defineBridge({
  name: 'shed_move_documents_to_storage',
  from: 'documents',
  to: 'storage',
  move: true,
  summary: 'Documents -> Storage (move, commit).',
  description: 'Move a file or folder from Documents to Storage (its history stays).',
});
