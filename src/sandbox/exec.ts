import type Docker from 'dockerode';
import type { Duplex } from 'node:stream';
import { defined } from '../core/defined.js';

/** The result of one command run in a sandbox. */
export interface ExecResult {
  /** Interleaved stdout and stderr, cut to the cap with a visible marker (see {@link CappedOutput}). */
  output: string;
  /** The process's exit status; 137 when it was killed (time limit, out of memory). -1 when unknown. */
  exitCode: number;
  /** The output was longer than the cap. */
  truncated: boolean;
  /** Bytes the command wrote in all. */
  outputBytes: number;
  /** The time limit killed it. */
  timedOut: boolean;
  /** The exec never returned and was abandoned: the container must be replaced. */
  hung: boolean;
  durationMs: number;
  /** The container stopped answering and was replaced (set by `Sandbox.exec`). */
  replaced?: boolean;
  /** Raw stdout when `rawStdout` was asked for (for tar streams); not capped by `outputCapBytes`. */
  stdout?: Buffer;
}

/** Options of {@link runExec}. */
export interface ExecOptions {
  /** Time limit in seconds, enforced inside the container with `timeout -s KILL`. */
  timeoutS: number;
  /** Bytes of output kept. */
  outputCapBytes: number;
  /** Bytes written to the command's stdin, then EOF. */
  stdin?: Buffer;
  /** Keep stdout apart, uncapped up to `rawCapBytes` (tar archives). */
  rawStdout?: boolean;
  rawCapBytes?: number;
  user?: string;
  workingDir?: string;
  env?: string[];
  /** Extra seconds the host waits past `timeoutS` before declaring the exec hung (default 5). */
  graceS?: number;
  /**
   * Kill every other process of the exec's user before and after the command (`kill -9 -1`, atomic in the
   * kernel, so a fork bomb cannot outrun it). Needs the container's keeper to run as another uid.
   */
  killStrays?: boolean;
}

/**
 * Keeps the first and last halves of a byte stream up to a cap and counts the rest; `text()` joins them
 * with a marker naming the bytes left out, so an agent sees that (and how much) output was cut.
 */
export class CappedOutput {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  /** Bytes seen. */
  total = 0;

  /** @param cap bytes kept in all (head and tail halves). */
  constructor(private readonly cap: number) {}

