/** What the code-execution tests share: the modes scripts run in, and the answer checks of the command tests. */
export { expectOk as ok, expectRan as ran } from '../security/exec-harness.js';

/** Scripts run only under a kernel wall. */
export const KERNEL_MODES = ['bwrap', 'landlock'] as const;
