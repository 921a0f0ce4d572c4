import { createHash } from 'node:crypto';
import type Docker from 'dockerode';
import { buildLayer, DEFAULT_IMAGE, dockerClient, imageSizes, inspectImage, listImagesByLabel, removeBuildLeftovers, removeImage, SandboxError } from '../../sandbox/index.js';
import type { SweInstance } from './instances.js';
import { checkoutArchive, type RepoSourceOptions } from './repos.js';
import type { SweSpec } from './specs.js';
import { defined } from '../../core/defined.js';

/** Image label: `env` (a repository/version's environment) or `instance` (one instance's repository on top). */
export const LABEL_SWE_KIND = 'gymflow.swe.kind';
/** Image labels naming what an image is for. */
export const LABEL_SWE_REPO = 'gymflow.swe.repo';
export const LABEL_SWE_VERSION = 'gymflow.swe.version';
export const LABEL_SWE_INSTANCE = 'gymflow.swe.instance';
/** The hash of everything an image was built from (its tag ends with the first 12 digits). */
export const LABEL_SWE_KEY = 'gymflow.swe.key';

/** Repository names of the two kinds of images. */
export const ENV_IMAGE_REPO = 'gymflow/swe-env';
export const INSTANCE_IMAGE_REPO = 'gymflow/swe-instance';

/**
 * Where an instance image keeps the repository (after `pre_install` and `install`) as a tar of /work: a sandbox
 * mounts a fresh tmpfs on /work, so the episode's reset extracts this into it.
 */
export const TESTBED_TAR = '/opt/gymflow/testbed.tar';

/** The tag of the repository state an episode starts from (the base commit, plus a setup commit if `install` changed tracked files). */
export const SWE_BASE_TAG = 'gymflow-base';

/** Bumped when the layer scripts change, so images built by older scripts are not reused. */
const RECIPE_VERSION = 1;

/** Options of the image builds. */
export interface SweImageOptions extends RepoSourceOptions {
  /** The image the environment layers go on (default `gymflow/sandbox:latest`, built by `gymflow sandbox build-image`). */
  baseImage?: string | undefined;
  /** Build output, line by line (default: nowhere). */
  onLog?: ((line: string) => void) | undefined;
  /** Time limit of one layer's script, seconds (default 3600). */
  buildTimeoutS?: number | undefined;
  docker?: Docker | undefined;
}

/** An image ready to use, and whether this call built it (false: it was there). */
export interface SweImage {
  ref: string;
  id: string;
  built: boolean;
  /** Time spent on it in this call (building, or finding it), milliseconds. */
  durationMs: number;
}

/** A bash single-quoted word. */
export function shQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

function slug(s: string): string {
  return s.replaceAll('/', '__').replace(/[^A-Za-z0-9_.-]/g, '-').replace(/^[.-]+/, '');
}

function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

/** What goes into an environment image, besides its base: the key fields of the spec and the setup commit. */
function envRecipe(instance: SweInstance, spec: SweSpec): Record<string, unknown> {
  return {
    recipe: RECIPE_VERSION,
    repo: instance.repo,
    version: instance.version,
    environmentSetupCommit: instance.environmentSetupCommit ?? null,
    python: spec.python ?? null,
    env_setup: spec.env_setup,
    pip_packages: spec.pip_packages,
  };
}

/** The environment layer's script: `env_setup` in the repository at the setup commit (when given), pip, the Python check. */
export function envScript(spec: SweSpec, withRepo: boolean): string {
  const lines = ['set -euo pipefail', 'export HOME=/root', withRepo ? 'cd /tmp/gymflow-env-repo' : 'cd /'];
  lines.push(...spec.env_setup);
  if (spec.pip_packages.length) lines.push(`python3 -m pip install ${spec.pip_packages.map(shQuote).join(' ')}`);
  if (spec.python !== undefined) {
    lines.push(
      `python3 -c ${shQuote(
        'import sys; want = sys.argv[1]; have = ".".join(map(str, sys.version_info[:len(want.split("."))]))\n' +
          'if have != want: sys.exit(f"gymflow: the spec wants Python {want}, but python3 here is {sys.version.split()[0]}")',
      )} ${shQuote(spec.python)}`,
    );
  }
  lines.push('cd / && rm -rf /tmp/gymflow-env-repo');
  return lines.join('\n');
}

/**
 * The instance layer's script: in /work (the repository at the base commit) `pre_install` and `install` as root;
 * then tracked files the install changed are committed (`gymflow: environment setup`, as SWE-bench does, so the
 * agent's diff shows only its own changes), files it created are excluded from git's view, the state is tagged
 * {@link SWE_BASE_TAG}, and /work is packed into {@link TESTBED_TAR}.
 */
