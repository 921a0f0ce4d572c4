import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';

/**
 * Running the Python trainer (`python -m gymflow_trainer COMMAND --config FILE [--resume-from DIR]`, see
 * trainer/gymflow_trainer/cli.py and docs/trainer.md "Events") as a child process the train activity can
 * watch and stop:
 *
 * - the command line, one plain process on CPU or one GPU, `accelerate launch` / `torchrun` for several
 *   ({@link buildTrainerLaunch}, {@link visibleGpuCount});
 * - stdout's JSON-lines events, each handed to a callback (the activity turns them into heartbeats through
 *   {@link nextHeartbeat});
 * - the child is spawned *detached*, in its own process group, so cancelling reaches the trainer and what it
 *   started: SIGTERM to the group, SIGKILL after a grace period ({@link runTrainer}'s `signal`). A launcher
 *   passes SIGTERM on to its ranks, which torchrun starts in sessions of their own (outside the group). The
 *   trainer answers SIGTERM by exiting 143 with its last complete checkpoint on disk.
 * - the child's stdin is the **lifeline**: a pipe this process holds open and never writes to, with
 *   `GYMFLOW_LIFELINE=stdin` in its environment (trainer/gymflow_trainer/lifeline.py). When this process is
 *   gone, even by `kill -9`, the pipe reads end-of-file in the trainer and in every rank a launcher started,
 *   and they stop with SIGTERM (SIGKILL 30 s later), instead of training on until their next write to a dead
 *   stdout, or serving forever. Commands that know nothing of it run under `python -m gymflow_trainer.lifeline`
 *   ({@link superviseLaunch}).
 */

/** The environment variable that tells a trainer process its stdin is the lifeline. */
export const LIFELINE_ENV = 'GYMFLOW_LIFELINE';

/** Commands of `python -m gymflow_trainer`. */
export type TrainerCommand = 'sft' | 'rl' | 'dpo' | 'export-onnx';

/** A process to spawn. */
export interface TrainerLaunch {
  command: string;
  args: string[];
}

/** Options of {@link buildTrainerLaunch}. */
export interface LaunchOptions {
  /** The Python interpreter of the trainer's environment (`.venv/bin/python`). */
  python: string;
  trainerCommand: TrainerCommand;
  configFile: string;
  /** A checkpoint directory to continue from (passed as `--resume-from`). */
  resumeFrom?: string | undefined;
  /** Processes to start (one per GPU); 1 = a plain process. */
  processes: number;
  /** `auto` picks accelerate when `hasAccelerate`, else torchrun. */
  launcher: 'auto' | 'accelerate' | 'torchrun';
  /** Whether `accelerate` is importable in the trainer's environment (for `auto`). */
  hasAccelerate?: boolean;
}

/**
 * The command line of one trainer run.
 *
 * - 1 process: `python -m gymflow_trainer CMD --config FILE [--resume-from DIR]`;
 * - accelerate: `python -m accelerate.commands.launch --multi_gpu --num_processes N -m gymflow_trainer CMD …`;
 * - torchrun: `python -m torch.distributed.run --standalone --nproc_per_node N -m gymflow_trainer CMD …`.
 *
 * The launchers are run as modules of the same interpreter, so they come from the trainer's environment
 * whatever is on PATH.
 */
export function buildTrainerLaunch(o: LaunchOptions): TrainerLaunch {
  if (!Number.isInteger(o.processes) || o.processes < 1) throw new Error(`processes must be a positive integer, got ${o.processes}`);
  const trainerArgs = [o.trainerCommand, '--config', o.configFile, ...(o.resumeFrom === undefined ? [] : ['--resume-from', o.resumeFrom])];
  // export-onnx is a single-process job whatever the GPU count.
  if (o.processes === 1 || o.trainerCommand === 'export-onnx') return { command: o.python, args: ['-m', 'gymflow_trainer', ...trainerArgs] };
  const launcher = o.launcher === 'auto' ? (o.hasAccelerate ? 'accelerate' : 'torchrun') : o.launcher;
  if (launcher === 'accelerate') {
    return {
      command: o.python,
      args: ['-m', 'accelerate.commands.launch', '--multi_gpu', '--num_processes', String(o.processes), '-m', 'gymflow_trainer', ...trainerArgs],
    };
  }
  return {
    command: o.python,
    args: ['-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', String(o.processes), '-m', 'gymflow_trainer', ...trainerArgs],
  };
}

