import type Docker from 'dockerode';
import { ConfigError } from '../core/errors.js';
import { LABEL_ACTIVITY, LABEL_ATTEMPT, LABEL_RUN, LABEL_WORKFLOW } from './scope-context.js';

/** The sandbox base image built by `scripts/build-sandbox-image.sh` (`gymflow sandbox build-image`). */
export const DEFAULT_IMAGE = 'gymflow/sandbox:latest';
/** The writable work directory inside every sandbox. */
export const WORK_DIR = '/work';
/** uid:gid of the unprivileged `agent` user of the base image. */
export const AGENT_USER = '1000:1000';

/**
 * How a sandbox is built. Every hardening switch defaults to the safe value; turning one off is allowed
 * (a task may need the network) but {@link hostConfigFor} logs a warning naming it.
 */
export interface SandboxConfig {
  image: string;
  /** `none` (default) or any Docker network mode; anything else is a hardening override. */
  networkMode: string;
  /** Capabilities dropped (default `ALL`). */
  capDrop: string[];
  /** `no-new-privileges` (default true): setuid binaries cannot raise privileges. */
  noNewPrivileges: boolean;
  /** Custom seccomp profile as JSON text; undefined keeps Docker's default profile. */
  seccompProfile?: string;
  /** Read-only root filesystem (default true); the work dir, /tmp and $HOME are size-limited tmpfs. */
  readonlyRootfs: boolean;
  /** Size of the /work tmpfs in MiB (default 256). */
  workDirMiB: number;
  /** Size of the /tmp tmpfs in MiB (default 64). */
  tmpMiB: number;
  /** Process limit (default 256): a fork bomb stops there. */
  pidsLimit: number;
  /** Memory limit in MiB, tmpfs included, no swap (default 1024). */
  memoryMiB: number;
  /** CPU limit in CPUs (default 1). */
  cpus: number;
  /** The user every exec runs as (default `1000:1000`, the image's `agent`). */
  user: string;
  /**
   * The user of PID 1 and the keeper process (default `65534:65534`, nobody): a different uid, so the agent
   * can neither signal them nor take them down with `kill -9 -1`.
   */
  keeperUser: string;
  /** Run docker-init as PID 1 (default true) so orphans are reaped and PID 1 ignores the agent's signals. */
  init: boolean;
  /** Default time limit of one exec in seconds (default 30). */
  execTimeoutS: number;
  /** Bytes of output kept in an observation (default 16 KiB); the rest is cut with a visible marker. */
  outputCapBytes: number;
  /** Extra labels on the container. */
  labels?: Record<string, string>;
}

/** The hardened defaults. */
export const DEFAULT_SANDBOX_CONFIG: Readonly<SandboxConfig> = Object.freeze({
  image: DEFAULT_IMAGE,
  networkMode: 'none',
  capDrop: ['ALL'],
  noNewPrivileges: true,
  readonlyRootfs: true,
  workDirMiB: 256,
  tmpMiB: 64,
  pidsLimit: 256,
  memoryMiB: 1024,
  cpus: 1,
  user: AGENT_USER,
  keeperUser: '65534:65534',
  init: true,
  execTimeoutS: 30,
  outputCapBytes: 16 * 1024,
});

const OPTIONAL_KEYS = ['seccompProfile', 'labels'];

/** Docker's smallest memory limit (the engine refuses less than 6 MiB). */
export const MIN_MEMORY_MIB = 6;
/** The smallest CPU limit Docker accepts (a CFS quota of 1 ms per 100 ms period). */
export const MIN_CPUS = 0.01;
/** The smallest output cap: the truncation marker alone is longer than this. */
export const MIN_OUTPUT_CAP_BYTES = 64;

/**
 * Lower bounds of the numeric settings. A 0 would not mean "nothing" to Docker but "no limit" (`Memory: 0`,
 * `NanoCpus: 0`, tmpfs `size=0m`), silently removing a limit, so each must be at least its minimum.
 * `pidsLimit` is the exception: `<= 0` is a documented hardening override (no process limit, with a warning).
 */