export function instanceScript(spec: SweSpec): string {
  return [
    'set -euo pipefail',
    'export HOME=/root',
    'cd /work',
    ...spec.pre_install,
    ...(spec.install === undefined ? [] : [spec.install]),
    'cd /work',
    'chown -R 1000:1000 /work',
    "git diff --quiet || git -c user.name=gymflow -c user.email=setup@gymflow.invalid commit -q -a -m 'gymflow: environment setup'",
    "mkdir -p .git/info && git ls-files --others --exclude-standard | sed 's|^|/|' >> .git/info/exclude",
    `git tag -f ${SWE_BASE_TAG} >/dev/null`,
    'chown -R 1000:1000 /work',
    `mkdir -p ${TESTBED_TAR.slice(0, TESTBED_TAR.lastIndexOf('/'))}`,
    `tar -C /work -cf ${TESTBED_TAR} .`,
    'find /work -mindepth 1 -delete',
  ].join('\n');
}

const inFlight = new Map<string, Promise<SweImage>>();

/** Builds `ref` with `build` unless it exists; one build per ref at a time in this process. */
async function ensure(ref: string, docker: Docker, build: () => Promise<{ id: string }>): Promise<SweImage> {
  const started = performance.now();
  const found = await inspectImage(ref, docker);
  if (found) return { ref, id: found.Id, built: false, durationMs: performance.now() - started };
  let p = inFlight.get(ref);
  if (!p) {
    p = build().then((b) => ({ ref, id: b.id, built: true, durationMs: performance.now() - started }));
    inFlight.set(ref, p);
    const done = (): void => void inFlight.delete(ref);
    p.then(done, done);
  }
  return p;
}

/** The tag of an instance's environment image (repository, version, hash of base image and recipe). */
export async function envImageRef(instance: SweInstance, spec: SweSpec, o: SweImageOptions = {}): Promise<{ ref: string; baseId: string }> {
  const docker = o.docker ?? dockerClient();
  const baseImage = o.baseImage ?? DEFAULT_IMAGE;
  const base = await inspectImage(baseImage, docker);
  if (!base) throw new SandboxError(`instance ${instance.instanceId}: no base image '${baseImage}' (build it with \`gymflow sandbox build-image\`)`);
  const key = hash({ base: base.Id, ...envRecipe(instance, spec) });
  return { ref: `${ENV_IMAGE_REPO}:${slug(`${instance.repo}-${instance.version}`).slice(0, 100)}-${key.slice(0, 12)}`, baseId: base.Id };
}

/**
 * The environment image of an instance's repository and version (base image → environment layer), built when
 * missing: `env_setup`, `pip_packages` and the Python check of its spec, run in the repository at the instance's
 * `environment_setup_commit` when it has one. Every instance of the repository/version shares it.
 */
export async function ensureEnvImage(instance: SweInstance, spec: SweSpec, o: SweImageOptions = {}): Promise<SweImage> {
  const docker = o.docker ?? dockerClient();
  const { ref } = await envImageRef(instance, spec, o);
  const baseImage = o.baseImage ?? DEFAULT_IMAGE;
  return ensure(ref, docker, async () => {
    const setup = instance.environmentSetupCommit;
    // The repository at the setup commit, for env_setup commands such as `pip install -r requirements.txt`.
    const repoTar = setup === undefined ? undefined : (await checkoutArchive(instance.repo, setup, { ...o, what: `instance ${instance.instanceId} $.environment_setup_commit`, tarPrefix: 'gymflow-env-repo' })).tar;
    return buildLayer({
      from: baseImage,
      tag: ref,
      script: envScript(spec, repoTar !== undefined),
      ...(repoTar ? { files: { dir: '/tmp', tar: repoTar } } : {}),
      labels: { [LABEL_SWE_KIND]: 'env', [LABEL_SWE_REPO]: instance.repo, [LABEL_SWE_VERSION]: instance.version, [LABEL_SWE_KEY]: ref.slice(ref.lastIndexOf('-') + 1) },
      network: spec.build_network,
      what: `environment image of ${instance.repo} ${instance.version}`,
      docker,
      ...defined({ onLog: o.onLog }),
      ...(o.buildTimeoutS ? { timeoutS: o.buildTimeoutS } : {}),
    });
  });
}

/** The tag of an instance's image, given its environment image's id. */
function instanceImageRef(instance: SweInstance, spec: SweSpec, envId: string): string {
  const key = hash({ recipe: RECIPE_VERSION, env: envId, repo: instance.repo, commit: instance.baseCommit, pre_install: spec.pre_install, install: spec.install ?? null });
  return `${INSTANCE_IMAGE_REPO}:${slug(instance.instanceId).slice(0, 100)}-${key.slice(0, 12)}`;
}

