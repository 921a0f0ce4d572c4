import { describe, expect, it } from 'vitest';
import { jsonlProblem } from './jsonl.js';

describe('jsonlProblem', () => {
  it('splits a formatted JSONL error into file, line, JSON path and message', () => {
    expect(jsonlProblem('f', 2, 'f:2 $.steps[0].tool: expected string')).toMatchObject({ file: 'f', line: 2, path: '$.steps[0].tool', message: 'expected string' });
    expect(jsonlProblem('f', 3, 'something else')).toMatchObject({ line: 3, path: '$', message: 'something else' });
  });
});
