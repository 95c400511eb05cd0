import { z } from 'zod';
import { describeTurns, undoTurn } from '../core/services/undo/undo.js';
import { ShedError } from '../core/base/errors.js';
import { defineFunction } from '../registry/define.js';

/**
 * shed_undo: one function for listing and undoing turns (the spec budget has room for one). Without
 * apply it lists the recent turns and previews the undo; with apply=true it undoes.
 */
export const shedUndo = defineFunction({
  name: 'shed_undo',
  category: 'files',
  summary: 'List turns (your answers) and undo one, any zone.',
  description: 'Without apply: lists recent turns, previews undoing the last (or turn). Paths changed since stay unless in force.',
  params: {
    turn: z.string().min(1).optional().describe('Turn id (answers name it)'),
    apply: z.boolean().default(false).describe('true: undo now'),
    force: z.array(z.string()).default([]).describe('Paths to take back despite conflict'),
  },
  example: { apply: true },
  mutates: (args) => args.apply === true,
  hints: { destructive: true },
  async handler(args, ctx) {
    if (args.apply) return undoTurn(ctx, { turn: args.turn, apply: true, force: args.force });
    const here = await describeTurns(ctx, false, 10);
    let preview;
    try {
      preview = await undoTurn(ctx, { turn: args.turn, apply: false, force: args.force });
    } catch (err) {
      // Nothing to preview in this conversation: the list (with other conversations) still answers.
      if (!(err instanceof ShedError) || err.code !== 'FILE_NOT_FOUND' || args.turn !== undefined) throw err;
      const all = await describeTurns(ctx, true, 5);
      return { data: { turns: here.data.turns, other_turns: all.data.turns }, message: `${err.message} ${all.message}` };
    }
    return { data: { turns: here.data.turns, preview: preview.data }, message: `${here.message} ${preview.message}` };
  },
});
