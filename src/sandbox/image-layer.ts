import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { processAlive } from '../core/fs.js';
import { dockerClient, dockerEndpoint } from './docker.js';
import { SandboxError } from './errors.js';
import { trackContainer, untrackContainer } from './lifetime.js';

/**
 * Build containers are named `gymflow-build-<host>-<pid>-<random>`: a name, not a label, because a committed image
 * keeps the labels of the container it was committed from (and the containers made from the image would inherit
 * them), while a name stays with the container.
 */
export const BUILD_CONTAINER_PREFIX = 'gymflow-build-';

/** Options of {@link buildLayer}. */
export interface BuildLayerOptions {
  /** The image the layer goes on (a local image: nothing is pulled). */
  from: string;
  /** The reference to commit the result to (`repo:tag`). */
  tag: string;
  /** A bash script run as root (`bash -c`) in a container of `from`; the layer is what it changes. */
  script: string;
  /** A tar archive (a buffer or a stream) extracted into `dir` before the script runs. */
  files?: { dir: string; tar: Buffer | Readable };
  /** Labels of the new image (added to those of `from`). */
  labels?: Record<string, string>;
  /** Give the build container a network (Docker's default bridge); default false: `--network none`. */
  network?: boolean;
  /** Time limit of the script in seconds (default 3600). */
  timeoutS?: number;
  /** Each line the script prints (default: nowhere). */
  onLog?: (line: string) => void;
  /** What the layer is, for messages (`environment image for acme/calc 1.0`). */
  what?: string;
  docker?: Docker;
}

/** What {@link buildLayer} made. */
export interface BuiltLayer {
  /** The tag committed (`repo:tag`). */
  ref: string;
  /** The image id (`sha256:…`). */
  id: string;
  /** Wall-clock time of the build (container, script, commit), milliseconds. */
  durationMs: number;
  /** The script's output (its last 64 KiB). */
  log: string;
}

const LOG_TAIL_BYTES = 64 * 1024;

function splitRef(ref: string): { repo: string; tag: string } {
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  return colon > slash ? { repo: ref.slice(0, colon), tag: ref.slice(colon + 1) } : { repo: ref, tag: 'latest' };
}

