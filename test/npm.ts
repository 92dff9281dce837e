import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * npm run by the tests that pack a package and install it elsewhere, with a clean environment: nothing of
 * an outer `npm test` (npm_config_*, npm_package_*, npm_command) may point it at this repository.
 */
export function npmEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))), ...env };
}

/** `npm ...args` in `cwd`: what it printed on stdout and on stderr (its warnings), or a rejection with npm's stderr. */
export async function npmOutput(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)('npm', args, { cwd, env: npmEnv(), maxBuffer: 16 * 1024 * 1024 }).catch((error: Error & { stderr?: string }) => {
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}: ${error.message}\n${error.stderr ?? ''}`);
  });
}

/** `npm ...args` in `cwd`; its stdout, or a rejection with npm's stderr. */
export async function npm(args: string[], cwd: string): Promise<string> {
  return (await npmOutput(args, cwd)).stdout;
}
