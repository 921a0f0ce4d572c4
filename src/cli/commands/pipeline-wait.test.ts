import { ServiceError, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { serverUnreachable } from './pipeline.js';

describe('pipeline start --wait through a server outage', () => {
  it('tells a server that did not answer from a run that ended badly', () => {
    // What the SDK throws when no connection could be made (gRPC UNAVAILABLE) or none answered in time.
    const grpc = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details });
    expect(serverUnreachable(new ServiceError('Failed to get history', { cause: grpc(14, 'No connection established') }))).toBe(true);
    expect(serverUnreachable(grpc(4, 'Deadline exceeded'))).toBe(true);
    // A run that failed, or a call the server refused, ends the wait.
    expect(serverUnreachable(new WorkflowFailedError('failed', ApplicationFailure.create({ message: 'boom' }), 'NON_RETRYABLE_FAILURE'))).toBe(false);
    expect(serverUnreachable(new ServiceError('not found', { cause: grpc(5, 'workflow not found') }))).toBe(false);
    expect(serverUnreachable(new Error('something else'))).toBe(false);
  });
});
