import { defineBridge } from '../core/bridges/bridge.js';

export const shedMoveUploadsToStorage = defineBridge({
  name: 'shed_move_uploads_to_storage',
  from: 'uploads',
  to: 'storage',
  move: true,
  summary: 'Uploads -> Storage (move).',
  description:
    'Move a file or folder from Uploads (files imported from this chat with shed_import) to Storage, where it can be edited and used by commands. dest is the full new path in Storage. The file leaves Uploads. An existing dest needs overwrite=true.',
});
