import { describe, expect, it } from 'vitest';
import { toolCategory } from './categories.js';

describe('toolCategory', () => {
  it('knows the tools of the supported agents', () => {
    expect(toolCategory('Read', {})).toBe('read');
    expect(toolCategory('MultiEdit', {})).toBe('write');
    expect(toolCategory('find_file', {})).toBe('search');
    expect(toolCategory('str_replace_editor', { command: 'view' })).toBe('read');
    expect(toolCategory('str_replace_editor', { command: 'create' })).toBe('write');
    expect(toolCategory('bash', { command: 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff' })).toBe('submit');
    expect(toolCategory('bash', { command: 'ls' })).toBe('execute');
    expect(toolCategory('respond', { content: 'hi' })).toBe('communicate');
    // The OpenHands V1 SDK's tools.
    expect(toolCategory('terminal', { command: 'ls' })).toBe('execute');
    expect(toolCategory('file_editor', { command: 'view', path: '/w' })).toBe('read');
    expect(toolCategory('file_editor', { command: 'str_replace', path: '/w/a.py' })).toBe('write');
    expect(toolCategory('task_tracker', {})).toBe('think');
    expect(toolCategory('durability_get_weather_in_city', {})).toBeUndefined();
    expect(toolCategory('constructor', {})).toBeUndefined();
  });
});