/** The engine's facts about a local image, or undefined when there is no such image. */
export async function inspectImage(ref: string, docker: Docker = dockerClient()): Promise<Docker.ImageInspectInfo | undefined> {
  try {
    return await docker.getImage(ref).inspect();
  } catch (err) {
    if (/no such image|404/i.test(String(err))) return undefined;
    throw new SandboxError(`cannot inspect image '${ref}' on ${dockerEndpoint()}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/**
 * Builds one image layer without a registry or a Dockerfile: a container of `from` runs `script` as root (no
 * network unless asked), and the container is committed as `tag` — exactly one layer on top of `from`, whatever
 * the script did. The committed image keeps `from`'s user, working directory, command, entrypoint and
 * environment (the script's root user and command do not leak into it). The build container is removed
 * afterwards, also when the script fails or runs out of time, and on an interrupt (it is tracked like a
 * sandbox); one left by a killed process is removed by {@link removeBuildLeftovers}.
 *
 * @throws SandboxError naming `what` when `from` is missing, the script fails (with the end of its output) or
 * runs past `timeoutS`.
 *
 * @example
 * ```ts
 * await buildLayer({ from: 'gymflow/sandbox:latest', tag: 'acme/env:1', script: 'echo hi > /opt/hello' });
 * ```
 */
export async function buildLayer(o: BuildLayerOptions): Promise<BuiltLayer> {
  const docker = o.docker ?? dockerClient();
  const what = o.what ?? o.tag;
  const started = performance.now();
  const base = await inspectImage(o.from, docker);
  if (!base) throw new SandboxError(`${what}: no image '${o.from}' on ${dockerEndpoint()} (build the sandbox base image with \`gymflow sandbox build-image\`)`);
  const name = `${BUILD_CONTAINER_PREFIX}${hostname().replace(/[^a-zA-Z0-9_.-]/g, '-')}-${process.pid}-${randomBytes(4).toString('hex')}`;
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      name,
      Image: base.Id,
      User: '0:0',
      Entrypoint: [],
      Cmd: ['bash', '-c', o.script],
      Tty: true,
      WorkingDir: base.Config.WorkingDir || '/',
      NetworkDisabled: o.network !== true,
      HostConfig: { NetworkMode: o.network === true ? 'bridge' : 'none' },
    });
  } catch (err) {
    throw new SandboxError(`${what}: cannot create a build container from '${o.from}': ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  trackContainer(container);
  let log = '';
  try {
    if (o.files) await container.putArchive(o.files.tar, { path: o.files.dir });
    const stream = (await container.attach({ stream: true, stdout: true, stderr: true })) as NodeJS.ReadableStream;
    let partial = '';
    const ended = new Promise<void>((resolve) => {
      stream.on('end', () => resolve());
      stream.on('close', () => resolve());
      stream.on('error', () => resolve());
    });
    stream.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      log = (log + text).slice(-LOG_TAIL_BYTES);
      if (o.onLog) {
        const lines = (partial + text).split(/\r?\n/);
        partial = lines.pop() ?? '';
        for (const line of lines) o.onLog(line);
      }
    });
    await container.start();
    const timeoutS = o.timeoutS ?? 3600;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutS * 1000);
    });
    const waited = await Promise.race([container.wait() as Promise<{ StatusCode: number }>, timedOut]);
    clearTimeout(timer);
    if (waited === 'timeout') {
      await container.kill().catch(() => undefined);
      throw new SandboxError(`${what}: the build script ran past its time limit of ${timeoutS}s; output ends:\n${tail(log)}`);
    }
    await Promise.race([ended, new Promise((r) => setTimeout(r, 2000))]);
    if (partial && o.onLog) o.onLog(partial);
    if (waited.StatusCode !== 0) throw new SandboxError(`${what}: the build script exited with ${waited.StatusCode}; output ends:\n${tail(log)}`);
    const { repo, tag } = splitRef(o.tag);
    const c = base.Config;
    // The commit's config replaces the build container's (root, bash -c script, tty) with the base image's;
    // the engine adds the labels of the container (those of `from`) to ours.
    const committed = (await container.commit({
      _query: { container: container.id, repo, tag, comment: `gymflow: ${what}` },
      _body: {
        User: c.User,
        WorkingDir: c.WorkingDir,
        Cmd: c.Cmd,
        Entrypoint: c.Entrypoint,
        Env: c.Env,
        Labels: { ...(c.Labels ?? {}), ...(o.labels ?? {}) },
        Tty: false,
      },
    })) as { Id: string };
    return { ref: o.tag, id: committed.Id, durationMs: performance.now() - started, log };
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
    untrackContainer(container.id);
  }
}

function tail(log: string, lines = 40): string {
  return log.replace(/\r/g, '').trimEnd().split('\n').slice(-lines).join('\n');
}

/** One local image as {@link listImagesByLabel} reports it. */
export interface ImageListing {
  id: string;
  /** Its `repo:tag` references (none for an untagged image). */
  tags: string[];
  labels: Record<string, string>;
  /** Bytes, its parent layers included (the engine's `Size`). */
  size: number;
  /** The image it was committed on (`sha256:…`), when the engine knows it. */
  parentId: string | undefined;
  /** Creation time (ISO 8601). */
  created: string;
}

/** The size of each local image by id (its parent layers included). */
export async function imageSizes(docker: Docker = dockerClient()): Promise<Map<string, number>> {
  return new Map((await docker.listImages({ all: true })).map((i) => [i.Id, i.Size]));
}

/** The local images carrying `label` (any value), newest first. */
export async function listImagesByLabel(label: string, docker: Docker = dockerClient()): Promise<ImageListing[]> {
  const list = await docker.listImages({ filters: { label: [label] } });
  return list
    .map((i) => ({
      id: i.Id,
      tags: (i.RepoTags ?? []).filter((t) => t !== '<none>:<none>'),
      labels: i.Labels ?? {},
      size: i.Size,
      parentId: i.ParentId || undefined,
      created: new Date(i.Created * 1000).toISOString(),
    }))
    .sort((a, b) => b.created.localeCompare(a.created));
}

/** Removes a local image by reference or id (`force`: also when a stopped container uses it). */
export async function removeImage(ref: string, options: { force?: boolean; docker?: Docker } = {}): Promise<void> {
  const docker = options.docker ?? dockerClient();
  try {
    await docker.getImage(ref).remove({ force: options.force === true });
  } catch (err) {
    if (/no such image|404/i.test(String(err))) return;
    throw new SandboxError(`cannot remove image '${ref}': ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/**
 * Removes build containers ({@link buildLayer}) whose process is gone (same host), e.g. after a SIGKILL.
 * Returns the names removed.
 */
export async function removeBuildLeftovers(docker: Docker = dockerClient()): Promise<string[]> {
  const list = await docker.listContainers({ all: true, filters: { name: [BUILD_CONTAINER_PREFIX] } });
  const me = `${BUILD_CONTAINER_PREFIX}${hostname().replace(/[^a-zA-Z0-9_.-]/g, '-')}-`;
  const removed: string[] = [];
  for (const c of list) {
    const name = (c.Names?.[0] ?? '').replace(/^\//, '');
    if (!name.startsWith(me)) continue;
    const pid = Number(name.slice(me.length).split('-')[0]);
    if (Number.isInteger(pid) && (pid === process.pid || processAlive(pid))) continue;
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .then(() => removed.push(name))
      .catch(() => undefined);
  }
  return removed;
}
