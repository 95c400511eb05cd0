/**
 * The sandbox modes (SPEC section 8): what the admin sets (valve `sandbox`) and what commands run in.
 * Their meaning and how the active one is chosen: sandbox.ts.
 */
export type SandboxSetting = 'auto' | 'bwrap' | 'landlock' | 'validated';
export type SandboxMode = 'bwrap' | 'landlock' | 'validated';
