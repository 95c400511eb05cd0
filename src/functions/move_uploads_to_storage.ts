import { defineBridge } from './bridge.js';

export const shedMoveUploadsToStorage = defineBridge({
  name: 'shed_move_uploads_to_storage',
  from: 'uploads',
  to: 'storage',
  move: true,
  summary: 'Uploads -> Storage (move).',
  description: 'Move a file or folder from Uploads to Storage, where it can be changed.',
});
