import { ConfigError } from '../core/errors.js';
import type { TaskInfo } from '../core/types.js';
import type { EpisodeRecord } from './metrics.js';
import { wilsonInterval, type ProportionInterval } from '../core/stats/wilson.js';

/** Success on the episodes whose task has one value of a metadata field. */
export interface BreakdownRow {
  /** The field's value as text (`(none)` for tasks without the field). */
  value: string;
  /** Episodes. */
  n: number;
  successes: number;
  /** Wilson interval of the success rate. */
  success: ProportionInterval;
}

/** The value text of tasks that do not have the field. */
export const NO_VALUE = '(none)';

/**
 * Throws a ConfigError unless `field` is a non-empty name that at least one task's metadata has; the
 * message lists the fields there are. {@link successBy} checks this too; call it first to fail before an
 * evaluation runs.
 */
export function assertMetadataField(tasks: readonly TaskInfo[], field: string): void {
  if (field.trim() === '') throw new ConfigError('breakdown: the metadata field name is empty');
  if (tasks.some((t) => t.metadata !== undefined && field in t.metadata)) return;
  const known = [...new Set(tasks.flatMap((t) => Object.keys(t.metadata ?? {})))].sort();
  throw new ConfigError(`breakdown: no task has the metadata field '${field}' (fields: ${known.join(', ') || 'none'})`);
}

/**
 * Success per value of a task metadata field (`kind`, `difficulty`, the tool-use env's `answerInTrain`):
 * each episode counts under the value its task has, rows sorted by value. Metadata comes from `tasks`
 * (the environment's `listTasks`), matched by task id.
 *
 * @throws ConfigError when `field` is empty or no task has it ({@link assertMetadataField}), or when an
 * episode's task is not in `tasks`.
 */
export function successBy(episodes: readonly EpisodeRecord[], tasks: readonly TaskInfo[], field: string, confidence = 0.95): BreakdownRow[] {
  assertMetadataField(tasks, field);
  const metadata = new Map(tasks.map((t) => [t.id, t.metadata ?? {}]));
  const groups = new Map<string, { n: number; successes: number }>();
  for (const episode of episodes) {
    const meta = metadata.get(episode.taskId);
    if (meta === undefined) throw new ConfigError(`breakdown: episode ${episode.index} ran task '${episode.taskId}', which the task list does not have`);
    const raw = meta[field];
    const value = raw === undefined ? NO_VALUE : typeof raw === 'string' ? raw : JSON.stringify(raw);
    const group = groups.get(value) ?? { n: 0, successes: 0 };
    group.n += 1;
    if (episode.success) group.successes += 1;
    groups.set(value, group);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([value, g]) => ({ value, n: g.n, successes: g.successes, success: wilsonInterval(g.successes, g.n, confidence) }));
}
