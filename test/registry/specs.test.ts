/**
 * The spec budget: every chat turn sends all tool specs to the model, so their compact
 * JSON stays within 24 KiB whatever the registry holds, and what was cut from the specs is still
 * accepted by the functions (unlisted parameters) and still taught by the errors.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../src/functions/index.js';
import { specsFor, toolSpecs } from '../../src/index.js';
import { UNLISTED } from '../../src/registry/params.js';
import type { z } from 'zod';
import { makeShed } from '../helpers/shed.js';

const BUDGET = 24 * 1024;
const bytes = (x: unknown) => JSON.stringify(x).length;

describe('spec budget', () => {
  it('all functions together stay within 24 KiB of compact JSON', () => {
    expect(bytes(toolSpecs)).toBeLessThanOrEqual(BUDGET);
  });

  it('no single spec dominates (each under 2 KiB)', () => {
    for (const spec of toolSpecs) expect(bytes(spec), spec.function.name).toBeLessThan(2048);
  });

  it('the core profile holds at most 15 functions and is much lighter', () => {
    const core = specsFor({ functions: 'core' });
    expect(core.length).toBeLessThanOrEqual(15);
    expect(core.map((s) => s.function.name)).toEqual(expect.arrayContaining(['shed_exec', 'shed_create_file', 'shed_patch_text', 'shed_read', 'shed_tree', 'shed_delete', 'shed_rename', 'shed_import', 'shed_help']));
    expect(bytes(core)).toBeLessThan(bytes(toolSpecs) / 2);
  });
});

describe('what the specs leave out', () => {
  it('unlisted parameters (allow_zone_in_path, mode, safe) are not in any spec', () => {
    for (const spec of toolSpecs) {
      const props = Object.keys((spec.function.parameters as { properties: Record<string, unknown> }).properties);
      expect(props, spec.function.name).not.toContain('allow_zone_in_path');
      const def = FUNCTIONS.find((f) => f.name === spec.function.name)!;
      for (const [key, schema] of Object.entries(def.params)) {
        expect(props.includes(key), `${def.name}.${key}`).toBe(!UNLISTED.has(schema as z.ZodType));
      }
    }
  });

  it('the zone enum of a spec lists only the zones the function accepts', () => {
    const props = (name: string) => (toolSpecs.find((s) => s.function.name === name)!.function.parameters as { properties: Record<string, { enum?: string[] }> }).properties;
    expect(props('shed_create_file').zone!.enum).toEqual(['storage', 'documents', 'group']);
    expect(props('shed_read').zone!.enum).toEqual(['uploads', 'storage', 'documents', 'group']);
    expect(props('shed_zip').zone!.enum).toEqual(['storage', 'documents']);
  });

  it('every zone parameter says its zones in words too (proxies such as mcpo drop enums, keep descriptions)', () => {
    let zones = 0;
    for (const spec of toolSpecs) {
      const zone = (spec.function.parameters as { properties: Record<string, { enum?: string[]; description?: string }> }).properties.zone;
      if (zone === undefined) continue;
      zones++;
      expect(zone.description, spec.function.name).toBe(zone.enum!.join('|'));
    }
    expect(zones).toBeGreaterThan(20);
  });

  it('dist/tools.json holds the lean specs', () => {
    const built = JSON.parse(fs.readFileSync(new URL('../../dist/tools.json', import.meta.url), 'utf8')) as unknown[];
    expect(bytes(built)).toBe(bytes(toolSpecs));
  });
});

describe('unlisted parameters still work', () => {
  const s = makeShed();
  afterAll(() => s.cleanup());

  it('allow_zone_in_path reaches a real folder named like the zone, and the error that needs it names it', async () => {
    const refused = await s.call('shed_create_file', { zone: 'storage', path: 'storage/x.txt', content: 'x' });
    expect(refused.error?.code).toBe('PATH_STARTS_WITH_ZONE');
    expect(`${refused.error?.message} ${refused.error?.hint}`).toContain('allow_zone_in_path');
    const r = await s.call('shed_create_file', { zone: 'storage', path: 'storage/x.txt', content: 'x', allow_zone_in_path: true });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'storage/x.txt'), 'utf8')).toBe('x');
  });

  it('safe=false is accepted by shed_patch_text', async () => {
    const r = await s.call('shed_patch_text', { zone: 'storage', path: 'p.txt', content: 'a', safe: false });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.safe_mode).toBe(false);
  });
});
