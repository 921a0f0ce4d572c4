import { describe, expect, it } from 'vitest';
import { fullMessage } from './errors.js';

describe('fullMessage', () => {
  it("adds the reasons of the errors an error wraps: a gRPC error's details, else its message", () => {
    const grpc = Object.assign(new Error('3 INVALID_ARGUMENT: Namespace default has no mapping defined for search attribute GymflowExperiment'), {
      details: 'Namespace default has no mapping defined for search attribute GymflowExperiment',
    });
    const wrapped = new Error('Failed to start Workflow', { cause: grpc });
    expect(fullMessage(wrapped)).toBe('Failed to start Workflow: Namespace default has no mapping defined for search attribute GymflowExperiment');
    expect(fullMessage(new Error('outer', { cause: new Error('middle', { cause: 'inner' }) }))).toBe('outer: middle: inner');
    expect(fullMessage(new Error('cannot read x: ENOENT', { cause: new Error('ENOENT') }))).toBe('cannot read x: ENOENT');
    expect(fullMessage('plain')).toBe('plain');
  });
});
