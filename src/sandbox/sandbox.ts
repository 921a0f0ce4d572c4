import type Docker from 'dockerode';
import { hostname } from 'node:os';
import {
  configFromInspect,
  containerSpecFor,
  LABEL_CREATED,
  LABEL_DETACHED,
  LABEL_OWNER_HOST,
  LABEL_OWNER_PID,
  LABEL_SANDBOX,
  LABEL_TASK,
  resolveConfig,
  WORK_DIR,
  type SandboxConfig,
} from './config.js';
import { dockerClient, dockerEndpoint } from './docker.js';
import { SandboxError } from './errors.js';
import { runExec, type ExecResult } from './exec.js';
import { injectFault } from '../core/faults.js';
import { ExecStream } from './exec-stream.js';
import { gcOnce } from './gc.js';
import { assertNotStopping, sandboxesStopping, trackContainer, trackCreation, untrackContainer } from './lifetime.js';
import { defined } from '../core/defined.js';
import { scopeLabels } from './scope-context.js';

/** Options of {@link Sandbox.create}. */
export interface CreateSandboxOptions {
  config?: Partial<SandboxConfig>;
  /** Task id, recorded as a label. */
  task?: string;
  /** Keep the container after this process exits (the CLI's `create`); `gc` then leaves it alone. */
  detached?: boolean;
  /** Where warnings about hardening overrides go (default `console.warn`). */
  warn?: (message: string) => void;
  docker?: Docker;
  /** Skip the once-per-process removal of orphaned sandboxes. */
  skipGc?: boolean;
}

/** Options of {@link Sandbox.exec}. */
export interface SandboxExecOptions {
  timeoutS?: number;
  stdin?: Buffer;
  outputCapBytes?: number;
  rawStdout?: boolean;
  workingDir?: string;
  /** Seconds past `timeoutS` before the host gives the exec up as hung (default 5). */
  graceS?: number;
}

/**
 * Empties every place the agent can write — /work, /tmp, $HOME, /dev/shm, /dev/mqueue (the root is
 * read-only) — removes its System V IPC objects, checks that those places are really empty (exit 4
 * otherwise), and extracts the tar on stdin into /work (exit 3 when that fails). Stray processes are
 * killed by the exec wrapper first. A fixed script: nothing the agent wrote is interpolated into it.
 */
const WRITABLE = '/work /tmp /home/agent /dev/shm /dev/mqueue';
const RESET_SCRIPT = `
find ${WRITABLE} -mindepth 1 -delete 2>/dev/null || {
  chmod -R u+rwX ${WRITABLE} 2>/dev/null
  find ${WRITABLE} -mindepth 1 -delete 2>/dev/null
}
ipcrm -a 2>/dev/null
[ -z "$(find ${WRITABLE} -mindepth 1 -print -quit 2>/dev/null)" ] || exit 4
tar -x -C /work -f - || exit 3
`;

/**
 * The code of a {@link SandboxError} for an exec that did not come back (the engine refused or lost it, or it hung):
 * the sandbox recovered on its own (replaced when it stopped answering), so the failure is not the command's, and an
 * operation that can start again from a known state (building a task's base state) may retry it.
 */
export const EXEC_LOST = 'SANDBOX_EXEC_LOST';

/** The error of a sandbox operation whose exec failed: {@link EXEC_LOST} when the exec did not come back. */
export function execFailure(what: string, r: ExecResult): SandboxError {
  return new SandboxError(`${what} failed (exit ${r.exitCode}): ${r.output.trim()}`, r.hung ? { code: EXEC_LOST } : undefined);
}

/**
 * One hardened Docker container an agent works in (see docs/sandbox.md for the hardening table).
 * Everything goes through `exec`: every call has a time limit that really stops it and an output cap; files
 * travel as tar streams piped into `tar -x` (the archive API fails on a read-only root).
 *
 * @example
 * ```ts
 * const sb = await Sandbox.create({ task: 'demo' });
 * await sb.putTar(await packTar([{ path: 'a.py', content: 'print(1)\n' }]));
 * const r = await sb.exec(['python3', 'a.py']);   // r.output === '1\n'
 * await sb.destroy();
 * ```
 */
export class Sandbox {
  /** Times the container was replaced because it stopped answering. */
  replacements = 0;
  /** The archive of the last reset: what a replaced container's /work is restored to. */
  private baseArchive: Buffer | undefined;
  private destroyed = false;