/**
 * `launch` under the lifeline's supervisor (`python -m gymflow_trainer.lifeline -- COMMAND …`), for a command
 * that knows nothing of the lifeline, such as `vllm serve`: the supervisor stops it, and what it started, once
 * this process is gone. Exit status, stdout and stderr are the command's; one that cannot be started exits 2
 * with an `error` event naming it.
 */
export function superviseLaunch(python: string, launch: TrainerLaunch): TrainerLaunch {
  return { command: python, args: ['-m', 'gymflow_trainer.lifeline', '--', launch.command, ...launch.args] };
}

/**
 * GPUs this process may use: `CUDA_VISIBLE_DEVICES` when set (empty, `-1` or `NoDevFiles` = none), else the
 * `GPU n:` lines of `nvidia-smi -L` (0 when it is missing or fails).
 */
export function visibleGpuCount(env: Record<string, string | undefined> = process.env, nvidiaSmi: () => string | undefined = runNvidiaSmi): number {
  const visible = env['CUDA_VISIBLE_DEVICES'];
  if (visible !== undefined) {
    const ids = visible
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (ids.length === 0 || ids[0] === 'NoDevFiles') return 0;
    // CUDA stops at the first invalid id (a negative one hides the rest).
    const valid = [];
    for (const id of ids) {
      if (/^-\d+$/.test(id)) break;
      valid.push(id);
    }
    return valid.length;
  }
  const listing = nvidiaSmi();
  if (listing === undefined) return 0;
  return listing.split('\n').filter((l) => /^GPU \d+:/.test(l.trim())).length;
}

function runNvidiaSmi(): string | undefined {
  const r = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 ? r.stdout : undefined;
}

/** The number of trainer processes: the configured count, else one per visible GPU, at least 1 (CPU). */
export function trainerProcessCount(configured: number | undefined, gpus: number): number {
  return configured ?? Math.max(1, gpus);
}

// ---------------------------------------------------------------------------------------------------------
// Events

/** One JSON line of the trainer's stdout (docs/trainer.md "Events"); unknown fields are kept. */
export const TrainerEventSchema = z.discriminatedUnion('event', [
  z.looseObject({
    event: z.literal('start'),
    total_steps: z.number().optional(),
    start_step: z.number().optional(),
    resumed_from: z.string().nullable().optional(),
    /** Checkpoints the trainer could not read back and set aside (`<name>.unreadable`), newest first. */
    unreadable_checkpoints: z.array(z.looseObject({ path: z.string(), error: z.string() })).optional(),
    /** RL: the samples cut at `max_length`. */
    cut_samples: z.number().optional(),
    /** With `optim.carry_state`: the optimizer state file the run continued from; null: zero moments. */
    optimizer_from: z.string().nullable().optional(),
  }),
  z.looseObject({
    event: z.literal('progress'),
    step: z.number(),
    total_steps: z.number().optional(),
    loss: z.number().nullable().optional(),
    /** RL: the policy's mean entropy at the step's trained tokens (nats). */
    entropy: z.number().nullable().optional(),
    /** RL with the rollout's log-probs: the k3 estimate of KL(rollout engine ‖ trainer) at those tokens. */
    mismatch_kl: z.number().nullable().optional(),
  }),
  z.looseObject({ event: z.literal('checkpoint'), path: z.string(), step: z.number() }),
  z.looseObject({ event: z.literal('done'), path: z.string().optional(), loss: z.number().nullable().optional(), step: z.number().optional() }),
  z.looseObject({ event: z.literal('error'), type: z.string(), message: z.string() }),
]);
/** A parsed trainer event. */
export type TrainerEvent = z.infer<typeof TrainerEventSchema>;

/** Parses one stdout line; `undefined` for a line that is not a trainer event (a launcher's chatter). */
export function parseTrainerEvent(line: string): TrainerEvent | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const parsed = TrainerEventSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Heartbeat details of the train activity: progress, the last loss and the latest complete checkpoint —
 * what a retry needs to resume (`--resume-from checkpoint`).
 */
