/**
 * `gymflow swe`: the images of SWE-bench instances (`gymflow/swe-v0`, `gymflow eval --benchmark swe-bench`) —
 * build them ahead of a run, list them, prune them.
 */
import type { Command } from 'commander';
import { ConfigError } from '../../core/errors.js';
import { ensureInstanceImage, listSweImages, pruneSweImages } from '../../envs/swe/images.js';
import { loadInstances, selectInstances } from '../../envs/swe/instances.js';
import { loadSpecs, specFor } from '../../envs/swe/specs.js';
import { parsePositiveInteger, printJson } from '../options.js';
import { formatTable } from '../table.js';
import { parseIdList } from './eval-swe-bench.js';
import { defined } from '../../core/defined.js';

function mib(bytes: number): string {
  const m = bytes / (1024 * 1024);
  return `${m < 10 ? m.toFixed(2) : m.toFixed(0)} MiB`;
}

/** `gymflow swe images|build`. */
export function sweCommand(program: Command): void {
  const swe = program.command('swe').description('SWE-bench images (gymflow/swe-v0, eval --benchmark swe-bench): build ahead, list, prune');

  swe
    .command('images')
    .description('list the SWE images (environment images per repo/version, instance images on top); --prune removes them')
    .option('--json', 'print JSON')
    .option('--prune', 'remove them (instance images first), and build containers of processes that are gone')
    .option('--keep-env', 'with --prune: remove only instance images, keep the environment images')
    .action(async (opts: { json?: boolean; prune?: boolean; keepEnv?: boolean }) => {
      if (opts.keepEnv && !opts.prune) throw new ConfigError('--keep-env goes with --prune');
      if (opts.prune) {
        const r = await pruneSweImages({ keepEnv: opts.keepEnv === true });
        if (opts.json) return printJson(r);
        for (const ref of r.removed) console.log(`removed ${ref}`);
        for (const name of r.leftovers) console.log(`removed build container ${name}`);
        console.log(`${r.removed.length} image(s) removed${r.leftovers.length ? `, ${r.leftovers.length} build container(s)` : ''}`);
        return;
      }
      const rows = await listSweImages();
      if (opts.json) return printJson(rows);
      if (rows.length === 0) return console.log('no SWE images (they are built on first use, or by `gymflow swe build`)');
      console.log(
        formatTable(
          rows.map((r) => ({ ...r, instance: r.instance ?? '', size: mib(r.size), layer: r.layerSize === null ? '?' : mib(r.layerSize), created: r.created.slice(0, 19).replace('T', ' ') })),
          [{ key: 'kind' }, { key: 'ref', header: 'image' }, { key: 'repo' }, { key: 'version' }, { key: 'instance' }, { key: 'layer', header: 'own layer', align: 'right' }, { key: 'size', header: 'total', align: 'right' }, { key: 'created' }],
        ),
      );
      const envs = rows.filter((r) => r.kind === 'env').length;
      const own = rows.reduce((n, r) => n + (r.layerSize ?? 0), 0);
      console.log(`${envs} environment image(s), ${rows.length - envs} instance image(s); their own layers take ${mib(own)} on top of the base image`);
    });

  swe
    .command('build')
    .description("build the images of SWE-bench instances ahead of a run (each repo/version's environment layer once, then each instance's layer)")
    .requiredOption('--instances <file>', 'SWE-bench instances (JSON lines or a JSON array)')
    .option('--repos <dir>', 'directory of the repositories (bare or not: owner__name.git, …); else fetched from --repo-url')
    .option('--repo-url <template>', "Git URL of a repository not in --repos, {repo} = owner/name (default https://github.com/{repo}.git; 'none': never fetch)")
    .option('--specs <file>', 'spec table (YAML/JSON: repo → version → spec)')
    .option('--base-image <ref>', 'the image environment layers are built on (default gymflow/sandbox:latest)')
    .option('--instance-ids <ids>', 'only these instances (comma-separated)', parseIdList)
    .option('--build-timeout <s>', 'time limit of one layer build, seconds', parsePositiveInteger, 3600)
    .option('--verbose-build', 'print the build scripts\' output')
    .option('--json', 'print JSON')
    .action(
      async (opts: { instances: string; repos?: string; repoUrl?: string; specs?: string; baseImage?: string; instanceIds?: string[]; buildTimeout: number; verboseBuild?: boolean; json?: boolean }) => {
        const instances = selectInstances(loadInstances(opts.instances), opts.instanceIds, '--instance-ids', opts.instances);
        const specs = opts.specs === undefined ? undefined : loadSpecs(opts.specs);
        const jobs = instances.map((i) => ({ instance: i, spec: specFor(i, specs) })); // every spec before any build
        const rows = [];
        for (const { instance, spec } of jobs) {
          const r = await ensureInstanceImage(instance, spec, {
            repos: opts.repos,
            ...defined({ repoUrl: opts.repoUrl === 'none' ? (false as const) : opts.repoUrl }),
            baseImage: opts.baseImage,
            buildTimeoutS: opts.buildTimeout,
            ...(opts.verboseBuild ? { onLog: (l: string) => process.stderr.write(`  ${l}\n`) } : {}),
          });
          const row = {
            instance: instance.instanceId,
            env: r.env.ref,
            envBuilt: r.env.built,
            envMs: Math.round(r.env.durationMs),
            image: r.instance.ref,
            imageBuilt: r.instance.built,
            imageMs: Math.round(r.instance.durationMs),
          };
          rows.push(row);
          if (!opts.json) process.stderr.write(`${instance.instanceId}: ${row.imageBuilt ? 'built' : 'present'} ${row.image}\n`);
        }
        if (opts.json) return printJson(rows);
        const s = (b: boolean, ms: number): string => (b ? `built ${(ms / 1000).toFixed(1)}s` : 'present');
        console.log(formatTable(rows.map((r) => ({ ...r, envState: s(r.envBuilt, r.envMs), imageState: s(r.imageBuilt, r.imageMs) })), [{ key: 'instance' }, { key: 'env', header: 'environment image' }, { key: 'envState', header: '' }, { key: 'image', header: 'instance image' }, { key: 'imageState', header: '' }]));
      },
    );
}
