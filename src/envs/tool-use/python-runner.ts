import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { DEFAULT_IMAGE, Sandbox, type ExecStream } from '../../sandbox/index.js';

/**
 * The host side of the `python` tool: one hardened sandbox container per runner (per environment instance),
 * started on the first call, with one long-lived supervisor process in it (`python-supervisor.py`) that runs each
 * call's code in the episode's interpreter and answers over one attached `docker exec -i` stream, so a call costs
 * a pipe round trip, not an exec (about 1 ms against 30). See the supervisor's header for the isolation.
 */

/** The supervisor program, shipped beside this module (copied into dist/ by scripts/build.sh). */
export const PYTHON_SUPERVISOR_PATH = fileURLToPath(new URL('./python-supervisor.py', import.meta.url));

/** Limits of the `python` tool (`make('gymflow/tool-use-python-v0', { kwargs: { python: { timeoutS: 2 } } })`). */
export const PythonLimitsSchema = z
  .object({
    /** Wall-clock limit of one call, seconds: the interpreter is killed and replaced past it. */
    timeoutS: z.number().positive().max(600).default(5),
    /** Address-space limit of the interpreter (RLIMIT_AS), MiB: a larger allocation is a MemoryError. */
    memoryMiB: z.number().int().min(64).max(65536).default(512),
    /** Bytes of stdout, of stderr and of the value's repr kept per call; the rest is cut with a marker. */
    outputCapBytes: z.number().int().min(256).max(1024 * 1024).default(8192),
    /** The sandbox image; it needs `python3` (the default image, `gymflow sandbox build-image`, has it). */
    image: z.string().min(1).default(DEFAULT_IMAGE),
    /** Processes and threads the container may hold (its pids limit: where a fork bomb stops). */
    pidsLimit: z.number().int().min(16).max(4096).default(128),
  })
  .strict();

/** Parsed limits of the `python` tool. */
export type PythonLimits = z.output<typeof PythonLimitsSchema>;

/** How a call ended. */
export type PythonCallStatus =
  /** The code ran to its end. */
  | 'ok'
  /** The code raised: `error` has the exception and its traceback. */
  | 'error'
  /** The time limit stopped it; the interpreter was replaced (the episode's variables are gone). */
  | 'timeout'
  /** The interpreter (or the supervisor) died; replaced, variables gone. */
  | 'died'
  /** No sandbox could be started (no Docker engine, no image): nothing ran. */
  | 'unavailable'
  /** The sandbox failed in another way; it was discarded and the next call starts a new one. */
  | 'failed';

/** The result of one `python` call. */
export interface PythonCallResult {
  status: PythonCallStatus;
  stdout: string;
  stderr: string;
  /** The repr of the last statement's value when it is an expression whose value is not `None`. */
  value?: string;
  /** The exception, for `error`. */
  error?: { type: string; message: string; traceback: string };
  /** The episode's interpreter was replaced during this call: variables defined earlier are gone. */
  restarted: boolean;
  /** What happened, for `timeout`, `died`, `unavailable` and `failed` (and a note on a restart). */
  message?: string;
}

/** A response line of the supervisor (validated: it comes from a process the agent's code shares a uid with). */
const ResponseSchema = z.object({
  id: z.number().nullable(),
  status: z.enum(['ok', 'error', 'timeout', 'died', 'failed']),
  stdout: z.string().default(''),
  stderr: z.string().default(''),
  value: z.string().nullable().optional(),
  error: z.object({ type: z.string(), message: z.string(), traceback: z.string() }).optional(),
  restarted: z.boolean().optional(),
  note: z.string().optional(),
  exit: z.string().optional(),
  message: z.string().optional(),
});
type Response = z.output<typeof ResponseSchema>;

/** Seconds the host waits past a call's time limit before it gives the container up (the supervisor kills first). */
const GRACE_S = 15;
/** How long `prepare` (the next episode's cleanup and interpreter start) may take before the container is given up. */
const PREPARE_S = 60;

class StreamLost extends Error {}

let supervisorSource: string | undefined;

const live = new Set<PythonRunner>();
let exitHook = false;