  private constructor(
    private readonly docker: Docker,
    private container: Docker.Container,
    readonly config: SandboxConfig,
    private readonly createOptions: CreateSandboxOptions,
  ) {}

  /** True once {@link destroy} was called. */
  get isDestroyed(): boolean {
    return this.destroyed;
  }

  /** Created to outlive its process (the CLI's sandboxes); never pooled. */
  get detached(): boolean {
    return this.createOptions.detached === true;
  }

  /** The container id (changes when the container is replaced). */
  get id(): string {
    return this.container.id;
  }

  /** Creates and starts a hardened container; removes orphans of dead processes first (once per process). */
  static async create(options: CreateSandboxOptions = {}): Promise<Sandbox> {
    const docker = options.docker ?? dockerClient();
    const config = resolveConfig(options.config);
    if (!options.skipGc) await gcOnce(docker);
    const container = await Sandbox.startContainer(docker, config, options);
    return new Sandbox(docker, container, config, options);
  }

  /**
   * Attaches to an existing, running sandbox container by id (the CLI's `exec`, `reset`, `snapshot`). Its
   * config is the one the container really has ({@link configFromInspect}: the engine's record plus the
   * exec settings' label), so a snapshot records it and a replacement container gets the same hardening.
   */
  static async attach(id: string, options: { docker?: Docker } = {}): Promise<Sandbox> {
    const docker = options.docker ?? dockerClient();
    const { container, info } = await Sandbox.inspectSandbox(docker, id);
    if (!info.State.Running) throw new SandboxError(`sandbox '${id}' is not running (${info.State.Status}); \`gymflow sandbox destroy ${id}\` removes it`);
    const task = info.Config.Labels?.[LABEL_TASK];
    return new Sandbox(docker, container, configFromInspect(info), {
      detached: info.Config.Labels?.[LABEL_DETACHED] === '1',
      ...defined({ task }),
    });
  }

  /**
   * Removes a gymflow sandbox container by id whatever its state (running, stopped, dead); refuses a
   * container that is not a gymflow sandbox.
   */
  static async remove(id: string, options: { docker?: Docker } = {}): Promise<void> {
    const docker = options.docker ?? dockerClient();
    const { container } = await Sandbox.inspectSandbox(docker, id);
    await container.remove({ force: true }).catch((err: unknown) => {
      if (!/no such container|removal .* in progress/i.test(String(err))) throw err;
    });
    untrackContainer(container.id);
  }

  /** The container of a gymflow sandbox and its inspect record; errors name the id. */
  private static async inspectSandbox(docker: Docker, id: string): Promise<{ container: Docker.Container; info: Docker.ContainerInspectInfo }> {
    let info: Docker.ContainerInspectInfo;
    try {
      info = await docker.getContainer(id).inspect();
    } catch (err) {
      throw new SandboxError(`no sandbox '${id}' on ${dockerEndpoint()}`, { cause: err, code: 'SANDBOX_NOT_FOUND' });
    }
    if (info.Config.Labels?.[LABEL_SANDBOX] !== '1') throw new SandboxError(`container '${id}' is not a gymflow sandbox`);
    // By the full id: the engine's answer, whatever prefix or name the caller gave.
    return { container: docker.getContainer(info.Id), info };
  }

