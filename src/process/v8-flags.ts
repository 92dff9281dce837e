import { setFlagsFromString } from 'node:v8';

/**
 * V8's settings for the service's processes, set at run time as each starts (the supervisor is started by
 * the operator's `node`, its command line not ours; `node:v8` setFlagsFromString is how a program sets them):
 * - The supervisor serves no request, so only its size matters: lite mode (no optimizing compilers,
 *   feedback allocated lazily) and a young generation that does not grow (a semi-space growth factor of 1).
 *   Idle on an empty store, 47–48 MB of RSS against 53–63 MB.
 * - A worker's young generation does not grow while it starts either: loading the modules and compiling the
 *   schemas grew it to its limit (2 × 16 MB), which an idle process never gives back (V8 shrinks it only at
 *   a garbage collection, which an idle process does not run): 20–28 MB of an idle worker's RSS. Once it
 *   serves, it grows again as V8 would have it (factor 2, V8's default), so that requests pay nothing for it.
 * An operator who sized the young generation (`--max-semi-space-size` and the like, on the command line or in
 * NODE_OPTIONS) keeps V8's own behaviour in every process.
 */

const SUPERVISOR = '--lite-mode --semi-space-growth-factor=1';
const STARTING = '--semi-space-growth-factor=1';
const SERVING = '--semi-space-growth-factor=2';

/** Whether the operator set the young generation's size or growth themselves. */
export function operatorSized(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, nodeOptions ?? ''].some((flag) => /semi[-_]space/.test(flag));
}

const ours = !operatorSized(process.execArgv, process.env.NODE_OPTIONS);

/** The supervisor, before it loads anything. */
export function supervisorFlags(): void {
  if (ours) setFlagsFromString(SUPERVISOR);
}

/** A worker, before it loads anything. */
export function startingFlags(): void {
  if (ours) setFlagsFromString(STARTING);
}

/** A worker, once it serves. */
export function servingFlags(): void {
  if (ours) setFlagsFromString(SERVING);
}