/**
 * On `beforeExit` (the event loop ran dry and no `close()` came), closes every runner that has a container, so a
 * process that forgot its environments leaves no container behind (as `SandboxPool` does with its spares). An
 * interrupted CLI removes them through the sandbox lifetime; one killed outright leaves them to `gc`.
 */
function watchExit(runner: PythonRunner): void {
  live.add(runner);
  if (exitHook) return;
  exitHook = true;
  process.on('beforeExit', () => {
    if (live.size === 0) return;
    const runners = [...live];
    live.clear();
    void Promise.all(runners.map((r) => r.close()));
  });
}

/**
 * Runs Python code for one environment instance, one episode at a time (see the module comment).
 *
 * @example
 * ```ts
 * const py = new PythonRunner();
 * py.newEpisode();
 * (await py.run('x = 20\nx * 2')).value; // '40'
 * (await py.run('x + 2')).value;         // '22': the episode's variables persist
 * py.newEpisode();
 * (await py.run('x')).status;            // 'error' (NameError): a new episode starts from nothing
 * await py.close();
 * ```
 */
export class PythonRunner {
  readonly limits: PythonLimits;
  private sandbox: Sandbox | undefined;
  private starting: Promise<Sandbox> | undefined;
  private stream: ExecStream | undefined;
  private readonly waiting = new Map<number, { resolve: (r: Response) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private nextId = 1;
  private lineBuffer = '';
  private stderrTail = '';
  private episode = 0;
  private closed = false;

  /** Throws a `ZodError` when `limits` fail {@link PythonLimitsSchema} (the environment validates them first). */
  constructor(limits: z.input<typeof PythonLimitsSchema> = {}) {
    this.limits = PythonLimitsSchema.parse(limits);
  }

  /** The container's id once started (tests and benchmarks look at it). */
  get containerId(): string | undefined {
    return this.sandbox?.id;
  }

  /**
   * Starts a new episode: the next call runs in a fresh interpreter in emptied work areas. When the container is
   * already running, the supervisor does that now (one request, not waited for), while the agent thinks.
   */
  newEpisode(): void {
    this.episode += 1;
    if (this.stream && !this.stream.isEnded) {
      this.request({ op: 'prepare', episode: String(this.episode) }, PREPARE_S).catch(() => undefined);
    }
  }

  /** Runs `code` in the current episode's interpreter. Never throws: every failure is a result. */
  async run(code: string): Promise<PythonCallResult> {
    if (this.closed) return { status: 'failed', stdout: '', stderr: '', restarted: false, message: 'the python tool was closed' };
    try {
      await this.ensureStream();
    } catch (err) {
      return {
        status: 'unavailable',
        stdout: '',
        stderr: '',
        restarted: false,
        message: `the python tool runs code in a Docker sandbox: it needs a Docker engine and the image ${this.limits.image}, and no sandbox could be started: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    let r: Response;
    try {
      r = await this.request({ op: 'run', episode: String(this.episode), code, timeout_s: this.limits.timeoutS }, this.limits.timeoutS + GRACE_S);
    } catch (err) {
      const lost = err instanceof StreamLost;
      return {
        status: lost ? 'died' : 'failed',
        stdout: '',
        stderr: '',
        restarted: true,
        message: err instanceof Error ? err.message : String(err),
      };
    }
    const result: PythonCallResult = { status: r.status, stdout: r.stdout, stderr: r.stderr, restarted: r.restarted === true };
    if (typeof r.value === 'string') result.value = r.value;
    if (r.error) result.error = r.error;
    const message = r.status === 'died' ? `the interpreter exited (${r.exit ?? 'unknown status'})` : (r.message ?? r.note);
    if (message !== undefined) result.message = message;
    if (r.status === 'failed') await this.discard();
    return result;
  }

  /** Removes the container (and with it every process); idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    live.delete(this);
    await this.discard();
  }

  private async ensureStream(retry = true): Promise<void> {
    if (this.stream && !this.stream.isEnded) return;
    if (!this.sandbox) {
      this.starting ??= Sandbox.create({
        task: 'tool-use-python',
        config: {
          image: this.limits.image,
          // The interpreter's own limit plus room for the supervisor and the tmpfs work areas (they count).
          memoryMiB: this.limits.memoryMiB + 512,
          pidsLimit: this.limits.pidsLimit,
          cpus: 1,
        },
      }).finally(() => {
        this.starting = undefined;
      });
      this.sandbox = await this.starting;
      watchExit(this);
      if (this.closed) {
        await this.discard();
        throw new Error('the python tool was closed');
      }
    }
    supervisorSource ??= readFileSync(PYTHON_SUPERVISOR_PATH, 'utf8');
    const config = JSON.stringify({ memory_mib: this.limits.memoryMiB, output_cap: this.limits.outputCapBytes });
    const argv = ['python3', '-S', '-c', 'import sys; exec(sys.argv[1])', supervisorSource, 'supervisor', config];
    const env = ['LANG=C.UTF-8', 'PYTHONDONTWRITEBYTECODE=1'];
    let stream: ExecStream;
    try {
      stream = await this.sandbox.openStream(argv, { env });
    } catch (err) {
      // The container no longer takes an exec (it died, or a fork bomb holds every pid): a new one, once.
      await this.discard();
      if (!retry || this.closed) throw err;
      return this.ensureStream(false);
    }
    this.lineBuffer = '';
    this.stderrTail = '';
    stream.onStdout((chunk) => this.onStdout(chunk));
    stream.onStderr((chunk) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-2000);
    });
    stream.onEnd(() => {
      if (this.stream === stream) this.stream = undefined;
      const why = this.stderrTail.trim();
      this.failAll(new StreamLost(`the Python supervisor stopped${why ? `: ${why.split('\n').pop() ?? ''}` : ''}; a new one starts with the next call, in a fresh interpreter`));
    });
    stream.ref(false);
    this.stream = stream;
  }

  private request(body: Record<string, unknown>, limitS: number): Promise<Response> {
    const stream = this.stream;
    if (!stream || stream.isEnded) return Promise.reject(new StreamLost('the Python supervisor is not running'));
    const id = this.nextId++;
    return new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(() => {
        // The supervisor enforces the time limit itself; one that does not answer long after is lost.
        void this.discard();
        reject(new Error(`the sandbox did not answer within ${limitS} s; it was removed and the next call starts a new one`));
      }, limitS * 1000);
      this.waiting.set(id, { resolve, reject, timer });
      stream.ref(true);
      stream.write(`${JSON.stringify({ id, ...body })}\n`);
    });
  }

  private onStdout(chunk: Buffer): void {
    this.lineBuffer += chunk.toString('utf8');
    for (let i = this.lineBuffer.indexOf('\n'); i >= 0; i = this.lineBuffer.indexOf('\n')) {
      const line = this.lineBuffer.slice(0, i);
      this.lineBuffer = this.lineBuffer.slice(i + 1);
      let parsed: Response;
      try {
        parsed = ResponseSchema.parse(JSON.parse(line));
      } catch {
        this.failAll(new Error(`the Python supervisor wrote an unreadable line: ${line.slice(0, 200)}`));
        void this.discard();
        return;
      }
      const waiter = parsed.id === null ? undefined : this.waiting.get(parsed.id);
      if (!waiter || parsed.id === null) continue;
      this.waiting.delete(parsed.id);
      clearTimeout(waiter.timer);
      if (this.waiting.size === 0) this.stream?.ref(false);
      waiter.resolve(parsed);
    }
  }

  private failAll(err: Error): void {
    for (const [id, w] of this.waiting) {
      clearTimeout(w.timer);
      this.waiting.delete(id);
      w.reject(err);
    }
  }

  /** Drops the stream and removes the container; the next call (unless closed) starts a new one. */
  private async discard(): Promise<void> {
    const stream = this.stream;
    const sandbox = this.sandbox ?? (await this.starting?.catch(() => undefined));
    this.stream = undefined;
    this.sandbox = undefined;
    this.failAll(new StreamLost('the sandbox was removed'));
    stream?.destroy();
    await sandbox?.destroy();
  }
}
