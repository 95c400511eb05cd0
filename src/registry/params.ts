/**
 * Parameter builders shared by many functions, so each common parameter is described once.
 */
import { z } from 'zod';
import { ZONE_NAMES, type ZoneName } from '../core/base/zones/zones.js';

/**
 * The zone. Its schema accepts every zone name (a wrong zone gets a teaching error from the zone
 * policy, e.g. ZONE_READONLY for uploads); the tool spec lists only the accepted ones (specs.ts).
 * Its description (the accepted zones in words, for clients that drop enums) is set there too;
 * shed_help explains the zones once for all functions.
 */
export function zoneParam(_accepted: readonly ZoneName[]) {
  return z.enum(ZONE_NAMES);
}

/**
 * Parameters every function accepts but the tool specs do not list: escape hatches that the error
 * needing them teaches (PATH_STARTS_WITH_ZONE names allow_zone_in_path). Keeps each spec short.
 */
export const UNLISTED = new WeakSet<z.ZodType>();

/** Marks a parameter as accepted but not listed in the tool specs (see UNLISTED). */
export function unlisted<T extends z.ZodType>(schema: T): T {
  UNLISTED.add(schema);
  return schema;
}

export const groupParam = z.string().optional().describe('Group name or id');

export function pathParam(what = 'Path in the zone, e.g. "docs/a.md"') {
  return z.string().min(1).describe(what);
}

export const allowZoneInPath = unlisted(z
  .boolean()
  .default(false)
  .describe('Set true only if the user really has a folder named like the zone (e.g. Storage/storage/x).'));

export const messageParam = z.string().optional().describe('Commit message');

export const lineNumber = (what: string) =>
  z.number().int().min(1, { message: 'line numbers start at 1, not 0' }).optional().describe(what);

/** Write mode of a new group file. Unlisted: the admin's default fits nearly always, and shed_group_set_mode changes it later. */
export const modeParam = unlisted(z.enum(['owner', 'group', 'owner_ro']).optional().describe('Group zone only: who may change a NEW file (owner | group | owner_ro).'));

/**
 * Text parameters a model may well send as a bare number (pages=3, sheet=2): the number is taken as
 * its text. Other text parameters keep refusing numbers (path=123 is a mistake worth reporting).
 */
export const NUMBER_AS_TEXT = new WeakSet<z.ZodType>();

/** Pages of a paged document (PDF, presentation). */
export const pagesParam = numberAsText(
  z.string().optional().describe('PDF or presentation pages, e.g. "3", "2-4" or "10-" (from 10 on)'),
);

/** A spreadsheet's sheet, by name or number. */
export const sheetParam = numberAsText(z.string().optional().describe('Spreadsheet sheet: its name or number, e.g. "Q3" or "2" (default: the first)'));

function numberAsText<T extends z.ZodType>(schema: T): T {
  NUMBER_AS_TEXT.add(schema);
  return schema;
}