  private static async startContainer(docker: Docker, config: SandboxConfig, options: CreateSandboxOptions): Promise<Docker.Container> {
    const labels: Record<string, string> = {
      // The workflow, run and activity whose work this is, inside a scope (scope-context.ts).
      ...scopeLabels(),
      [LABEL_SANDBOX]: '1',
      [LABEL_OWNER_PID]: String(process.pid),
      [LABEL_OWNER_HOST]: hostname(),
      [LABEL_CREATED]: new Date().toISOString(),
    };
    if (options.detached) labels[LABEL_DETACHED] = '1';
    if (options.task !== undefined) labels[LABEL_TASK] = options.task;
    assertNotStopping();
    let container: Docker.Container;
    try {
      container = await trackCreation(docker.createContainer(containerSpecFor(config, labels, options.warn)));
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      const hint = /no such image/i.test(msg) ? `; build it with \`gymflow sandbox build-image\`` : '';
      throw new SandboxError(`cannot create a sandbox from image '${config.image}' on ${dockerEndpoint()}: ${msg}${hint}`, { cause: err });
    }
    // Tracked until removed (a detached one until its creator hands it over), so an interrupted process
    // removes it (lifetime.ts).
    trackContainer(container);
    try {
      if (sandboxesStopping()) throw new SandboxError('the process is shutting down: no new sandbox is created', { code: 'SANDBOX_STOPPING' });
      await container.start();
    } catch (err) {
      await container.remove({ force: true }).catch(() => undefined);
      untrackContainer(container.id);
      if (err instanceof SandboxError) throw err;
      throw new SandboxError(`cannot start sandbox container: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return container;
  }

  private async rawExec(argv: readonly string[], o: SandboxExecOptions = {}): Promise<ExecResult> {
    if (this.destroyed) throw new SandboxError('sandbox used after destroy()');
    return runExec(this.container, argv, {
      timeoutS: o.timeoutS ?? this.config.execTimeoutS,
      outputCapBytes: o.outputCapBytes ?? this.config.outputCapBytes,
      workingDir: o.workingDir ?? WORK_DIR,
      user: this.config.user,
      killStrays: true,
      ...defined({ stdin: o.stdin }),
      ...(o.rawStdout ? { rawStdout: true } : {}),
      ...defined({ graceS: o.graceS }),
    });
  }

  /**
   * Runs argv (no shell) as the agent user in /work. Never throws for the command's own failure: the
   * result carries the exit code, the capped output and whether the time limit killed it. When the exec
   * does not come back, the container is replaced (work dir restored from `restore`) and `hung` is set.
   */
  async exec(argv: readonly string[], o: SandboxExecOptions = {}): Promise<ExecResult> {
    let r: ExecResult;
    try {
      injectFault('sandbox.exec'); // test-only (GYMFLOW_FAULTS); a no-op unless a test or the soak turned it on
      r = await this.rawExec(argv, o);
    } catch (err) {
      if (this.destroyed) throw err;
      // The engine refused the exec (e.g. no pids left for it): treat like a hang.
      r = {
        output: `[sandbox: exec failed: ${err instanceof Error ? err.message : String(err)}]`,
        exitCode: -1,
        truncated: false,
        outputBytes: 0,
        timedOut: false,
        hung: true,
        durationMs: 0,
      };
    }
    if (r.hung || r.exitCode === 137 || r.exitCode === -1) {
      // Killed or lost: clean up what the command left (a fork bomb's survivors), then make sure the
      // sandbox still answers; if not, replace it before the next step.
      const ok = !r.hung && (await this.killStrays().catch(() => false)) && (await this.healthy());
      if (!ok) {
        await this.replace();
        if (this.baseArchive) await this.reset(this.baseArchive);
        r.replaced = true;
        r.output += this.baseArchive
          ? `\n[sandbox: the sandbox stopped answering and was replaced; /work was restored to the task's initial state]`
          : `\n[sandbox: the sandbox stopped answering and was replaced; /work is empty]`;
      }
    }
    return r;
  }

  /**
   * Starts a long-lived process as the agent user in /work with its stdin, stdout and stderr attached (one
   * `docker exec -i`, see {@link ExecStream}): no time limit, no output cap and no stray killing, which are the
   * process's own business. It ends when the container is destroyed or replaced.
   */
  async openStream(argv: readonly string[], o: { env?: string[]; workingDir?: string } = {}): Promise<ExecStream> {
    if (this.destroyed) throw new SandboxError('sandbox used after destroy()');
    return ExecStream.open(this.container, argv, { user: this.config.user, workingDir: o.workingDir ?? WORK_DIR, ...defined({ env: o.env }) });
  }

  /** Runs a shell command line (`bash -c`) in /work. */
  async shell(command: string, o: SandboxExecOptions = {}): Promise<ExecResult> {
    return this.exec(['bash', '-c', command], o);
  }

  /** True when a trivial exec comes back within a few seconds. */
  async healthy(): Promise<boolean> {
    if (this.destroyed) return false;
    try {
      const r = await runExec(this.container, ['true'], { timeoutS: 3, graceS: 3, outputCapBytes: 1024, user: this.config.user });
      return r.exitCode === 0;
    } catch {
      return false;
    }
  }

  /** Kills every process the agent left behind (background jobs, a fork bomb's survivors). */
  async killStrays(): Promise<boolean> {
    const r = await this.rawExec(['true'], { timeoutS: 10 });
    return r.exitCode === 0;
  }

  /**
   * Restores the work dir to the state in `archive` (a tar of /work): kills stray processes, empties every
   * writable place (/work, /tmp, $HOME, /dev/shm, /dev/mqueue) and the agent's IPC objects, extracts the
   * archive — one exec. Replaces the container when it does not answer or the wipe left something.
   */
  async reset(archive: Buffer): Promise<void> {
    this.baseArchive = archive;
    const r = await this.rawExec(['sh', '-c', RESET_SCRIPT], { timeoutS: 30, stdin: archive }).catch(() => undefined);
    if (r?.exitCode === 0) return;
    if (r !== undefined && !r.hung && r.exitCode === 3) throw new SandboxError(`reset: extracting the work dir failed: ${r.output.trim()}`);
    await this.replace();
    const again = await this.rawExec(['sh', '-c', RESET_SCRIPT], { timeoutS: 30, stdin: archive });
    if (again.exitCode !== 0) throw new SandboxError(`reset failed even in a fresh container (exit ${again.exitCode}): ${again.output.trim()}`);
  }

  /**
   * Like {@link reset}, but never replaces the container: any failure (the exec fails, hangs, or the
   * script exits non-zero) throws. What the warm pool ({@link SandboxPool}) uses, so that a container that
   * failed never becomes a spare.
   */
  async restoreExact(archive: Buffer): Promise<void> {
    const r = await this.rawExec(['sh', '-c', RESET_SCRIPT], { timeoutS: 30, stdin: archive });
    if (r.hung || r.exitCode !== 0) throw new SandboxError(`restore failed (exit ${r.exitCode}${r.hung ? ', hung' : ''}): ${r.output.trim()}`);
    this.baseArchive = archive;
  }

  /** Replaces the container with a fresh one of the same config (the old one is killed and removed). */
  async replace(): Promise<void> {
    // Remove the old container while the new one starts; both finish before the next exec.
    const old = this.container;
    const removal = old
      .remove({ force: true })
      .then(() => untrackContainer(old.id))
      .catch(() => undefined);
    this.container = await Sandbox.startContainer(this.docker, this.config, this.createOptions);
    await removal;
    this.replacements += 1;
  }

  /** Extracts a tar archive into `dir` (default /work) through `tar -x` on stdin. */
  async putTar(archive: Buffer, dir = WORK_DIR): Promise<void> {
    const r = await this.exec(['tar', '-x', '-C', dir, '-f', '-'], { stdin: archive, timeoutS: 60 });
    if (r.exitCode !== 0) throw execFailure(`putTar into ${dir}`, r);
  }

  /** A tar archive of `paths` (relative to `dir`, default: everything in /work) read through `tar -c`. */
  async getTar(paths: readonly string[] = ['.'], dir = WORK_DIR, exclude: readonly string[] = []): Promise<Buffer> {
    const r = await this.exec(['tar', '-c', '-C', dir, ...exclude.map((e) => `--exclude=${e}`), '-f', '-', '--', ...paths], { rawStdout: true, timeoutS: 60 });
    if (r.exitCode !== 0 || r.stdout === undefined) throw execFailure(`getTar of ${paths.join(' ')}`, r);
    return r.stdout;
  }

  /** Container facts for snapshots and the CLI. */
  async facts(): Promise<Record<string, unknown>> {
    const info = await this.container.inspect();
    return {
      id: info.Id,
      image: info.Config.Image,
      imageId: info.Image,
      created: info.Created,
      labels: info.Config.Labels,
      running: info.State.Running,
      oomKilled: info.State.OOMKilled,
      replacements: this.replacements,
    };
  }

  /** Kills and removes the container. Safe to call twice. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.container.remove({ force: true }).catch((err: unknown) => {
      if (!/no such container|removal .* in progress/i.test(String(err))) throw err;
    });
    untrackContainer(this.container.id);
  }

  /**
   * Lets this process's interrupt handling forget a detached sandbox once it was handed over (the CLI printed
   * its id): it then outlives the process until `gymflow sandbox destroy`. Until then an interrupted process
   * removes it like any other.
   */
  handOver(): void {
    if (this.detached) untrackContainer(this.container.id);
  }
}