  /** Adds a chunk of output. */
  push(chunk: Buffer): void {
    this.total += chunk.length;
    const headCap = Math.ceil(this.cap / 2);
    if (this.headBytes < headCap) {
      const take = chunk.subarray(0, headCap - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    const tailCap = this.cap - headCap;
    this.tail = chunk.length >= tailCap ? Buffer.from(chunk.subarray(chunk.length - tailCap)) : Buffer.concat([this.tail, chunk]).subarray(-tailCap);
  }

  /** More bytes arrived than the cap keeps. */
  get truncated(): boolean {
    return this.total > this.cap;
  }

  /**
   * The kept output (UTF-8), with the truncation marker when bytes were left out. The cuts fall on character
   * boundaries: a multi-byte character split by the cap is left out whole (and counted as omitted) rather
   * than decoded into U+FFFD.
   */
  text(): string {
    if (!this.truncated) return Buffer.concat([...this.head, this.tail]).toString('utf8');
    const headAll = Buffer.concat(this.head);
    const head = headAll.subarray(0, utf8CompleteLength(headAll));
    const tail = this.tail.subarray(utf8LeadingContinuations(this.tail));
    const omitted = this.total - head.length - tail.length;
    return `${head.toString('utf8')}\n[... output truncated: ${omitted} bytes omitted of ${this.total} bytes total ...]\n${tail.toString('utf8')}`;
  }
}

/** The length of `b` without a trailing incomplete UTF-8 sequence (one cut short by the cap). */
export function utf8CompleteLength(b: Buffer): number {
  // Look back at most 3 bytes for the lead byte of the last sequence.
  for (let i = b.length - 1; i >= Math.max(0, b.length - 4); i--) {
    const byte = b[i] as number;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return i + need > b.length ? i : b.length;
  }
  return b.length;
}

/** How many continuation bytes (at most 3: the rest of a character cut by the cap) `b` starts with. */
export function utf8LeadingContinuations(b: Buffer): number {
  let n = 0;
  while (n < 3 && n < b.length && ((b[n] as number) & 0xc0) === 0x80) n++;
  return n;
}

/**
 * Kills the user's other processes, runs the command under `timeout -s KILL`, kills what it left behind
 * (background jobs, a fork bomb), and exits with the command's status. `kill -1` spares the caller, and
 * `kill`/`exit` are shell built-ins, so this works even when no process can be forked.
 */
const STRAY_WRAPPER = 'kill -9 -1 2>/dev/null; timeout -s KILL "$@"; rc=$?; kill -9 -1 2>/dev/null; exit $rc';

/**
 * Runs `argv` in a started container: wrapped in `timeout -s KILL <timeoutS>` (Docker itself cannot kill an
 * exec), output demultiplexed and capped, stdin piped then closed. If the exec does not come back within
 * `timeoutS + graceS` the stream is dropped and the result says `hung` (the caller replaces the container).
 */
export async function runExec(container: Docker.Container, argv: readonly string[], o: ExecOptions): Promise<ExecResult> {
  const started = performance.now();
  const limit = String(Math.max(1, Math.ceil(o.timeoutS)));
  const cmd = o.killStrays
    ? ['sh', '-c', STRAY_WRAPPER, 'gymflow-exec', limit, ...argv]
    : ['timeout', '-s', 'KILL', limit, ...argv];
  const exec = await container.exec({
    Cmd: cmd,
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: o.stdin !== undefined,
    Tty: false,
    ...defined({ User: o.user, WorkingDir: o.workingDir, Env: o.env }),
  });
  const stream = (await exec.start({ hijack: true, stdin: o.stdin !== undefined, Tty: false })) as Duplex;
  const out = new CappedOutput(o.outputCapBytes);
  const raw: Buffer[] = [];
  let rawBytes = 0;
  const rawCap = o.rawCapBytes ?? 512 * 1024 * 1024;
  let pending: Buffer = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    // Docker's multiplexed frames: [stream, 0, 0, 0, size (uint32 BE)] + payload.
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const kind = pending[0];
      const payload = pending.subarray(8, 8 + size);
      if (o.rawStdout && kind === 1) {
        if (rawBytes < rawCap) raw.push(Buffer.from(payload));
        rawBytes += payload.length;
      } else {
        out.push(payload);
      }
      pending = pending.subarray(8 + size);
    }
  };
  stream.on('data', onData);
  const ended = new Promise<'ended'>((resolve) => {
    stream.on('end', () => resolve('ended'));
    stream.on('close', () => resolve('ended'));
    stream.on('error', () => resolve('ended'));
  });
  if (o.stdin !== undefined) {
    stream.write(o.stdin);
    stream.end();
  }
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), (o.timeoutS + (o.graceS ?? 5)) * 1000);
  });
  const how = await Promise.race([ended, hung]);
  clearTimeout(timer);
  if (how === 'hung') {
    stream.destroy();
    return {
      output: `${out.text()}\n[sandbox: the command did not return within ${o.timeoutS}s + grace; the sandbox was abandoned]`,
      exitCode: 137,
      truncated: out.truncated,
      outputBytes: out.total,
      timedOut: true,
      hung: true,
      durationMs: performance.now() - started,
    };
  }
  let info = await exec.inspect();
  // The stream can end a moment before the engine records the exit status.
  for (let i = 0; i < 50 && info.Running; i++) {
    await new Promise((r) => setTimeout(r, 10));
    info = await exec.inspect();
  }
  const exitCode = typeof info.ExitCode === 'number' ? info.ExitCode : -1;
  const durationMs = performance.now() - started;
  const result: ExecResult = {
    output: out.text(),
    exitCode,
    truncated: out.truncated,
    outputBytes: out.total + rawBytes,
    // `timeout -s KILL` exits 137 when it killed the command; an OOM kill also gives 137, but early.
    timedOut: exitCode === 137 && durationMs >= o.timeoutS * 1000 - 250,
    hung: false,
    durationMs,
  };
  if (o.rawStdout) result.stdout = Buffer.concat(raw);
  return result;
}
