import type Docker from 'dockerode';
import { ConfigError } from '../core/errors.js';

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

/**
 * Merges overrides over the defaults. An unknown key is a {@link ConfigError} (a typo must not silently
 * leave a limit at its default), and so is a value of the wrong type.
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
    const got = Array.isArray(v) ? 'array' : typeof v;
    if (want !== got) throw new ConfigError(`sandbox config: ${k} must be ${want === 'array' ? 'an array' : `a ${want}`}, got ${JSON.stringify(v)}`);
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
  if (c.pidsLimit <= 0) out.push('pidsLimit<=0: no process limit');
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
    Labels: { ...labels, ...c.labels },
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