export interface TrainHeartbeat {
  step: number;
  totalSteps: number | null;
  loss: number | null;
  /** The last policy entropy the trainer reported (RL); null before one, and for commands that report none. */
  entropy: number | null;
  /**
   * The last gap between the rollout engine's log-probs and the trainer's it reported (RL on step samples,
   * docs/trainer.md "Rollout correction"); null before one, and when there is none to report.
   */
  mismatchKl: number | null;
  /** The samples `max_length` cut (RL's start event); null for commands that do not say. */
  cutSamples: number | null;
  /** The newest complete checkpoint directory the trainer reported. */
  checkpoint: string | null;
  checkpointStep: number | null;
  /** The attempt that wrote these details. */
  attempt: number;
  /** The step of the checkpoint this attempt resumed from (null: it started from the policy). */
  resumedStep: number | null;
  /** The attempts in a row before this one that ended without a newer checkpoint ({@link attemptsWithoutProgress}). */
  attemptsWithoutProgress: number;
}

/** The heartbeat details after `event` (pure: `prev` is not changed). */
export function nextHeartbeat(prev: TrainHeartbeat, event: TrainerEvent): TrainHeartbeat {
  switch (event.event) {
    case 'start': {
      const next = {
        ...prev,
        totalSteps: event.total_steps ?? prev.totalSteps,
        step: event.start_step ?? prev.step,
        cutSamples: event.cut_samples ?? prev.cutSamples,
      };
      // What the trainer actually resumed from: an older checkpoint than asked when the newest was unreadable,
      // or none.
      if (event.resumed_from === undefined) return next;
      return { ...next, checkpoint: event.resumed_from, checkpointStep: event.resumed_from === null ? null : (event.start_step ?? null) };
    }
    case 'progress':
      return {
        ...prev,
        step: event.step,
        totalSteps: event.total_steps ?? prev.totalSteps,
        loss: event.loss ?? null,
        entropy: event.entropy === undefined ? prev.entropy : event.entropy,
        mismatchKl: event.mismatch_kl === undefined ? prev.mismatchKl : event.mismatch_kl,
      };
    case 'checkpoint':
      return { ...prev, checkpoint: event.path, checkpointStep: event.step, step: Math.max(prev.step, event.step) };
    case 'done':
      return { ...prev, step: event.step ?? prev.step, loss: event.loss === undefined ? prev.loss : event.loss };
    case 'error':
      return prev;
  }
}

/** Empty heartbeat details for attempt `attempt`. */
export function initialHeartbeat(attempt: number): TrainHeartbeat {
  return {
    step: 0,
    totalSteps: null,
    loss: null,
    entropy: null,
    mismatchKl: null,
    cutSamples: null,
    checkpoint: null,
    checkpointStep: null,
    attempt,
    resumedStep: null,
    attemptsWithoutProgress: 0,
  };
}

/**
 * How many attempts in a row a training may end without a newer checkpoint than it started from before `train`
 * stops retrying it. An attempt that got further (a `kill -9`, a lost worker, a preempted GPU mid-run) does not
 * count: a long run survives any number of those, each resuming where the last one got to, while a trainer that
 * fails the same way every time is given up on after three.
 */
export const TRAIN_ATTEMPTS_WITHOUT_PROGRESS = 3;

/** The step of a `checkpoint-<step>` directory; null for none. */
export function checkpointStepOf(dir: string | undefined): number | null {
  const m = dir === undefined ? null : CHECKPOINT_NAME.exec(path.basename(dir));
  return m === null ? null : Number(m[1]);
}

/**
 * The attempts in a row, up to and including the previous one, that ended without a newer checkpoint than they
 * started from: `previous` is the previous attempt's heartbeat details, `resumeStep` the step this attempt resumes
 * from (the newest checkpoint there is now, from those details or on disk: {@link resumeFrom}). Details without the
 * count (none, or from an older worker) count as a first attempt.
 */
