/**
 * Synthetic coding-agent trajectories for the reward benchmark: a seeded mix of file reads (whole files
 * and line ranges), whole-file writes, shell commands and searches over a small repository, observations
 * of a few hundred characters of code-like text, some repeated reads and restored writes, and a final
 * `submit`. Deterministic for a seed.
 */
import { Rng } from '../src/core/rng.js';
import { TRAJECTORY_SCHEMA_VERSION, type Trajectory, type TrajectoryStep } from '../src/core/trajectory.js';

const WORDS = ['parse', 'config', 'value', 'result', 'handler', 'request', 'token', 'buffer', 'index', 'retry', 'timeout', 'cache', 'user', 'order', 'status', 'error'];
const DIRS = ['src', 'src/core', 'src/api', 'lib', 'tests'];

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[Math.floor(rng.next() * xs.length)] as T;
}

function identifier(rng: Rng): string {
  return `${pick(rng, WORDS)}_${pick(rng, WORDS)}${rng.next() < 0.3 ? Math.floor(rng.next() * 100) : ''}`;
}

/** A few hundred characters of code-like text: identifiers, numbers, paths. */
function codeText(rng: Rng, chars: number, files: readonly string[]): string {
  const lines: string[] = [];
  let size = 0;
  let line = 1;
  while (size < chars) {
    const l =
      rng.next() < 0.15
        ? `${line}: # see ${pick(rng, files)} for details`
        : `${line}: def ${identifier(rng)}(${identifier(rng)}, n=${Math.floor(rng.next() * 1000)}): return ${identifier(rng)}.${pick(rng, WORDS)}()`;
    lines.push(l);
    size += l.length + 1;
    line++;
  }
  return lines.join('\n');
}

/** Builds one synthetic trajectory of exactly `length` steps (the last one a `submit`). */
export function syntheticTrajectory(length: number, seed: number): Trajectory {
  const rng = new Rng(seed);
  const files = Array.from({ length: 12 }, (_, i) => `${pick(rng, DIRS)}/${pick(rng, WORDS)}_${i}.py`);
  const contents = new Map<string, string[]>();
  const steps: TrajectoryStep[] = [];
  const at = '2026-01-01T00:00:00.000Z';
  const push = (action: TrajectoryStep['action'], observation: string): void => {
    steps.push({ index: steps.length, action, observation, startedAt: at, durationMs: 1 });
  };
  while (steps.length < length - 1) {
    const r = rng.next();
    const file = pick(rng, files);
    if (r < 0.4) {
      // Reads: whole file, a range, or (1 in 8) a repeat of the previous read.
      const prev = steps[steps.length - 1];
      if (prev !== undefined && prev.action.tool === 'file_read' && rng.next() < 0.125) {
        push(prev.action, prev.observation);
      } else if (rng.next() < 0.5) {
        push({ tool: 'file_read', params: { path: file } }, codeText(rng, 300 + Math.floor(rng.next() * 200), files));
      } else {
        const start = 1 + Math.floor(rng.next() * 200);
        push({ tool: 'file_read', params: { path: file, start_line: start, end_line: start + 20 } }, codeText(rng, 250, files));
      }
    } else if (r < 0.6) {
      // Writes: new content, or (1 in 10) an earlier content of the same file back.
      const history = contents.get(file) ?? [];
      const content = history.length > 1 && rng.next() < 0.1 ? (history[0] as string) : codeText(rng, 200 + Math.floor(rng.next() * 300), files);
      history.push(content);
      contents.set(file, history);
      push({ tool: 'file_write', params: { path: file, content } }, `wrote ${content.length} bytes to ${file}`);
    } else if (r < 0.85) {
      const command = pick(rng, [`pytest -q tests/test_${pick(rng, WORDS)}.py`, `ls ${pick(rng, DIRS)}`, `python -m ${pick(rng, WORDS)} --n ${Math.floor(rng.next() * 50)}`, `cat ${file} | head -40`, 'git status', `git diff ${file}`]);
      push({ tool: 'shell', params: { command } }, codeText(rng, 200 + Math.floor(rng.next() * 200), files));
    } else {
      push({ tool: 'search', params: { pattern: identifier(rng), path: pick(rng, DIRS) } }, `${pick(rng, files)}:${Math.floor(rng.next() * 300)}: ${identifier(rng)} = ${identifier(rng)}(${Math.floor(rng.next() * 99)})\n${pick(rng, files)}:${Math.floor(rng.next() * 300)}: return ${identifier(rng)}`);
    }
  }
  push({ tool: 'submit', params: {} }, 'submitted; 14 of 15 tests pass');
  return {
    schemaVersion: TRAJECTORY_SCHEMA_VERSION,
    // The benchmark never validates or hashes: a fixed id keeps generation cheap.
    id: `sha256:${'0'.repeat(64)}`,
    task: { id: `synthetic-${seed}`, domain: 'coding', instruction: `Fix the failing test in tests/test_${pick(rng, WORDS)}.py; ${pick(rng, files)} has the bug.` },
    envId: 'gymflow/synthetic-v0',
    agent: { name: 'synthetic' },
    steps,
    outcome: { success: false, score: 14 / 15, terminated: true, truncated: false, reason: 'submitted' },
    metadata: {},
  };
}
