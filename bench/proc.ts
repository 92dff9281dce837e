import { readFileSync } from 'node:fs';

/**
 * What the kernel knows about a server process: the benchmark cannot ask a child for process.cpuUsage(),
 * so it reads /proc (Linux). Undefined elsewhere.
 */

/** clock ticks per second for /proc/<pid>/stat; 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/** CPU seconds (user + system) the process has used so far: all its threads, or with `mainThread` its main thread only. */
export function cpuSeconds(pid: number, mainThread = false): number | undefined {
  try {
    const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'latin1');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Peak resident memory (VmHWM) in MB. */
export function peakRssMb(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}
