/**
 * Parameter builders shared by many functions, so each common parameter is described once.
 */
import { z } from 'zod';
import { ZONE_NAMES, type ZoneName } from '../core/zones/zones.js';

export function zoneParam(accepted: readonly ZoneName[]) {
  return z.enum(ZONE_NAMES).describe(`Zone: ${accepted.join(' | ')}. Case-insensitive.${accepted.includes('group') ? ' "group" also needs group=.' : ''}`);
}

export const groupParam = z.string().optional().describe('Group name or id; only with zone="group".');

export function pathParam(what = 'File path relative to the zone root, e.g. "reports/q3.md". Never start it with the zone name.') {
  return z.string().min(1).describe(what);
}

export const allowZoneInPath = z
  .boolean()
  .default(false)
  .describe('Set true only if the user really has a folder named like the zone (e.g. Storage/storage/x).');

export const messageParam = z.string().optional().describe('Commit message in Documents and group zones (default: a description of the change).');

export const lineNumber = (what: string) =>
  z.number().int().min(1, { message: 'line numbers start at 1, not 0' }).optional().describe(what);
