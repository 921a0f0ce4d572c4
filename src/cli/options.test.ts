import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { envKwargsOf, parseInteger, parseKwargs, parseNonNegativeInteger, parsePort, parsePositiveInteger } from './options.js';

describe('option parsers', () => {
  it('take integers, positive and non-negative integers and ports, and name the bad value', () => {
    expect(parseInteger('-3')).toBe(-3);
    expect(() => parseInteger('1.5')).toThrow("expected an integer, got '1.5'");
    expect(parsePositiveInteger('7')).toBe(7);
    expect(() => parsePositiveInteger('0')).toThrow("expected a positive integer, got '0'");
    expect(parseNonNegativeInteger('0')).toBe(0);
    expect(() => parseNonNegativeInteger('-1')).toThrow("expected 0 or a positive integer, got '-1'");
    expect(parsePort('7233')).toBe(7233);
    expect(parsePort('65535')).toBe(65535);
    expect(() => parsePort('65536')).toThrow(InvalidArgumentError);
    expect(() => parsePort('70000')).toThrow("expected a port (1-65535), got '70000'");
    expect(() => parsePort('x')).toThrow("expected an integer, got 'x'");
  });
});

describe('environment keyword arguments', () => {
  it('parse a JSON object and name what else was given', () => {
    expect(parseKwargs('{"admissibleActions": true}')).toEqual({ admissibleActions: true });
    expect(() => parseKwargs('[1]')).toThrow("expected a JSON object, got '[1]'");
    expect(() => parseKwargs('null')).toThrow("expected a JSON object, got 'null'");
    expect(() => parseKwargs('{user:')).toThrow(/^expected a JSON object, got '\{user:' \(/);
  });

  it('merge --user into --env-kwargs, --user winning; neither given is no kwargs at all', () => {
    expect(envKwargsOf({})).toBeUndefined();
    expect(envKwargsOf({ user: 'scripted' })).toEqual({ user: 'scripted' });
    expect(envKwargsOf({ envKwargs: { user: 'scripted', userTimeoutMs: 5000 }, user: 'openai:m' })).toEqual({ user: 'openai:m', userTimeoutMs: 5000 });
  });
});
