import type { Trajectory, TrajectoryStep } from '../../core/trajectory.js';
import { makeTrajectory } from '../../core/trajectory.js';

/** Options of {@link fakeTrajectory}. */
export interface FakeTrajectoryOptions {
  task?: string;
  env?: string;
  agent?: string;
  /** Tool calls, in order; the last one should be `submit`. */
  actions?: { tool: string; params: Record<string, unknown>; thought?: string; observation?: string; error?: boolean }[];
  success?: boolean;
  /** Sets `reward.total` (and per-step process rewards) when given. */
  reward?: number;
  startedAt?: string;
  metadata?: Record<string, unknown>;
  tokens?: boolean;
}

/** A small valid trajectory for tests (tool-use flavoured). */
export function fakeTrajectory(o: FakeTrajectoryOptions = {}): Trajectory {
  const actions = o.actions ?? [
    { tool: 'lookup', params: { entity: 'Velmora', attribute: 'population' }, thought: 'Look it up.', observation: 'Velmora (city) — population: 120000' },
    { tool: 'submit', params: { answer: '120000' }, thought: 'Done.', observation: 'Correct.' },
  ];
  const start = Date.parse(o.startedAt ?? '2026-01-01T00:00:00.000Z');
  const steps: TrajectoryStep[] = actions.map((a, i) => {
    const s: TrajectoryStep = {
      index: i,
      action: { tool: a.tool, params: a.params },
      observation: a.observation ?? `result of ${a.tool}`,
      envReward: i === actions.length - 1 && (o.success ?? true) ? 1 : 0,
      startedAt: new Date(start + i * 1000).toISOString(),
      durationMs: 5,
    };
    if (a.thought !== undefined) s.thought = a.thought;
    if (a.error) s.error = { code: 'invalid_params', message: 'bad params' };
    if (o.reward !== undefined) s.reward = { score: o.reward, rubrics: { redundancy: { score: o.reward, layer: 'rules' } } };
    if (o.tokens) {
      s.tokens = { prompt: [1, 2, 3], completion: [4 + i, 5] };
      s.logprobs = [-0.5, -0.25];
    }
    return s;
  });
  const success = o.success ?? true;
  const t = makeTrajectory({
    task: { id: o.task ?? 'tool-train-00001', domain: 'tool-use', instruction: `Question for ${o.task ?? 'tool-train-00001'}?`, split: 'train' },
    envId: o.env ?? 'gymflow/tool-use-v0',
    agent: { name: o.agent ?? 'expert' },
    steps,
    outcome: { success, score: success ? 1 : 0, terminated: true, truncated: false, reason: 'submitted' },
    metadata: o.metadata ?? {},
  });
  if (o.reward === undefined) return t;
  return { ...t, reward: { total: o.reward, outcome: success ? 1 : 0, process: o.reward, efficiency: 1, layers: { rules: o.reward } } };
}
