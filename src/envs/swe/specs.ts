import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import { LOG_PARSER_NAMES, REPO_LOG_PARSERS, type LogParserName } from './log-parsers.js';
import type { SweInstance } from './instances.js';

// The YAML parser (~45 ms of CPU to load, in every command that registers the environments) is loaded on first use:
// only a spec file needs it.
const require = createRequire(import.meta.url);

/** The default test command: pytest with its per-test report (`-rA`) and no cache files; the test files follow. */
export const DEFAULT_TEST_CMD = 'python3 -m pytest -rA -p no:cacheprovider';

/**
 * How to build and test one repository at one version — SWE-bench's `MAP_REPO_VERSION_TO_SPECS` entry, in its
 * field names where it has one:
 *
 * - environment layer (shared by every instance of the repo/version): `env_setup` (commands, as root), then
 *   `pip_packages` (`python3 -m pip install …`), then the check that `python3` is `python`;
 * - instance layer (the repository at the instance's base commit in /work): `pre_install` (commands), `install`;
 * - grading: `eval_commands` (run before the tests, in the same shell), `test_cmd` followed by the test directives
 *   (`test_directives`: the files the test patch touches, `django` module names, or `none`), and `log_parser` (the
 *   framework whose output the log is; default SWE-bench's parser for the repository, else `pytest`).
 *
 * `build_network`: give the build containers a network (default false: builds run with `--network none`, so
 * `pip install` from an index needs it).
 */
export const SweSpecSchema = z
  .object({
    python: z.string().regex(/^\d+(\.\d+){0,2}$/, 'expected a version like 3.11').optional(),
    env_setup: z.array(z.string()).default([]),
    pip_packages: z.array(z.string()).default([]),
    pre_install: z.array(z.string()).default([]),
    install: z.string().optional(),
    eval_commands: z.array(z.string()).default([]),
    test_cmd: z.string().min(1).default(DEFAULT_TEST_CMD),
    test_directives: z.enum(['files', 'django', 'none']).default('files'),
    log_parser: z.enum(LOG_PARSER_NAMES).optional(),
    build_network: z.boolean().default(false),
  })
  .strict();

/** A spec with its defaults filled in and the log parser chosen. */
export type SweSpec = Omit<z.infer<typeof SweSpecSchema>, 'log_parser'> & { log_parser: LogParserName };

/** A spec table: repository (`owner/name` or `*`) → version (or `*`) → spec. */
export type SpecTable = Record<string, Record<string, z.input<typeof SweSpecSchema>>>;

const SpecTableSchema = z.record(z.string(), z.record(z.string(), SweSpecSchema));

/** Where a table came from, for messages. */
export interface LoadedSpecs {
  table: z.infer<typeof SpecTableSchema>;
  source: string;
}

/**
 * Reads a spec table from a YAML or JSON file, or checks one given as an object (`make`'s `specs` keyword).
 * Errors name the file and the path of the bad field (`specs.yaml $["acme/calc"]["1.0"].pre_install: …`).
 *
 * @example
 * ```yaml
 * acme/calc:
 *   "1.0":
 *     python: "3.11"
 *     install: python3 -m pip install -e .
 *     test_cmd: python3 -m pytest -rA
 * ```
 */
export function loadSpecs(specs: string | SpecTable): LoadedSpecs {
  let raw: unknown = specs;
  const source = typeof specs === 'string' ? specs : 'specs';
  if (typeof specs === 'string') {
    let text: string;
    try {
      text = readFileSync(specs, 'utf8');
    } catch (err) {
      throw new ConfigError(`${specs}: cannot read the spec file: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
    }
    try {
      raw = (require('yaml') as typeof import('yaml')).parse(text); // YAML is a superset of JSON
    } catch (err) {
      throw new ConfigError(`${specs}: not YAML or JSON: ${(err as Error).message.split('\n')[0] ?? ''}`);
    }
  }
  const parsed = SpecTableSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = (issue?.path ?? []).map((p, i) => (i < 2 ? `[${JSON.stringify(p)}]` : `.${String(p)}`)).join('');
    const extra = issue?.code === 'unrecognized_keys' ? ` (known: ${Object.keys(SweSpecSchema.shape).join(', ')})` : '';
    throw new ConfigError(`${source} $${path}: ${issue?.message ?? 'invalid spec table'}${extra}`);
  }
  return { table: parsed.data, source };
}

/** The spec used when no table is given: the base image's Python, pytest with `-rA`, nothing installed. */
export function defaultSpec(repo: string): SweSpec {
  const s = SweSpecSchema.parse({});
  return { ...s, log_parser: REPO_LOG_PARSERS[repo] ?? 'pytest' };
}

/**
 * The spec of an instance's repository and version: the table's `[repo][version]`, else `[repo]["*"]`,
 * `["*"][version]`, `["*"]["*"]`; without a table, {@link defaultSpec}.
 *
 * @throws ConfigError naming the instance, its repo/version and the table when the table has no entry for it.
 */
export function specFor(instance: Pick<SweInstance, 'instanceId' | 'repo' | 'version'>, specs: LoadedSpecs | undefined): SweSpec {
  if (specs === undefined) return defaultSpec(instance.repo);
  const t = specs.table;
  const found = t[instance.repo]?.[instance.version] ?? t[instance.repo]?.['*'] ?? t['*']?.[instance.version] ?? t['*']?.['*'];
  if (found === undefined) {
    const known = Object.entries(t).flatMap(([repo, versions]) => Object.keys(versions).map((v) => `${repo}@${v}`));
    throw new ConfigError(`instance ${instance.instanceId}: no spec for ${instance.repo} version ${instance.version} in ${specs.source} (it has: ${known.join(', ') || 'nothing'})`);
  }
  return { ...found, log_parser: found.log_parser ?? REPO_LOG_PARSERS[instance.repo] ?? 'pytest' };
}