export function attemptsWithoutProgress(previous: unknown, resumeStep: number | null): number {
  const prev = typeof previous === 'object' && previous !== null ? (previous as { resumedStep?: unknown; attemptsWithoutProgress?: unknown }) : {};
  const startedAt = typeof prev.resumedStep === 'number' ? prev.resumedStep : null;
  const progressed = resumeStep !== null && (startedAt === null || resumeStep > startedAt);
  const before = typeof prev.attemptsWithoutProgress === 'number' ? prev.attemptsWithoutProgress : 0;
  return progressed ? 0 : before + 1;
}

/** Whether the attempt whose heartbeat is `beat` reported a newer checkpoint than it resumed from. */
export function madeProgress(beat: TrainHeartbeat): boolean {
  return beat.checkpointStep !== null && beat.checkpointStep > (beat.resumedStep ?? -1);
}

/** The file the trainer writes last into a checkpoint (trainer/gymflow_trainer/checkpoints.py `STATE_FILE`). */
const CHECKPOINT_STATE_FILE = 'trainer_state.pt';
const CHECKPOINT_NAME = /^checkpoint-(\d+)$/;

/**
 * Whether `dir` is a complete step checkpoint: the trainer writes `.checkpoint-N.tmp-PID` and renames it to
 * `checkpoint-N` once written, so the rename makes it complete; like the trainer's own `list_checkpoints`,
 * the state file must be there too (a directory that rotation was deleting when the trainer died is not).
 */
export function isCompleteCheckpoint(dir: string): boolean {
  return CHECKPOINT_NAME.test(path.basename(dir)) && existsSync(path.join(dir, CHECKPOINT_STATE_FILE));
}

/** The newest complete `checkpoint-<step>` directory in `outputDir` (none when it has none or is missing). */
export function newestCheckpoint(outputDir: string): { path: string; step: number } | undefined {
  let names: string[];
  try {
    names = readdirSync(outputDir);
  } catch {
    return undefined;
  }
  let best: { path: string; step: number } | undefined;
  for (const name of names) {
    const m = CHECKPOINT_NAME.exec(name);
    if (m === null) continue;
    const step = Number(m[1]);
    const dir = path.join(outputDir, name);
    if ((best === undefined || step > best.step) && isCompleteCheckpoint(dir)) best = { path: dir, step };
  }
  return best;
}

/**
 * The checkpoint a retried attempt resumes from: the newer of the one named in the previous attempt's
 * heartbeat details (when it is still complete on disk) and the newest complete checkpoint in `outputDir`
 * (the attempt's own output directory, the same for every attempt of a workflow run's iteration).
 *
 * The server holds the last heartbeat the worker *sent* (throttled, seconds old), so by the time a lost
 * worker is noticed the trainer may have written newer checkpoints and rotated the heartbeated one away
 * (`keep_last`); on-disk checkpoints cover that. A retry on another host without the directory starts over.
 */
export function resumeFrom(details: unknown, outputDir: string | undefined): string | undefined {
  let beat: { path: string; step: number } | undefined;
  if (typeof details === 'object' && details !== null) {
    const { checkpoint, checkpointStep } = details as { checkpoint?: unknown; checkpointStep?: unknown };
    if (typeof checkpoint === 'string' && checkpoint !== '' && isCompleteCheckpoint(checkpoint)) {
      const step = typeof checkpointStep === 'number' ? checkpointStep : Number(CHECKPOINT_NAME.exec(path.basename(checkpoint))?.[1]);
      beat = { path: checkpoint, step };
    }
  }
  const disk = outputDir === undefined ? undefined : newestCheckpoint(outputDir);
  if (beat === undefined) return disk?.path;
  if (disk === undefined) return beat.path;
  return disk.step > beat.step ? disk.path : beat.path;
}

// ---------------------------------------------------------------------------------------------------------
// Running

