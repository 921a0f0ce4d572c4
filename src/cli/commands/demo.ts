import type { Command } from 'commander';
import { listEnvs, make } from '../../core/registry.js';
import { runEpisode } from '../../core/rollout.js';
import { resolveAgent } from '../../policy/specs.js';
import { parsePositiveInteger, printJson } from '../options.js';
import { formatTable } from '../table.js';

type DemoRow = {
  env: string;
  agent: string;
  episodes: number;
  steps: number;
  meanSteps: number;
  success: number;
  meanReward: number;
  /** Why the row has no numbers (e.g. no Docker engine for the sandbox). */
  note?: string;
};

/**
 * `gymflow demo`: every registered environment, its expert and a random agent, a few seeded episodes
 * on held-out tasks each, summarised in one table.
 */
export function demoCommand(program: Command): void {
  program
    .command('demo')
    .description('run the expert and random agents for a few seeded held-out episodes in every environment')
    .option('-n, --episodes <n>', 'episodes per env and agent', parsePositiveInteger, 5)
    .option('--json', 'print JSON')
    .action(async (opts: { episodes: number; json?: boolean }) => {
      const rows: DemoRow[] = [];
      for (const s of listEnvs()) {
        for (const agentSpec of [...Object.keys(s.agents ?? {}), 'random']) {
          const env = make(s.id);
          const tasks = env.listTasks?.('heldout') ?? [];
          let steps = 0;
          let successes = 0;
          let reward = 0;
          let note: string | undefined;
          try {
            for (let i = 0; i < opts.episodes; i++) {
              const agent = resolveAgent(agentSpec, s.id, { seed: i });
              const task = tasks[i % Math.max(1, tasks.length)]?.id;
              const t = await runEpisode(env, agent, { envId: s.id, seed: i, ...(task ? { task } : {}) });
              steps += t.steps.length;
              successes += t.outcome.success ? 1 : 0;
              reward += t.steps.reduce((a, st) => a + (st.envReward ?? 0), 0);
            }
          } catch (err) {
            // One environment that cannot run here (no Docker engine for the sandbox) must not hide the others.
            note = `unavailable: ${(err as Error).message.split('\n')[0]}`;
          } finally {
            await env.close();
          }
          const n = opts.episodes;
          rows.push(
            note === undefined
              ? { env: s.id, agent: agentSpec, episodes: n, steps, meanSteps: steps / n, success: successes / n, meanReward: reward / n }
              : { env: s.id, agent: agentSpec, episodes: 0, steps: 0, meanSteps: NaN, success: NaN, meanReward: NaN, note },
          );
        }
      }
      if (opts.json) return printJson(rows);
      console.log(
        formatTable(rows, [
          { key: 'env' },
          { key: 'agent' },
          { key: 'episodes', align: 'right' },
          { key: 'meanSteps', header: 'steps/ep', align: 'right' },
          { key: 'success', header: 'success', align: 'right' },
          { key: 'meanReward', header: 'mean reward', align: 'right' },
          { key: 'note' },
        ]),
      );
    });
}
