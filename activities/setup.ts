/**
 * Setup activities of a pipeline: the configuration checks that make a bad configuration fail in seconds
 * (not after an hour of rollouts), and the initial policy.
 *
 * - `checkConfig` (CPU queue): the schema (`parsePipelineConfig`), the environment, every agent spec, the
 *   reward profile and the task splits. Returns the validated configuration, defaults filled in.
 * - `checkTrainerConfigs` (GPU queue): each phase's `train.config` checked by the trainer's own loader
 *   (`python -m gymflow_trainer check-config`), so an unknown key or a bad value is named before any work.
 * - `preparePolicy` (GPU queue): the initial model as a store artifact (a tiny model is built and stored;
 *   an external `path` is checked and used as is).
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { z } from 'zod';
import { registryToolLookup } from '../src/core/chat/tool-lookup.js';
import { defined } from '../src/core/defined.js';
import { ConfigError } from '../src/core/errors.js';
import { getProfile } from '../src/core/profiles/index.js';
import { make, spec } from '../src/core/registry.js';
import { collect } from '../src/hub/collect.js';
import { toSftRecord } from '../src/hub/export/sft.js';
import { isS3Url } from '../src/hub/store/layout.js';
import { putTree } from '../src/hub/store/tree.js';
import { parsePipelineConfig, rulesEnabled, type PipelineConfig } from '../src/loop/config.js';
import type { PolicyState } from '../src/loop/status.js';
import { openWorkspace, type WorkspaceDefaults } from '../src/runtime/workspace.js';
import { resolveAgent } from '../src/policy/specs.js';
import { configFailure, parseInput, withFailureMapping } from './common.js';
import { checkRewardSection } from './reward.js';
import { runTrainerTool, toolFailure } from './python.js';

/** Checks one agent spec by building (and closing) the agent; `policy` is the loop's own and always fits. */
async function checkAgent(agentSpec: string, envId: string, field: string): Promise<void> {
  if (agentSpec === 'policy') return;
  try {
    await resolveAgent(agentSpec, envId, { seed: 0 }).close?.();
  } catch (err) {
    throw new ConfigError(`pipeline config ${field}: ${(err as Error).message}`);
  }
}

/**
 * `policy.init.tokenizer_corpus` names an agent the environment registers (`expert`, …): the tokenizer learns from
 * its episodes. A `ConfigError` naming the field and the agents there are otherwise.
 */
function checkTokenizerCorpus(envId: string, agent: string): void {
  const known = Object.keys(spec(envId).agents ?? {});
  if (!known.includes(agent)) {
    throw new ConfigError(`pipeline config $.policy.init.tokenizer_corpus: ${envId} registers no agent '${agent}' to learn a tokenizer from (it registers: ${known.join(', ') || 'none'})`);
  }
}

/** Where a section's `env_kwargs` came from: the top-level `env_kwargs` when they are those, else the section's own. */
function kwargsField(config: PipelineConfig, kwargs: Record<string, unknown> | undefined, sectionField: string): string {
  return config.env_kwargs !== undefined && JSON.stringify(kwargs) === JSON.stringify(config.env_kwargs) ? '$.env_kwargs' : sectionField;
}

/**
 * Makes the environment with its keyword arguments (a bad one fails naming `kwargsField`) and checks that its
 * split lists tasks.
 */
function checkSplit(envId: string, kwargs: Record<string, unknown> | undefined, split: 'train' | 'heldout', field: string, kwargsField: string): void {
  let env;
  try {
    env = make(envId, defined({ kwargs }));
  } catch (err) {
    throw new ConfigError(`pipeline config ${kwargsField}: ${(err as Error).message}`);
  }
  try {
    const tasks = env.listTasks?.(split);
    if (tasks !== undefined && tasks.length === 0) throw new ConfigError(`pipeline config ${field}: ${envId} lists no '${split}' tasks`);
    if (tasks === undefined && field.startsWith('$.eval')) throw new ConfigError(`pipeline config ${field}: ${envId} cannot list tasks; evaluation needs a fixed task list`);
  } finally {
    void env.close();
  }
}

/**
 * Writes the SFT records of one episode of the env's registered agent `agent` per training task of `envId` to
 * `file` (JSONL): the text a tiny tokenizer's BPE learns from (`policy.init.tokenizer_corpus`).
 */
async function writeAgentCorpus(envId: string, agent: string, file: string): Promise<void> {
  checkTokenizerCorpus(envId, agent);
  const { trajectories } = await collect({ envId, agent, resolveAgent, split: 'train', concurrency: 8, signal: Context.current().cancellationSignal });
  const lookup = registryToolLookup();
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, trajectories.map((t) => JSON.stringify(toSftRecord(t, lookup))).join('\n') + '\n');
}

