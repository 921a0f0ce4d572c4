/**
 * Background processes that outlive the command that started them (`gymflow cluster up` returns while
 * PostgreSQL, the Temporal server, the Web UI and the workers go on): each in a process group of its own, its
 * output appended to a log file, and a pid file that names it by pid *and* start time, so that a later
 * `gymflow cluster status|down` never mistakes a recycled pid for its process.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { GymflowError } from '../../core/errors.js';
import { isErrno } from '../../core/fs.js';

/** What a pid file records of a daemon. */
export interface DaemonRecord {
  /** The component (`postgres`, `temporal`, …). */
  readonly name: string;
  readonly pid: number;
  /** The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22). */
  readonly startTicks: number;
  /** The command line it was started with. */
  readonly argv: readonly string[];
  /** Its log file. */
  readonly logFile: string;
}

/** Options of {@link startDaemon}. */
export interface DaemonOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Where the pid file goes (its folder is created). */
  readonly pidFile: string;
  /** stdout and stderr are appended here (its folder is created). */
  readonly logFile: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

/** A daemon that could not be started or stopped. */
export class DaemonError extends GymflowError {
  constructor(message: string) {
    super('DAEMON_ERROR', message);
  }
}

/** State and start time of process `pid` from `/proc`, `undefined` when there is no such process. */
function procStat(pid: number): { state: string; startTicks: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'ESRCH')) return undefined;
    throw err;
  }
  // pid (comm) state ppid …: comm may hold spaces and parentheses, so the fields follow the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '?', startTicks: Number(fields[19]) };
}

/** Whether the daemon of `record` still runs: same pid, same start time, and not a zombie. */
export function daemonAlive(record: DaemonRecord): boolean {
  const stat = procStat(record.pid);
  return stat !== undefined && stat.state !== 'Z' && stat.startTicks === record.startTicks;
}

/** Whether any live process other than a zombie is left in process group `pgid`. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if (isErrno(err, 'ESRCH')) return false;
    throw err;
  }
  // kill(0) counts zombies too (a group of zombies whose parent has not reaped them yet): look closer.
  return groupMembers(pgid).length > 0;
}

/** The live (non-zombie) processes of process group `pgid`. */
export function groupMembers(pgid: number): number[] {
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirProc();
  } catch {
    return found;
  }
  for (const entry of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'Z' && Number(fields[2]) === pgid) found.push(Number(entry));
  }
  return found;
}

function readdirProc(): string[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e));
}

/** Reads a pid file; `undefined` when there is none. */
export function readDaemon(pidFile: string): DaemonRecord | undefined {
  let text: string;
  try {
    text = readFileSync(pidFile, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as DaemonRecord;
  } catch (err) {
    throw new DaemonError(`${pidFile}: not a pid file of gymflow cluster (${(err as Error).message}); remove it if no such process runs`);
  }
}

/**
 * Starts `command args` detached (its own process group, stdin from /dev/null, stdout and stderr appended to
 * `logFile`) and writes its pid file. Resolves once the process exists; whether it comes up is the caller's
 * check. The caller's process may exit: the daemon is not tied to it.
 */
export async function startDaemon(options: DaemonOptions): Promise<DaemonRecord> {
  mkdirSync(dirname(options.logFile), { recursive: true });
  mkdirSync(dirname(options.pidFile), { recursive: true });
  const fd = openSync(options.logFile, 'a');
  let pid: number | undefined;
  try {
    writeFileSync(fd, `=== ${new Date().toISOString()} ${[options.command, ...options.args].join(' ')}\n`);
    const child = spawn(options.command, options.args, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: options.env ?? process.env,
      cwd: options.cwd,
    });
    pid = await new Promise<number>((resolve, reject) => {
      child.once('error', (err) => reject(new DaemonError(`${options.name}: cannot start ${options.command}: ${err.message}`)));
      child.once('spawn', () => resolve(child.pid ?? -1));
    });
    child.unref();
  } finally {
    closeSync(fd);
  }
  const stat = procStat(pid);
  if (stat === undefined) throw new DaemonError(`${options.name} (${options.command}) exited at once; see ${options.logFile}`);
  const record: DaemonRecord = { name: options.name, pid, startTicks: stat.startTicks, argv: [options.command, ...options.args], logFile: options.logFile };
  writeFileSync(options.pidFile, `${JSON.stringify(record)}\n`);
  return record;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Whether the process group named by the daemon's pid is the daemon's: the daemon runs, or no process has its
 * pid (Linux does not give a pid to a new process while a group still bears it, so its members are the
 * daemon's orphans). A live process with that pid and another start time is someone else's, and so is its group.
 */
function groupIsOurs(record: DaemonRecord): boolean {
  const stat = procStat(record.pid);
  return stat === undefined || stat.state === 'Z' || stat.startTicks === record.startTicks;
}

/** Resolves true once the daemon and every process of its group are gone, false after `timeoutMs`. */
export async function waitGone(record: DaemonRecord, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!daemonAlive(record) && (!groupIsOurs(record) || !groupAlive(record.pid))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}

/**
 * Stops a daemon: `signal` to the daemon alone (its own shutdown stops what it started), then, after
 * `graceMs`, SIGKILL to its whole process group. Resolves once nothing of the group is left; removes the pid
 * file. Of a daemon that died, the group's leftovers are killed; a recycled pid's process is left alone.
 */
export async function stopDaemon(record: DaemonRecord, pidFile: string, options: { signal?: NodeJS.Signals; graceMs?: number } = {}): Promise<'stopped' | 'killed' | 'not running'> {
  let outcome: 'stopped' | 'killed' | 'not running' = 'not running';
  if (daemonAlive(record)) {
    try {
      process.kill(record.pid, options.signal ?? 'SIGTERM');
    } catch (err) {
      if (!isErrno(err, 'ESRCH')) throw err;
    }
    outcome = 'stopped';
  }
  if (!(await waitGone(record, options.graceMs ?? 30_000)) && groupIsOurs(record)) {
    try {
      process.kill(-record.pid, 'SIGKILL');
    } catch (err) {
      if (!isErrno(err, 'ESRCH')) throw err;
    }
    outcome = 'killed';
    if (!(await waitGone(record, 10_000))) throw new DaemonError(`${record.name} (pid ${record.pid}): processes ${groupMembers(record.pid).join(', ')} of its group survive SIGKILL`);
  }
  rmSync(pidFile, { force: true });
  return outcome;
}
