/**
 * The registry: every shed_* function, in the order the help and the tool specs list them.
 */
import type { FunctionDef } from '../registry/define.js';
import { shedAllowedCommands } from './allowed_commands.js';
import { shedConvertEol } from './convert_eol.js';
import { shedCopyStorageToDocuments } from './copy_storage_to_documents.js';
import { shedCreateFile } from './create_file.js';
import { shedDelete } from './delete.js';
import { shedUndo } from './undo.js';
import { shedExec } from './exec.js';
import { shedFileType } from './file_type.js';
import { shedForceUnlock } from './force_unlock.js';
import { shedHelp } from './help.js';
import { shedHexdump } from './hexdump.js';
import { shedImport } from './import.js';
import { shedLockeditCancel } from './lockedit_cancel.js';
import { shedLockeditExec } from './lockedit_exec.js';
import { shedLockeditOpen } from './lockedit_open.js';
import { shedLockeditOverwrite } from './lockedit_overwrite.js';
import { shedLockeditSave } from './lockedit_save.js';
import { shedMaintenance } from './maintenance.js';
import { shedMoveDocumentsToStorage } from './move_documents_to_storage.js';
import { shedMoveUploadsToDocuments } from './move_uploads_to_documents.js';
import { shedMoveUploadsToStorage } from './move_uploads_to_storage.js';
import { shedParameters } from './parameters.js';
import { shedPatchBytes } from './patch_bytes.js';
import { shedPatchText } from './patch_text.js';
import { shedRead } from './read.js';
import { shedReadBytes } from './read_bytes.js';
import { shedRename } from './rename.js';
import { shedRunPython } from './run_python.js';
import { shedRunShell } from './run_shell.js';
import { shedSqlite } from './sqlite.js';
import { shedStats } from './stats.js';
import { shedTree } from './tree.js';
import { shedUnzip } from './unzip.js';
import { shedZip } from './zip.js';
import { shedZipinfo } from './zipinfo.js';
import { shedCopyToGroup } from './copy_to_group.js';
import { shedGroupChown } from './group_chown.js';
import { shedGroupInfo } from './group_info.js';
import { shedGroupList } from './group_list.js';
import { shedGroupSetMode } from './group_set_mode.js';
import { shedLinkCreate } from './link_create.js';
import { shedLinkDelete } from './link_delete.js';
import { shedLinkList } from './link_list.js';

export const FUNCTIONS: readonly FunctionDef[] = [
  shedExec,
  shedRunPython,
  shedRunShell,
  shedCreateFile,
  shedPatchText,
  shedPatchBytes,
  shedRead,
  shedReadBytes,
  shedDelete,
  shedRename,
  shedUndo,
  shedTree,
  shedLockeditOpen,
  shedLockeditExec,
  shedLockeditOverwrite,
  shedLockeditSave,
  shedLockeditCancel,
  shedMoveUploadsToStorage,
  shedMoveUploadsToDocuments,
  shedCopyStorageToDocuments,
  shedMoveDocumentsToStorage,
  shedImport,
  shedFileType,
  shedConvertEol,
  shedHexdump,
  shedSqlite,
  shedZip,
  shedUnzip,
  shedZipinfo,
  shedStats,
  shedForceUnlock,
  shedMaintenance,
  shedParameters,
  shedAllowedCommands,
  shedGroupList,
  shedGroupInfo,
  shedGroupSetMode,
  shedGroupChown,
  shedCopyToGroup,
  shedLinkCreate,
  shedLinkList,
  shedLinkDelete,
  shedHelp,
] as unknown as readonly FunctionDef[];