/**
 * The image an instance's episodes and grading run in (base → environment → instance), built when missing: its
 * repository at `base_commit` in /work with `pre_install` and `install` run — one layer on top of the shared
 * environment image.
 */
export async function ensureInstanceImage(instance: SweInstance, spec: SweSpec, o: SweImageOptions = {}): Promise<{ env: SweImage; instance: SweImage }> {
  const docker = o.docker ?? dockerClient();
  const env = await ensureEnvImage(instance, spec, o);
  const ref = instanceImageRef(instance, spec, env.id);
  const image = await ensure(ref, docker, async () => {
    const checkout = await checkoutArchive(instance.repo, instance.baseCommit, { ...o, what: `instance ${instance.instanceId}` });
    return buildLayer({
      from: env.ref,
      tag: ref,
      script: instanceScript(spec),
      files: { dir: '/work', tar: checkout.tar },
      labels: {
        [LABEL_SWE_KIND]: 'instance',
        [LABEL_SWE_REPO]: instance.repo,
        [LABEL_SWE_VERSION]: instance.version,
        [LABEL_SWE_INSTANCE]: instance.instanceId,
        [LABEL_SWE_KEY]: ref.slice(ref.lastIndexOf('-') + 1),
      },
      network: spec.build_network,
      what: `image of instance ${instance.instanceId}`,
      docker,
      ...defined({ onLog: o.onLog }),
      ...(o.buildTimeoutS ? { timeoutS: o.buildTimeoutS } : {}),
    });
  });
  return { env, instance: image };
}

/** One SWE image as `gymflow swe images` lists it. */
export interface SweImageListing {
  kind: 'env' | 'instance';
  ref: string;
  id: string;
  repo: string;
  version: string;
  instance: string | null;
  /** Bytes including the layers below (the engine's size). */
  size: number;
  /** Bytes of its own layer (its size less its parent's), when the parent is known. */
  layerSize: number | null;
  created: string;
}

/** Every SWE image on the engine: environment images first, then instance images; each sorted by name. */
export async function listSweImages(docker: Docker = dockerClient()): Promise<SweImageListing[]> {
  const images = await listImagesByLabel(LABEL_SWE_KIND, docker);
  const sizes = await imageSizes(docker);
  const rows: SweImageListing[] = [];
  for (const i of images) {
    const kind = i.labels[LABEL_SWE_KIND] === 'env' ? 'env' : 'instance';
    const refs = i.tags.filter((t) => t.startsWith(kind === 'env' ? `${ENV_IMAGE_REPO}:` : `${INSTANCE_IMAGE_REPO}:`));
    for (const ref of refs.length ? refs : [`<untagged ${i.id.slice(7, 19)}>`]) {
      rows.push({ kind, ref, id: i.id, repo: i.labels[LABEL_SWE_REPO] ?? '', version: i.labels[LABEL_SWE_VERSION] ?? '', instance: i.labels[LABEL_SWE_INSTANCE] ?? null, size: i.size, layerSize: layerSize(i.size, i.parentId, sizes), created: i.created });
    }
  }
  return rows.sort((a, b) => (a.kind === b.kind ? a.ref.localeCompare(b.ref) : a.kind === 'env' ? -1 : 1));
}

function layerSize(size: number, parentId: string | undefined, sizes: Map<string, number>): number | null {
  const parent = parentId === undefined ? undefined : sizes.get(parentId);
  return parent === undefined ? null : size - parent;
}

/** What {@link pruneSweImages} removed. */
export interface PruneReport {
  removed: string[];
  /** Build containers of processes that are gone. */
  leftovers: string[];
}

/**
 * Removes SWE images — every one, or only instance images (`keepEnv`), or only those `filter` accepts — instance
 * images before environment images (an environment image cannot go while an instance image is built on it), and
 * build containers of processes that are gone.
 */
export async function pruneSweImages(o: { keepEnv?: boolean; filter?: (row: SweImageListing) => boolean; docker?: Docker } = {}): Promise<PruneReport> {
  const docker = o.docker ?? dockerClient();
  const leftovers = await removeBuildLeftovers(docker);
  const rows = (await listSweImages(docker)).filter((r) => (o.keepEnv !== true || r.kind === 'instance') && (o.filter?.(r) ?? true));
  const removed: string[] = [];
  for (const kind of ['instance', 'env'] as const) {
    for (const r of rows.filter((x) => x.kind === kind)) {
      await removeImage(r.ref.startsWith('<untagged') ? r.id : r.ref, { docker });
      removed.push(r.ref);
    }
  }
  return { removed, leftovers };
}
