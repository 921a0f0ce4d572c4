/**
 * Determinism of the pipeline workflows: replays the committed histories in `tests/histories/` (recorded from
 * real runs by `scripts/record-histories.ts`) against the current workflow code with
 * `Worker.runReplayHistories`. A failure here means a change would break runs in flight: guard it with
 * `patched()` (docs/operations.md §7) instead of re-recording.
 *
 * Needs no server: replay runs the workflow code against the recorded events only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

const HISTORIES = fileURLToPath(new URL('./histories/', import.meta.url));
const WORKFLOWS = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed in this fork
}

interface HistoryFile {
  name: string;
  workflowType: string;
  history: { events: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[] };
}

function histories(): HistoryFile[] {
  return readdirSync(HISTORIES)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const history = JSON.parse(readFileSync(join(HISTORIES, f), 'utf8')) as HistoryFile['history'];
      const workflowType = history.events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
      return { name: f.replace(/\.json$/, ''), workflowType, history };
    });
}

describe('replay of recorded pipeline histories', () => {
  it('covers both workflows, the continue-as-new chain and the signals', () => {
    const files = histories();
    expect(new Set(files.map((h) => h.workflowType))).toEqual(new Set(['trainingLoop', 'pipeline']));
    expect(files.filter((h) => h.name.startsWith('trainingLoop-smoke-run')).length).toBeGreaterThanOrEqual(2);
    const signals = files.find((h) => h.name.startsWith('trainingLoop-signals'));
    const signalNames = JSON.stringify(signals?.history ?? {}).match(/"signalName":\s*"(\w+)"/g) ?? [];
    expect(signalNames.join(' ')).toMatch(/pause.*resume.*cancel/s);
  });

  it('every history replays against the current workflow code without nondeterminism', async () => {
    const files = histories();
    const results: { workflowId: string; error?: unknown }[] = [];
    for await (const result of Worker.runReplayHistories(
      { workflowsPath: WORKFLOWS, replayName: 'pipeline-replay' },
      files.map((h) => ({ workflowId: h.name, history: h.history })),
    )) {
      results.push(result);
    }
    expect(results.map((r) => r.workflowId)).toEqual(files.map((h) => h.name));
    const failures = results.filter((r) => r.error !== undefined).map((r) => `${r.workflowId}: ${String((r.error as Error).message ?? r.error)}`);
    expect(failures).toEqual([]);
  }, 120_000);

  it('rejects a history the code disagrees with (an activity renamed in the record)', async () => {
    const file = histories().find((h) => h.workflowType === 'pipeline');
    if (!file) throw new Error('no pipeline history recorded');
    const altered = structuredClone(file.history) as { events: Record<string, { activityType?: { name?: string } } | undefined>[] };
    const scheduled = altered.events.find((e) => e['activityTaskScheduledEventAttributes'] !== undefined)?.['activityTaskScheduledEventAttributes'];
    if (!scheduled?.activityType) throw new Error(`${file.name}: no scheduled activity`);
    scheduled.activityType.name = 'anActivityTheCodeNeverCalls';
    await expect(Worker.runReplayHistory({ workflowsPath: WORKFLOWS, replayName: 'pipeline-replay-altered' }, altered, file.name)).rejects.toThrow(
      /nondetermin/i,
    );
  }, 120_000);
});
