import type Docker from 'dockerode';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { defined } from '../core/defined.js';
import { SandboxError } from './errors.js';

/** Options of {@link ExecStream.open}. */
export interface ExecStreamOptions {
  user?: string;
  workingDir?: string;
  env?: string[];
}

/**
 * A long-lived process in a container with its stdin, stdout and stderr attached through one `docker exec -i`:
 * for a server that answers requests line by line (the `python` tool's supervisor), where a new exec per request
 * would cost a round trip of tens of milliseconds. No time limit and no output cap (unlike {@link runExec}): the
 * process's own protocol bounds both, and {@link destroy} or removing the container ends it (Docker cannot kill an
 * exec).
 *
 * @example
 * ```ts
 * const s = await ExecStream.open(container, ['cat'], { user: '1000:1000' });
 * s.onStdout((chunk) => console.log(chunk.toString()));
 * s.write('hello\n');
 * ```
 */
export class ExecStream {
  private pending: Buffer = Buffer.alloc(0);
  private stdoutListener: (chunk: Buffer) => void = () => undefined;
  private stderrListener: (chunk: Buffer) => void = () => undefined;
  private endListener: () => void = () => undefined;
  private ended = false;

  private constructor(
    private readonly exec: Docker.Exec,
    private readonly stream: Duplex,
  ) {
    stream.on('data', (chunk: Buffer) => this.onData(chunk));
    const end = (): void => {
      if (this.ended) return;
      this.ended = true;
      this.endListener();
    };
    stream.on('end', end);
    stream.on('close', end);
    // A reset connection ends the process's stream like a close; the caller learns it through `onEnd`.
    stream.on('error', end);
  }

  /** Starts `argv` in a running container with stdin open (no TTY: stdout and stderr stay apart). */
  static async open(container: Docker.Container, argv: readonly string[], o: ExecStreamOptions = {}): Promise<ExecStream> {
    try {
      const exec = await container.exec({
        Cmd: [...argv],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        ...defined({ User: o.user, WorkingDir: o.workingDir, Env: o.env }),
      });
      // Tty must be given to start as well, or the stream's framing does not match (NOTES.md).
      const stream = (await exec.start({ hijack: true, stdin: true, Tty: false })) as Duplex;
      return new ExecStream(exec, stream);
    } catch (err) {
      throw new SandboxError(`cannot start ${argv[0] ?? 'a process'} in container ${container.id.slice(0, 12)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  /** True once the process's stream ended (it exited, or the connection or the container went). */
  get isEnded(): boolean {
    return this.ended;
  }

  /** Sets the receiver of the process's stdout, in chunks as they arrive (one listener). */
  onStdout(listener: (chunk: Buffer) => void): void {
    this.stdoutListener = listener;
  }

  /** Sets the receiver of the process's stderr (one listener). */
  onStderr(listener: (chunk: Buffer) => void): void {
    this.stderrListener = listener;
  }

  /** Sets what runs once when the stream ends (one listener). */
  onEnd(listener: () => void): void {
    this.endListener = listener;
  }

  /** Writes to the process's stdin; false once the stream ended. */
  write(data: string | Buffer): boolean {
    if (this.ended) return false;
    this.stream.write(data);
    return true;
  }

  /**
   * Whether the open stream keeps Node's event loop alive. An idle stream should not (`ref(false)`): a process that
   * forgot to close it still exits; a request waiting for an answer should (`ref(true)`).
   */
  ref(on: boolean): void {
    const socket = this.stream as Partial<Socket>;
    if (on) socket.ref?.();
    else socket.unref?.();
  }

  /** The process's exit status once it ended (-1 when the engine does not know it). */
  async exitCode(): Promise<number> {
    const info = await this.exec.inspect().catch(() => undefined);
    return typeof info?.ExitCode === 'number' ? info.ExitCode : -1;
  }

  /** Closes the connection (the process sees the end of its stdin). */
  destroy(): void {
    this.stream.destroy();
  }

  private onData(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    // Docker's multiplexed frames: [stream, 0, 0, 0, size (uint32 BE)] + payload.
    while (this.pending.length >= 8) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + size) break;
      const payload = this.pending.subarray(8, 8 + size);
      if (this.pending[0] === 2) this.stderrListener(payload);
      else this.stdoutListener(payload);
      this.pending = this.pending.subarray(8 + size);
    }
  }
}
