/**
 * Function profiles: the functions valve decides what a caller sees and may call. The
 * Tools prototype stays the same; disabled methods answer FUNCTION_DISABLED, shed_help and the
 * host specs (specsFor) list only the enabled functions.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../src/functions/index.js';
import { enabledFunctionNames, specsFor, toolSpecs, Tools } from '../../src/index.js';
import { CORE_FUNCTIONS, enabledFunctions } from '../../src/registry/profiles.js';
import { makeShed } from '../helpers/shed.js';

const names = (valves: Record<string, unknown>, role?: string) => enabledFunctions(FUNCTIONS, valves, role).functions.map((f) => f.name);

describe('enabledFunctions', () => {
  it('all (the default) enables every function but code execution, which its own switches turn on', () => {
    const switched = FUNCTIONS.filter((f) => f.enabledBy !== undefined).map((f) => f.name);
    expect(switched).toEqual(['shed_run_python', 'shed_run_shell']);
    const rest = FUNCTIONS.map((f) => f.name).filter((n) => !switched.includes(n));
    expect(names({})).toEqual(rest);
    expect(names({ functions: 'all' })).toEqual(rest);
    expect(names({ allow_python: true, allow_shell: 'true' })).toEqual(FUNCTIONS.map((f) => f.name));
    expect(names({ allow_shell: true })).toEqual(FUNCTIONS.map((f) => f.name).filter((n) => n !== 'shed_run_python'));
  });

  it('a profile limits code execution to some roles, and no profile turns it on while its switch is off', () => {
    const valves = { functions: 'core', functions_admin: 'all,code', allow_python: true, allow_shell: true };
    expect(names(valves, 'user')).not.toContain('shed_run_python');
    expect(names(valves, 'admin')).toEqual(expect.arrayContaining(['shed_run_python', 'shed_run_shell']));
    expect(names({ functions: 'code,run_python' })).toEqual(['shed_help']);
    expect(names({ functions: 'code', allow_python: true })).toEqual(['shed_run_python', 'shed_help']);
  });

  it('core is at most 15 everyday functions, skipping names not registered yet', () => {
    expect(CORE_FUNCTIONS.length).toBeLessThanOrEqual(15);
    expect(CORE_FUNCTIONS).toContain('shed_link_create');
    const core = names({ functions: 'core' });
    expect(core).toEqual(FUNCTIONS.map((f) => f.name).filter((n) => CORE_FUNCTIONS.includes(n)));
    expect(core).not.toContain('shed_hexdump');
  });

  it('takes names with or without shed_, categories, and mixes with core; shed_help is always on', () => {
    expect(names({ functions: 'read, shed_tree' })).toEqual(['shed_read', 'shed_read_bytes', 'shed_tree', 'shed_hexdump', 'shed_help']);
    expect(names({ functions: 'tree' })).toEqual(['shed_tree', 'shed_help']);
    expect(names({ functions: 'core,groups' })).toContain('shed_group_list');
    expect(names({ functions: 'Core' })).toContain('shed_exec');
  });

  it('ignores unknown names and reports them', () => {
    const p = enabledFunctions(FUNCTIONS, { functions: 'tree,shed_teleport,,nope' }, 'user');
    expect(p.functions.map((f) => f.name)).toEqual(['shed_tree', 'shed_help']);
    expect(p.unknown).toEqual(['shed_teleport', 'nope']);
  });

  it('functions_admin applies to admins only; empty means the same as functions', () => {
    const valves = { functions: 'core', functions_admin: 'all' };
    expect(names(valves, 'admin')).toHaveLength(FUNCTIONS.length - 2);
    expect(names(valves, 'user')).toEqual(names({ functions: 'core' }));
    expect(names({ functions: 'core', functions_admin: '' }, 'admin')).toEqual(names({ functions: 'core' }));
  });
});

describe('specsFor and the host view', () => {
  it('returns only the enabled specs, in registry order', () => {
    const specs = specsFor({ functions: 'core' });
    expect(specs.map((s) => s.function.name)).toEqual(enabledFunctionNames({ functions: 'core' }));
    expect(specsFor()).toEqual(toolSpecs);
    expect(specsFor({ functions: 'core', functions_admin: 'all' }, 'admin')).toEqual(toolSpecs);
  });
});

describe('Tools with a profile', () => {
  const s = makeShed({ functions: 'core' });
  afterAll(() => s.cleanup());

  it('the prototype keeps every method', () => {
    for (const f of FUNCTIONS) expect(typeof (Tools.prototype as unknown as Record<string, unknown>)[f.name], f.name).toBe('function');
  });

  it('an enabled function works', async () => {
    const r = await s.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'hi' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
  });

  it('a disabled function answers FUNCTION_DISABLED with the enabled list, and does nothing', async () => {
    const r = await s.call('shed_hexdump', { zone: 'storage', path: 'a.txt' });
    expect(r.success).toBe(false);
    expect(r.error!.code).toBe('FUNCTION_DISABLED');
    expect(r.error!.message).toContain('shed_hexdump');
    expect(r.error!.hint).toContain('shed_help');
    expect(r.error!.details!.enabled).toEqual(enabledFunctionNames({ functions: 'core' }));
  });

  it('shed_help lists only the enabled functions', async () => {
    const r = await s.call('shed_help');
    const text = String(r.data!.help);
    expect(text).toContain('shed_patch_text');
    expect(text).not.toContain('shed_hexdump');
    expect(text).not.toContain('shed_lockedit_open');
    expect(r.message).toContain(`${enabledFunctionNames({ functions: 'core' }).length} functions`);
  });

  it('an admin gets functions_admin', async () => {
    s.tools.valves = { ...s.tools.valves, functions_admin: 'all' };
    const method = (s.tools as unknown as Record<string, (a: unknown) => Promise<string>>).shed_hexdump!;
    const asAdmin = JSON.parse(await method.call(s.tools, { zone: 'storage', path: 'a.txt', __user__: { id: 'alice', name: 'A', role: 'admin' }, __metadata__: { chat_id: 'c1' } }));
    expect(asAdmin.success, JSON.stringify(asAdmin.error)).toBe(true);
    const asUser = await s.call('shed_hexdump', { zone: 'storage', path: 'a.txt' });
    expect(asUser.error?.code).toBe('FUNCTION_DISABLED');
  });

  it('an invalid functions valve (not a string) is an INVALID_VALVES error, not a silent "all"', async () => {
    s.tools.valves = { ...s.tools.valves, functions: 42, functions_admin: '' };
    const r = await s.call('shed_tree', { zone: 'storage' });
    expect(r.error?.code).toBe('INVALID_VALVES');
    expect(r.error?.message).toContain('functions');
  });
});
