import { defineBridge } from '../core/bridges/bridge.js';

export const shedMoveUploadsToDocuments = defineBridge({
  name: 'shed_move_uploads_to_documents',
  from: 'uploads',
  to: 'documents',
  move: true,
  summary: 'Uploads -> Documents (move, commit).',
  description:
    'Move a file or folder from Uploads (files imported from this chat with shed_import) to Documents, where every change is versioned; the move is committed (message= sets the commit message). dest is the full new path in Documents. An existing dest needs overwrite=true.',
});
