/** What tests check about processes a component started (trainers, policy servers): read from /proc. */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Live (not zombie) processes, other than this one, whose command line contains `needle` and every one of
 * `also` (a test's scratch directory: another test's, or a user's, processes do not count). The arguments in
 * `/proc/<pid>/cmdline` are separated by NUL (`'-m\0gymflow_trainer\0serve'`). A killed orphan may linger
 * as a zombie until it is reaped, so zombies do not count.
 */
export function processesMentioning(needle: string, ...also: string[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state …; comm may hold spaces, so the state follows the last ')'.
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(needle) && also.every((s) => cmdline.includes(s))) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
