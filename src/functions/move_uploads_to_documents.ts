import { defineBridge } from './bridge.js';

export const shedMoveUploadsToDocuments = defineBridge({
  name: 'shed_move_uploads_to_documents',
  from: 'uploads',
  to: 'documents',
  move: true,
  summary: 'Uploads -> Documents (move, commit).',
  description: 'Move a file or folder from Uploads to Documents (versioned).',
});