/** Options of {@link runTrainer}. */
export interface RunTrainerOptions {
  launch: TrainerLaunch;
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Called for every event, in order. */
  onEvent?: (event: TrainerEvent) => void;
  /** Aborting it stops the trainer: SIGTERM to its process group, SIGKILL after `killGraceMs`. */
  signal?: AbortSignal;
  /** Default 10 s: long enough for the trainer to finish writing a checkpoint. */
  killGraceMs?: number;
  /**
   * Appends everything the command writes, stdout and stderr, to this file, under a line naming the command and
   * followed by one with its exit: the record of warnings, tracebacks and the watchdog's stacks, which the result
   * keeps only the end of. A failed write (a full disk) loses log lines, never the run.
   */
  logFile?: string;
}

/** How a trainer run ended. */
export interface TrainerRunResult {
  exitCode: number | null;
  /** The signal that ended the trainer, when one did. */
  exitSignal: NodeJS.Signals | null;
  /** The process group id (the trainer's pid). */
  pid: number;
  done?: Extract<TrainerEvent, { event: 'done' }>;
  error?: Extract<TrainerEvent, { event: 'error' }>;
  /** The newest checkpoint event. */
  lastCheckpoint?: Extract<TrainerEvent, { event: 'checkpoint' }>;
  /** Whether `signal` stopped it. */
  aborted: boolean;
  /** Whether SIGKILL was needed after the grace period. */
  killed: boolean;
  /** The last few KB of stderr (tracebacks). */
  stderrTail: string;
}

const STDERR_TAIL = 8192;

/**
 * Environment defaults of every trainer process, under what the worker's environment and the caller set.
 * `OMP_WAIT_POLICY=PASSIVE`: torch's OpenMP threads sleep at a barrier instead of spinning. A trainer shares
 * its host with the worker's other activities (and CI with other tests); with spinning threads one busy core
 * made CPU training 4.3x slower (60 SFT steps of examples/learning/sft-tool-use.yaml on 2 cores: 100 s with a
 * busy-looping process beside it against 23 s idle), passive ones 1.4x (34 s), at a cost of 6% idle (24.5 s).
 * On a GPU host the threads only feed the GPU, so sleeping costs nothing there.
 */
export const TRAINER_ENV_DEFAULTS: Readonly<Record<string, string>> = { OMP_WAIT_POLICY: 'PASSIVE' };

/** An append stream for {@link RunTrainerOptions.logFile}, its directory created; its errors are dropped. */
function openLog(file: string): WriteStream {
  mkdirSync(path.dirname(file), { recursive: true });
  const log = createWriteStream(file, { flags: 'a' });
  log.on('error', () => undefined);
  return log;
}

