import { defineBridge } from '../core/bridges/bridge.js';

export const shedMoveDocumentsToStorage = defineBridge({
  name: 'shed_move_documents_to_storage',
  from: 'documents',
  to: 'storage',
  move: true,
  summary: 'Documents -> Storage (move, commit).',
  description:
    'Move a file or folder out of Documents into Storage (to work on it freely, or to stop versioning it). Its removal from Documents is committed (message= sets the commit message); older versions stay in the history. dest is the full new path in Storage; an existing dest needs overwrite=true.',
});