const NUMERIC_BOUNDS: Record<string, { min: number; integer: boolean; why: string }> = {
  memoryMiB: { min: MIN_MEMORY_MIB, integer: true, why: "Docker's minimum; 0 would mean no memory limit" },
  cpus: { min: MIN_CPUS, integer: false, why: "Docker's minimum; 0 would mean no CPU limit" },
  workDirMiB: { min: 1, integer: true, why: 'a tmpfs of size 0 has no size limit' },
  tmpMiB: { min: 1, integer: true, why: 'a tmpfs of size 0 has no size limit' },
  execTimeoutS: { min: 1, integer: false, why: 'an exec needs time to run' },
  outputCapBytes: { min: MIN_OUTPUT_CAP_BYTES, integer: true, why: 'shorter than the truncation marker' },
  pidsLimit: { min: -Infinity, integer: true, why: '' },
};

/** Throws a {@link ConfigError} naming `key` and `v` unless `v` is a finite number within its bounds. */
function checkNumber(key: string, v: number): void {
  const b = NUMERIC_BOUNDS[key];
  if (!Number.isFinite(v)) throw new ConfigError(`sandbox config: ${key} must be a finite number, got ${String(v)}`);
  if (b === undefined) return;
  if (b.integer && !Number.isInteger(v)) throw new ConfigError(`sandbox config: ${key} must be an integer, got ${v}`);
  if (v < b.min) throw new ConfigError(`sandbox config: ${key} must be at least ${b.min} (${b.why}), got ${v}`);
}

/**
 * Merges overrides over the defaults. An unknown key is a {@link ConfigError} (a typo must not silently
 * leave a limit at its default), and so is a value of the wrong type or a limit below its minimum (a 0
 * would remove the limit: see {@link MIN_MEMORY_MIB}, {@link MIN_CPUS}).
 */
