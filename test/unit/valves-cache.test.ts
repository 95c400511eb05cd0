/**
 * Every call parses the admin's valves; the parse of the same settings is kept (valves.ts). A
 * change, however small, must be parsed again, an invalid value must still be refused after a
 * valid one was kept, and the kept answer cannot be changed by whoever holds it.
 */
import { describe, expect, it } from 'vitest';
import { parseValves, UserValvesSchema, ValvesSchema } from '../../src/core/base/valves.js';
import { ShedError } from '../../src/core/base/errors.js';

describe('parsed valves kept between calls', () => {
  it('the same settings give the same frozen answer; a changed one is parsed again', () => {
    const raw = { storage_base_path: '/tmp/fileshed-valves-a', quota_per_user_mb: 100 };
    const a = parseValves(ValvesSchema, { ...raw }, 'valve');
    const b = parseValves(ValvesSchema, { ...raw }, 'valve');
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(() => {
      (a as { quota_per_user_mb: number }).quota_per_user_mb = 1;
    }).toThrow(TypeError);
    const c = parseValves(ValvesSchema, { ...raw, quota_per_user_mb: '200' }, 'valve'); // a form's string
    expect(c.quota_per_user_mb).toBe(200);
    expect(parseValves(ValvesSchema, { ...raw, storage_base_path: '/tmp/fileshed-valves-b' }, 'valve').storage_base_path).toBe('/tmp/fileshed-valves-b');
    // Back to the first settings: the answer is right whichever copy is kept.
    expect(parseValves(ValvesSchema, { ...raw }, 'valve').quota_per_user_mb).toBe(100);
  });

  it('an invalid value is refused even right after the valid settings were kept', () => {
    const raw = { storage_base_path: '/tmp/fileshed-valves-c' };
    parseValves(ValvesSchema, raw, 'valve');
    let err: unknown;
    try {
      parseValves(ValvesSchema, { ...raw, quota_per_user_mb: 'lots' }, 'valve');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ShedError);
    expect((err as ShedError).code).toBe('INVALID_VALVES');
    expect(() => parseValves(ValvesSchema, { ...raw, quota_per_user_mb: Number.NaN }, 'valve')).toThrow();
  });

  it('admin and user valves are kept apart', () => {
    const admin = parseValves(ValvesSchema, {}, 'valve');
    const user = parseValves(UserValvesSchema, {}, 'user valve');
    expect(user).not.toBe(admin);
    expect(parseValves(ValvesSchema, {}, 'valve')).toBe(admin);
  });
});