/** Creates `dir` (a directory the configuration names) if needed; a configuration failure naming `field` if it cannot be one. */
async function checkDirectory(dir: string | undefined, field: string): Promise<void> {
  if (dir === undefined) return;
  if (field === '$.store' && isS3Url(dir)) {
    // A bucket, not a directory of this host (making one here would leave a folder named `s3:` in the worker's
    // working directory): check the URL's form; the bucket is reached when the first stage opens the store.
    const { parseS3Url } = await import('../src/hub/store/s3.js');
    try {
      parseS3Url(dir);
    } catch (err) {
      throw configFailure(`pipeline config ${field}: ${(err as Error).message}`);
    }
    return;
  }
  const problem = await mkdir(dir, { recursive: true }).then(
    async () => ((await stat(dir)).isDirectory() ? undefined : 'not a directory'),
    (err: NodeJS.ErrnoException) => (err.code === 'EEXIST' || err.code === 'ENOTDIR' ? 'it or a parent of it is a file, not a directory' : err.message),
  );
  if (problem !== undefined) throw configFailure(`pipeline config ${field}: ${dir}: ${problem}`);
}

/** The input of `checkTrainerConfigs` (parsed at run time; typed for the workflows that call it). */
export const CheckTrainerConfigsInputSchema = z.object({
  phases: z.array(z.object({ field: z.string(), command: z.enum(['sft', 'rl', 'dpo']), config: z.record(z.string(), z.unknown()) })),
});

/** The input of `preparePolicy` (parsed at run time; typed for the workflows that call it). */
export const PreparePolicyInputSchema = z.object({
  experiment: z.string(),
  init: z.union([z.object({ tiny: z.record(z.string(), z.unknown()), tokenizer_corpus: z.string().min(1).optional() }), z.object({ path: z.string() })]),
  env: z.string(),
  store: z.string().optional(),
  workDir: z.string().optional(),
});

