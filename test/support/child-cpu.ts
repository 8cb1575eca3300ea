import { readFileSync } from 'node:fs';

// The CPU time a child process has used, as the clock for how long it took to do its work: on a
// loaded machine a child that works gets the CPU slowly and its wall time says little, while one
// that waits for something that never comes uses none.

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * Milliseconds of CPU (user + system) the process has used so far; undefined where /proc does not
 * tell (not Linux, or the process is gone).
 */
export function cpuMsOf(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}
