/**
 * The registry: every shed_* function, in the order the help and the tool specs list them.
 */
import type { FunctionDef } from '../registry/define.js';
import { shedConvertEol } from './convert_eol.js';
import { shedCreateFile } from './create_file.js';
import { shedDelete } from './delete.js';
import { shedFileType } from './file_type.js';
import { shedHelp } from './help.js';
import { shedHexdump } from './hexdump.js';
import { shedParameters } from './parameters.js';
import { shedPatchBytes } from './patch_bytes.js';
import { shedPatchText } from './patch_text.js';
import { shedRead } from './read.js';
import { shedReadBytes } from './read_bytes.js';
import { shedRename } from './rename.js';
import { shedStats } from './stats.js';
import { shedTree } from './tree.js';

export const FUNCTIONS: readonly FunctionDef[] = [
  shedCreateFile,
  shedPatchText,
  shedPatchBytes,
  shedRead,
  shedReadBytes,
  shedDelete,
  shedRename,
  shedTree,
  shedFileType,
  shedConvertEol,
  shedHexdump,
  shedStats,
  shedParameters,
  shedHelp,
] as unknown as readonly FunctionDef[];