/** Setup activities; `defaults` are the worker's store and work directory. */
export function createSetupActivities(defaults: WorkspaceDefaults) {
  return {
    /**
     * Validates the pipeline configuration against the schema and the running system. Configuration errors
     * are non-retryable and name the field (`$.phases[1].collect.agent: unknown agent 'exprt' …`).
     */
    async checkConfig(input: unknown): Promise<PipelineConfig> {
      return withFailureMapping(async () => {
        let config: PipelineConfig;
        try {
          config = parsePipelineConfig(input, 'pipeline config');
        } catch (err) {
          throw configFailure((err as Error).message);
        }
        try {
          spec(config.env);
        } catch (err) {
          throw configFailure(`pipeline config $.env: ${(err as Error).message}`);
        }
        const where = config.phases.length === 1 && config.phases[0]?.name === 'main' ? (_i: number) => '$' : (i: number) => `$.phases[${i}]`;
        for (const [i, phase] of config.phases.entries()) {
          await checkAgent(phase.collect.agent, config.env, `${where(i)}.collect.agent`);
          checkSplit(config.env, phase.collect.env_kwargs, phase.collect.split, `${where(i)}.collect.split`, kwargsField(config, phase.collect.env_kwargs, `${where(i)}.collect.env_kwargs`));
        }
        if (config.eval.agent !== undefined) await checkAgent(config.eval.agent, config.env, '$.eval.agent');
        if (config.policy.agent !== undefined) await checkAgent(config.policy.agent, config.env, '$.policy.agent');
        if ('tiny' in config.policy.init && config.policy.init.tokenizer_corpus !== undefined) checkTokenizerCorpus(config.env, config.policy.init.tokenizer_corpus);
        checkSplit(config.env, config.eval.env_kwargs, config.eval.split, '$.eval.split', kwargsField(config, config.eval.env_kwargs, '$.eval.env_kwargs'));
        for (const [i, b] of (config.eval.benchmarks ?? []).entries()) {
          const at = `$.eval.benchmarks[${i}]`;
          try {
            spec(b.env);
          } catch (err) {
            throw configFailure(`pipeline config ${at}.env: ${(err as Error).message}`);
          }
          if (b.agent !== undefined) await checkAgent(b.agent, b.env, `${at}.agent`);
          else if (config.eval.agent !== undefined) await checkAgent(config.eval.agent, b.env, '$.eval.agent');
          checkSplit(b.env, b.env_kwargs, b.split, `${at}.split`, `${at}.env_kwargs`);
        }
        if (rulesEnabled(config.reward)) {
          const name = config.reward.profile ?? spec(config.env).domain;
          try {
            getProfile(name);
          } catch (err) {
            throw new ConfigError(`pipeline config $.reward.profile: ${(err as Error).message}`);
          }
          await checkRewardSection(config.reward, config.env);
        }
        // A store or work directory that cannot be one fails here, naming its field, not in the first stage.
        await checkDirectory(config.store, '$.store');
        await checkDirectory(config.work_dir, '$.work_dir');
        // policy.init.path is checked by preparePolicy, on the GPU worker whose disk it names.
        return config;
      });
    },

    /**
     * Runs the trainer's own configuration loader on every phase's `train.config` (with the fields the
     * pipeline fills in set to placeholders). The first problem fails the activity for good, naming the
     * phase and the trainer's message.
     */
    async checkTrainerConfigs(input: z.input<typeof CheckTrainerConfigsInputSchema>): Promise<{ checked: number }> {
      const { phases } = parseInput(CheckTrainerConfigsInputSchema, input, 'checkTrainerConfigs');
      const ws = await openWorkspace({}, defaults);
      const dir = path.join(ws.workDir, 'config-checks', `${process.pid}-${Date.now()}`);
      await mkdir(dir, { recursive: true });
      try {
        for (const phase of phases) {
          const model = { ...((phase.config['model'] as Record<string, unknown> | undefined) ?? {}), path: '/placeholder/model' };
          const doc = { ...phase.config, data: '/placeholder/data.jsonl', output_dir: '/placeholder/output', model };
          // The trainer names the file in its messages: name it after the field.
          const file = path.join(dir, `${phase.field}.json`);
          await writeFile(file, JSON.stringify(doc));
          const r = await runTrainerTool('check-config', [phase.command, '--config', file], Context.current().cancellationSignal);
          if (r.code === 2) throw configFailure(`pipeline config ${phase.field}: trainer rejected the configuration: ${r.error?.message ?? toolFailure(r)}`);
          if (r.code !== 0) throw new Error(`checking ${phase.field} with the trainer failed (exit ${String(r.code)}): ${toolFailure(r)}`);
        }
        return { checked: phases.length };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },

    /**
     * The initial policy: `{ tiny }` is built by the trainer (`python -m gymflow_trainer tiny`) and stored as
     * a `checkpoint` tree (named `<experiment>/iter-0/checkpoint`); `{ path }` must be a directory on this
     * worker.
     */
    async preparePolicy(input: z.input<typeof PreparePolicyInputSchema>): Promise<PolicyState> {
      const { experiment, init, env, store, workDir } = parseInput(PreparePolicyInputSchema, input, 'preparePolicy');
      return withFailureMapping(async () => {
        if ('path' in init) {
          const s = await stat(init.path).catch(() => undefined);
          if (!s?.isDirectory()) throw configFailure(`pipeline config $.policy.init.path: ${init.path} is not a directory on the GPU worker`);
          return { checkpointPath: path.resolve(init.path), iteration: 0 };
        }
        const ws = await openWorkspace({ store, workDir }, defaults);
        // The tiny model is a pure function of its config (seeded) and, with a tokenizer corpus, of the env's
        // agent's episodes (deterministic too): build it once per worker and reuse it.
        const digest = createHash('sha256').update(JSON.stringify([init.tiny, init.tokenizer_corpus ?? null, env])).digest('hex').slice(0, 16);
        const dir = path.join(ws.workDir, 'init', `tiny-${digest}`);
        if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
          const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
          let tiny = init.tiny;
          if (init.tokenizer_corpus !== undefined) {
            const corpus = `${tmp}.corpus.jsonl`;
            await writeAgentCorpus(env, init.tokenizer_corpus, corpus);
            tiny = { ...tiny, bpe_corpus: [corpus] };
          }
          try {
            const args = ['--config', JSON.stringify(tiny), '--out', tmp, '--name', 'pipeline config', '--at', '$.policy.init.tiny'];
            const r = await runTrainerTool('tiny', args, Context.current().cancellationSignal);
            if (r.code === 2) throw configFailure(`pipeline config $.policy.init.tiny: ${r.error?.message ?? toolFailure(r)}`);
            if (r.code !== 0) throw new Error(`building the tiny initial model failed (exit ${String(r.code)}): ${toolFailure(r)}`);
            // Complete or absent: a concurrent build that won the rename is as good as ours.
            await rename(tmp, dir).catch(async (err: unknown) => {
              if (!(await stat(dir).catch(() => undefined))?.isDirectory()) throw err;
            });
          } finally {
            await rm(tmp, { recursive: true, force: true });
            await rm(`${tmp}.corpus.jsonl`, { force: true });
          }
        }
        const entry = await putTree(ws.store, dir, { kind: 'checkpoint', name: `${experiment}/iter-0/checkpoint`, meta: { init: 'tiny', tiny: init.tiny } });
        return { checkpointRef: entry.ref, iteration: 0 };
      });
    },
  };
}
