import { describe, expect, it } from 'vitest';
import type { TimeStep } from '../../core/types.js';
import { stepResultOf, timeStepFrom, type ObservationReading } from './observation.js';

const GENERIC: ObservationReading = { gymflow: false, successThreshold: 1 };

describe('time steps over OpenEnv', () => {
  it('round-trip through a gymflow server: text, flags, reward and info', () => {
    const ts: TimeStep = { observation: 'You arrive at sofa 1.', reward: 1, terminated: true, truncated: false, info: { reason: 'goal_reached', success: true, score: 1 } };
    const wire = JSON.parse(JSON.stringify(stepResultOf(ts))) as ReturnType<typeof stepResultOf>;
    expect(wire).toEqual({ observation: { text: ts.observation, terminated: true, truncated: false, info: ts.info }, reward: 1, done: true });
    expect(timeStepFrom(wire, { gymflow: true, successThreshold: 1 }, 'P')).toEqual(ts);
  });

  it("refuses a gymflow observation whose fields are missing or disagree with done, naming what", () => {
    const reading = { gymflow: true, successThreshold: 1 };
    expect(() => timeStepFrom({ observation: { text: 'x', terminated: false, info: {} }, reward: 0, done: false }, reading, 'ws://h/ws answer to \'step\'')).toThrow(
      "ws://h/ws answer to 'step' observation: malformed answer: $.truncated: Invalid input: expected boolean, received undefined",
    );
    expect(() => timeStepFrom({ observation: { text: 'x', terminated: false, truncated: false, info: {} }, reward: 0, done: true }, reading, 'P')).toThrow(
      'P: malformed answer: done is true but terminated is false and truncated false',
    );
  });

  it("reads another server's observation: its only string field, or the observation as JSON, or the field named", () => {
    expect(timeStepFrom({ observation: { message: 'too low', guesses_left: 9 }, reward: 0, done: false }, GENERIC, 'P')).toEqual({
      observation: 'too low',
      reward: 0,
      terminated: false,
      truncated: false,
      info: { openenv: { observation: { message: 'too low', guesses_left: 9 }, reward: 0 } },
    });
    expect(timeStepFrom({ observation: { a: 'x', b: 'y' }, reward: null, done: false }, GENERIC, 'P').observation).toBe('{"a":"x","b":"y"}');
    expect(timeStepFrom({ observation: { a: 'x', b: [1] }, done: false }, { ...GENERIC, observationField: 'b' }, 'P').observation).toBe('[1]');
    expect(() => timeStepFrom({ observation: { a: 'x' }, done: false }, { ...GENERIC, observationField: 'b' }, 'P')).toThrow(
      "P: the observation has no field 'b' (observationField); its fields: a",
    );
  });

  it('ends an episode the server calls done as terminated, reason done, with the reward as score and success', () => {
    const won = timeStepFrom({ observation: { m: 'yes' }, reward: true, done: true }, GENERIC, 'P');
    expect(won).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { reason: 'done', success: true, score: 1 } });
    const partial = timeStepFrom({ observation: { m: 'meh' }, reward: 0.5, done: true }, GENERIC, 'P');
    expect(partial.info).toMatchObject({ success: false, score: 0.5 });
    expect(timeStepFrom({ observation: { m: 'meh' }, reward: 0.5, done: true }, { ...GENERIC, successThreshold: 0.5 }, 'P').info.success).toBe(true);
    expect(timeStepFrom({ observation: { m: 'big' }, reward: 7, done: true }, GENERIC, 'P').info.score).toBe(1);
  });
});