/** Sends `sig` to the process group `pid`; false when the group is gone. */
function killGroup(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs the trainer to its end and reports how it ended. Never rejects for a non-zero exit (the caller maps
 * exit codes: 2 configuration, 3 data, 4 checkpoint, 143 SIGTERM, see cli.py); rejects only when the
 * process cannot be started.
 */
export function runTrainer(options: RunTrainerOptions): Promise<TrainerRunResult> {
  return new Promise<TrainerRunResult>((resolve, reject) => {
    const child = spawn(options.launch.command, options.launch.args, {
      cwd: options.cwd,
      env: { ...TRAINER_ENV_DEFAULTS, ...process.env, ...options.env, PYTHONUNBUFFERED: '1', [LIFELINE_ENV]: 'stdin' },
      // Its own process group: kill(-pid) reaches its data loaders, and the launcher, which passes SIGTERM on
      // to the ranks it started in sessions of their own.
      detached: true,
      // stdin is the lifeline (see the module comment): never written, closed when this process is gone.
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid === undefined) {
      child.once('error', (err) => reject(new Error(`cannot start the trainer (${options.launch.command}): ${err.message}`)));
      return;
    }
    const result: TrainerRunResult = { exitCode: null, exitSignal: null, pid, aborted: false, killed: false, stderrTail: '' };
    const log = options.logFile === undefined ? undefined : openLog(options.logFile);
    log?.write(`=== ${new Date().toISOString()} pid ${pid}: ${[options.launch.command, ...options.launch.args].join(' ')}\n`);
    const toLog = (text: string): void => void (log?.writableEnded === false && log.write(text));
    // Nothing is written to the lifeline, so the only error it can raise is the trainer closing its end.
    child.stdin.on('error', () => undefined);
    const cutLifeline = (): void => void child.stdin.destroy();
    let killTimer: NodeJS.Timeout | undefined;
    const stop = (): void => {
      if (result.aborted) return;
      result.aborted = true;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => {
        if (killGroup(pid, 'SIGKILL')) result.killed = true;
        // Ranks that a launcher started in sessions of their own outlive its SIGKILL, and still hold stdout:
        // the end-of-file on the lifeline stops them.
        cutLifeline();
      }, options.killGraceMs ?? 10_000);
    };
    // If the worker itself exits, take the trainer down with it rather than leaving an orphan on the GPU.
    const onExit = (): void => void killGroup(pid, 'SIGKILL');
    process.once('exit', onExit);
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener('abort', stop, { once: true });

    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      result.stderrTail = (result.stderrTail + chunk).slice(-STDERR_TAIL);
      toLog(chunk);
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      toLog(`${line}\n`);
      const event = parseTrainerEvent(line);
      if (event === undefined) return;
      if (event.event === 'done') result.done = event;
      else if (event.event === 'error') result.error = event;
      else if (event.event === 'checkpoint') result.lastCheckpoint = event;
      options.onEvent?.(event);
    });
    let stdoutClosed = false;
    let exited = false;
    const finish = (): void => {
      if (!stdoutClosed || !exited) return;
      if (killTimer) clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', stop);
      process.removeListener('exit', onExit);
      // The trainer is gone; anything it left in its group (a stuck data-loader worker) goes too, and so does
      // whatever still watches the lifeline outside the group.
      killGroup(pid, 'SIGKILL');
      cutLifeline();
      if (log === undefined) return resolve(result);
      log.end(`=== exit ${result.exitCode ?? result.exitSignal ?? '?'}${result.aborted ? ' (stopped)' : ''}\n`, () => resolve(result));
    };
    lines.on('close', () => {
      stdoutClosed = true;
      finish();
    });
    child.once('error', (err) => {
      result.stderrTail += `\n${err.message}`;
    });
    child.once('exit', (code, sig) => {
      result.exitCode = code;
      result.exitSignal = sig;
      exited = true;
      finish();
    });
  });
}

/** What a trainer exit means for the activity. */
export type TrainerOutcome =
  | { kind: 'ok' }
  | { kind: 'cancelled'; message: string }
  | { kind: TrainerFailureKind; message: string };

/** How a trainer run that neither succeeded nor was stopped failed. */
export type TrainerFailureKind = 'config' | 'data' | 'checkpoint' | 'diverged' | 'out_of_memory' | 'stalled' | 'failed';

/** cli.py's exit codes (its module docstring); any other code is `failed`. */
const EXIT_KINDS: Readonly<Record<number, TrainerFailureKind>> = { 2: 'config', 3: 'data', 4: 'checkpoint', 5: 'diverged', 6: 'out_of_memory', 7: 'stalled' };

/**
 * Maps a run's exit (cli.py's codes: 2 configuration, 3 data, 4 checkpoint, 5 diverged, 6 out of memory, 7 stalled;
 * and its `error` event) to an outcome with a readable message. Under torchrun a rank's own code becomes the
 * launcher's 1, so a `Stalled` error event counts as stalled whatever the code.
 */
export function classifyTrainerRun(r: TrainerRunResult, label: string): TrainerOutcome {
  if (r.exitCode === 0 && r.done !== undefined) return { kind: 'ok' };
  const what = r.error ? `${r.error.type}: ${r.error.message}` : r.stderrTail.trim().split('\n').slice(-3).join(' | ') || 'no error event';
  const how = r.exitCode !== null ? `exit ${r.exitCode}` : `signal ${r.exitSignal ?? '?'}`;
  const message = `${label} failed (${how}): ${what}`;
  if (r.aborted) return { kind: 'cancelled', message: `${label} stopped (${how}${r.killed ? ', SIGKILL after the grace period' : ''})` };
  if (r.exitCode === 0) return { kind: 'failed', message: `${label} exited 0 without a done event` };
  const kind = (r.exitCode === null ? undefined : EXIT_KINDS[r.exitCode]) ?? (r.error?.type === 'Stalled' ? 'stalled' : 'failed');
  return { kind, message };
}
