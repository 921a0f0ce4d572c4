import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { parseOpenAISpec } from './model-spec.js';

describe('parseOpenAISpec', () => {
  it('splits the model from a base URL, adding /v1 to a bare origin', () => {
    expect(parseOpenAISpec('gpt-4o')).toEqual({ model: 'gpt-4o' });
    expect(parseOpenAISpec('m@x@https://h.example/api/v1/')).toEqual({ model: 'm@x', baseURL: 'https://h.example/api/v1' });
    expect(parseOpenAISpec('q@http://127.0.0.1:8000')).toEqual({ model: 'q', baseURL: 'http://127.0.0.1:8000/v1' });
  });

  it('names the kind of spec in its errors', () => {
    expect(() => parseOpenAISpec('@http://h', 'user spec')).toThrow(ConfigError);
    expect(() => parseOpenAISpec('@http://h', 'user spec')).toThrow(/^user spec 'openai:@http:\/\/h' names no model/);
    expect(() => parseOpenAISpec('m@http://')).toThrow(/^agent spec 'openai:m@http:\/\/': 'http:\/\/' is not a valid URL/);
  });
});
