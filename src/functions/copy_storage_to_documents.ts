import { defineBridge } from './bridge.js';

export const shedCopyStorageToDocuments = defineBridge({
  name: 'shed_copy_storage_to_documents',
  from: 'storage',
  to: 'documents',
  move: false,
  summary: 'Storage -> Documents (copy, commit).',
  description: 'Copy a file or folder from Storage to Documents (versioned); the original stays.',
});
