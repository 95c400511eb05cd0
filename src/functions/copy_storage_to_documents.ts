import { defineBridge } from '../core/bridges/bridge.js';

export const shedCopyStorageToDocuments = defineBridge({
  name: 'shed_copy_storage_to_documents',
  from: 'storage',
  to: 'documents',
  move: false,
  summary: 'Storage -> Documents (copy, commit).',
  description:
    'Copy a finished file or folder from Storage to Documents, where it is versioned: the copy is committed (message= sets the commit message). The Storage original stays. dest is the full new path in Documents; an existing dest needs overwrite=true (it becomes a new version). Counts against the quota.',
});
