import { describe, expect, it } from 'vitest';
import { formatProblem, isConversionProblem, problem } from './adapter.js';

describe('conversion problems', () => {
  it('format as file:line $.path: message', () => {
    expect(formatProblem(problem('a.jsonl', '$.steps[3].action.tool', 'expected string', { line: 17 }))).toBe('a.jsonl:17 $.steps[3].action.tool: expected string');
    expect(formatProblem(problem('a.traj', '$', 'odd', { severity: 'warning' }))).toBe('a.traj $: odd (warning)');
    expect(isConversionProblem(problem('f', '$', 'm'))).toBe(true);
    expect('line' in problem('f', '$', 'm')).toBe(false);
  });
});