export function resolveConfig(overrides: Partial<SandboxConfig> = {}): SandboxConfig {
  const out: SandboxConfig = { ...DEFAULT_SANDBOX_CONFIG, capDrop: [...DEFAULT_SANDBOX_CONFIG.capDrop] };
  const defaults = DEFAULT_SANDBOX_CONFIG as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) continue;
    if (!(k in defaults) && !OPTIONAL_KEYS.includes(k)) {
      throw new ConfigError(`sandbox config: unknown key '${k}'; known: ${[...Object.keys(defaults), ...OPTIONAL_KEYS].join(', ')}`);
    }
    const want = k === 'labels' ? 'object' : k === 'seccompProfile' ? 'string' : Array.isArray(defaults[k]) ? 'array' : typeof defaults[k];
    const got = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
    if (want !== got) throw new ConfigError(`sandbox config: ${k} must be ${want === 'array' ? 'an array' : `a ${want}`}, got ${JSON.stringify(v)}`);
    if (typeof v === 'number') checkNumber(k, v);
    if (k === 'capDrop' && !(v as unknown[]).every((x) => typeof x === 'string')) throw new ConfigError(`sandbox config: capDrop must be an array of strings, got ${JSON.stringify(v)}`);
    if (k === 'labels' && !Object.values(v as object).every((x) => typeof x === 'string')) throw new ConfigError(`sandbox config: labels must map strings to strings, got ${JSON.stringify(v)}`);
    (out as unknown as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** Labels every gymflow sandbox carries; `gc` finds orphans by them. */
export const LABEL_SANDBOX = 'gymflow.sandbox';
/** Pid of the process that created the container. */
export const LABEL_OWNER_PID = 'gymflow.sandbox.owner-pid';
/** Hostname of the creator (an owner pid means something only on its host). */
export const LABEL_OWNER_HOST = 'gymflow.sandbox.owner-host';
/** Creation time (ISO 8601). */
export const LABEL_CREATED = 'gymflow.sandbox.created';
/** Set to `1` on sandboxes that must outlive their creator (`gymflow sandbox create`); `gc` keeps them unless `all`. */
export const LABEL_DETACHED = 'gymflow.sandbox.detached';
/** Task id a sandbox was created for, when there is one. */
export const LABEL_TASK = 'gymflow.sandbox.task';
/**
 * The settings of a sandbox that live outside the container (`user`, `execTimeoutS`, `outputCapBytes`) and
 * the names of its extra `labels` (the engine merges the image's labels into the container's), as JSON;
 * {@link configFromInspect} reads the rest from the engine's record of the container.
 */
export const LABEL_EXEC_CONFIG = 'gymflow.sandbox.exec-config';
/** Labels gymflow itself sets on every sandbox (not part of a config's extra `labels`). */
export const GYMFLOW_LABELS: readonly string[] = [LABEL_SANDBOX, LABEL_OWNER_PID, LABEL_OWNER_HOST, LABEL_CREATED, LABEL_DETACHED, LABEL_TASK, LABEL_EXEC_CONFIG, LABEL_WORKFLOW, LABEL_RUN, LABEL_ACTIVITY, LABEL_ATTEMPT];

/**
 * The weakened hardening switches of a config, one line each; empty for the defaults.
 */
export function hardeningOverrides(c: SandboxConfig): string[] {
  const d = DEFAULT_SANDBOX_CONFIG;
  const out: string[] = [];
  if (c.networkMode !== 'none') out.push(`networkMode=${c.networkMode} (default none): the sandbox can reach the network`);
  if (!d.capDrop.every((cap) => c.capDrop.includes(cap))) out.push(`capDrop=${JSON.stringify(c.capDrop)} (default ["ALL"]): capabilities kept`);
  if (!c.noNewPrivileges) out.push('noNewPrivileges=false: setuid binaries can raise privileges');
  if (!c.readonlyRootfs) out.push('readonlyRootfs=false: the root filesystem is writable');
  if (c.user === '0' || c.user.startsWith('0:') || c.user === 'root') out.push(`user=${c.user}: processes run as root`);
  if (!c.init) out.push('init=false: no init process reaps orphans');
  if (c.pidsLimit <= 0) out.push(`pidsLimit=${c.pidsLimit} (default 256): no process limit`);
  if (c.seccompProfile !== undefined) {
    out.push(
      c.seccompProfile.trim() === 'unconfined'
        ? 'seccompProfile=unconfined: no syscall filter'
        : "seccompProfile: a custom profile replaces Docker's default syscall filter",
    );
  }
  if (c.keeperUser === c.user) out.push(`keeperUser=${c.keeperUser} is the exec user: the agent can kill the keeper and PID 1`);
  return out;
}

/**
 * The container spec for a config: Docker's HostConfig with every hardening switch, nothing from the host
 * mounted (no binds, no volumes, never the Docker socket). Weakened switches are reported through `warn`.
 */
export function containerSpecFor(
  c: SandboxConfig,
  labels: Record<string, string>,
  warn: (message: string) => void = (m) => console.warn(m),
): Docker.ContainerCreateOptions {
  for (const line of hardeningOverrides(c)) warn(`gymflow sandbox: hardening override: ${line}`);
  const mib = 1024 * 1024;
  const securityOpt: string[] = [];
  if (c.noNewPrivileges) securityOpt.push('no-new-privileges');
  if (c.seccompProfile !== undefined) securityOpt.push(`seccomp=${c.seccompProfile}`);
  return {
    Image: c.image,
    Cmd: ['sleep', 'infinity'],
    User: c.keeperUser,
    WorkingDir: WORK_DIR,
    Env: ['HOME=/home/agent', 'PYTHONDONTWRITEBYTECODE=1', 'LANG=C.UTF-8', 'GIT_PAGER=cat', 'PAGER=cat'],
    Labels: { ...labels, ...c.labels, [LABEL_EXEC_CONFIG]: JSON.stringify({ user: c.user, execTimeoutS: c.execTimeoutS, outputCapBytes: c.outputCapBytes, labels: Object.keys(c.labels ?? {}) }) },
    NetworkDisabled: c.networkMode === 'none',
    HostConfig: {
      NetworkMode: c.networkMode,
      CapDrop: c.capDrop,
      SecurityOpt: securityOpt,
      ReadonlyRootfs: c.readonlyRootfs,
      Tmpfs: {
        [WORK_DIR]: `rw,exec,nosuid,nodev,size=${c.workDirMiB}m,uid=1000,gid=1000,mode=0755`,
        '/tmp': `rw,exec,nosuid,nodev,size=${c.tmpMiB}m,mode=1777`,
        '/home/agent': 'rw,nosuid,nodev,size=16m,uid=1000,gid=1000,mode=0755',
      },
      PidsLimit: c.pidsLimit > 0 ? c.pidsLimit : 0,
      Memory: c.memoryMiB * mib,
      MemorySwap: c.memoryMiB * mib,
      NanoCpus: Math.round(c.cpus * 1e9),
      Init: c.init,
      IpcMode: 'private',
      Ulimits: [{ Name: 'nofile', Soft: 4096, Hard: 4096 }],
      Binds: [],
      Mounts: [],
      AutoRemove: false,
      Privileged: false,
    },
  };
}

/** The part of `docker inspect` that {@link configFromInspect} reads. */
export interface InspectedSandbox {
  Config: { Image: string; User?: string | undefined; Labels?: Record<string, string> | null | undefined };
  HostConfig: {
    NetworkMode?: string | undefined;
    CapDrop?: string[] | null | undefined;
    SecurityOpt?: string[] | null | undefined;
    ReadonlyRootfs?: boolean | undefined;
    Tmpfs?: Record<string, string> | null | undefined;
    PidsLimit?: number | null | undefined;
    Memory?: number | undefined;
    NanoCpus?: number | undefined;
    Init?: boolean | null | undefined;
  };
}

/**
 * The config a sandbox container really has, recovered from the engine's record of it (`docker inspect`):
 * network, capabilities, security options, read-only root, tmpfs sizes, pids, memory and CPU limits, init,
 * the keeper's user; the exec-side settings and the extra labels' names from the {@link LABEL_EXEC_CONFIG}
 * label (defaults for a container made before that label existed). Not validated: it describes what exists, so
 * a replacement container built from it matches the original.
 */
export function configFromInspect(info: InspectedSandbox): SandboxConfig {
  const hc = info.HostConfig;
  const labels = info.Config.Labels ?? {};
  const d = DEFAULT_SANDBOX_CONFIG;
  const mib = 1024 * 1024;
  const tmpfsMiB = (dir: string, fallback: number): number => {
    const m = /(?:^|,)size=(\d+)m(?:,|$)/.exec(hc.Tmpfs?.[dir] ?? '');
    return m ? Number(m[1]) : fallback;
  };
  const opts = hc.SecurityOpt ?? [];
  const seccomp = opts.find((o) => o.startsWith('seccomp=') || o.startsWith('seccomp:'));
  let exec: Partial<Pick<SandboxConfig, 'user' | 'execTimeoutS' | 'outputCapBytes'> & { labels: string[] }> = {};
  try {
    exec = JSON.parse(labels[LABEL_EXEC_CONFIG] ?? '{}') as typeof exec;
  } catch {
    // an unreadable label: the defaults
  }
  // Without the label (a container made before it existed): every label gymflow did not set, the image's included.
  const extraKeys = Array.isArray(exec.labels) ? exec.labels : Object.keys(labels).filter((k) => !GYMFLOW_LABELS.includes(k));
  const extra = Object.fromEntries(Object.entries(labels).filter(([k]) => extraKeys.includes(k)));
  const config: SandboxConfig = {
    image: info.Config.Image,
    networkMode: hc.NetworkMode ?? d.networkMode,
    capDrop: [...(hc.CapDrop ?? [])],
    noNewPrivileges: opts.some((o) => o === 'no-new-privileges' || o === 'no-new-privileges:true' || o === 'no-new-privileges=true'),
    readonlyRootfs: hc.ReadonlyRootfs === true,
    workDirMiB: tmpfsMiB(WORK_DIR, d.workDirMiB),
    tmpMiB: tmpfsMiB('/tmp', d.tmpMiB),
    pidsLimit: hc.PidsLimit ?? 0,
    memoryMiB: (hc.Memory ?? 0) / mib,
    cpus: (hc.NanoCpus ?? 0) / 1e9,
    user: typeof exec.user === 'string' ? exec.user : d.user,
    keeperUser: info.Config.User ?? d.keeperUser,
    init: hc.Init === true,
    execTimeoutS: typeof exec.execTimeoutS === 'number' ? exec.execTimeoutS : d.execTimeoutS,
    outputCapBytes: typeof exec.outputCapBytes === 'number' ? exec.outputCapBytes : d.outputCapBytes,
  };
  if (Object.keys(extra).length > 0) config.labels = extra;
  if (seccomp !== undefined) config.seccompProfile = seccomp.slice('seccomp='.length);
  return config;
}
