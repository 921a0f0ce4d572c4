import { describe, expect, it } from 'vitest';
import { make } from '../../core/registry.js';
import { ToolValidator } from '../../core/tool-validator.js';
import { registerBuiltinEnvs } from '../register.js';
import { actionMappingFrom, actionPayload, actionSchemaFor, CATEGORY_KEYWORD, ToolCallSchema } from './action-schema.js';

// An OpenEnv Action model's schema, as pydantic writes it (openenv-core 0.3: `metadata` on every action).
const GUESS_ACTION = {
  additionalProperties: false,
  description: 'Guess the secret number.',
  properties: {
    metadata: { additionalProperties: true, description: 'Additional metadata for the action', title: 'Metadata', type: 'object' },
    guess: { description: 'Your guess, from 1 to 100.', maximum: 100, minimum: 1, title: 'Guess', type: 'integer' },
  },
  required: ['guess'],
  title: 'GuessAction',
  type: 'object',
};

describe('gymflow tools as an OpenEnv action schema', () => {
  it('gives the same tools back, names, descriptions, parameters and categories', () => {
    registerBuiltinEnvs();
    const env = make('gymflow/household-v0');
    const schema = actionSchemaFor(env.tools);
    expect(schema.oneOf).toHaveLength(env.tools.length);
    expect(schema.oneOf[0]).toMatchObject({ properties: { tool: { const: 'go' } }, required: ['tool', 'params'], [CATEGORY_KEYWORD]: 'execute' });
    const mapping = actionMappingFrom(JSON.parse(JSON.stringify(schema)) as typeof schema, { envName: 'x' }, 'test');
    expect(mapping.form).toBe('tool-call');
    expect(mapping.tools).toEqual(env.tools);
    expect(actionPayload(mapping, { tool: 'go', params: { target: 'fridge 1' } })).toEqual({ tool: 'go', params: { target: 'fridge 1' } });
  });

  it('reads a step action as {tool, params}: params may be left out, other keys are refused', () => {
    expect(ToolCallSchema.parse({ tool: 'look' })).toEqual({ tool: 'look', params: {} });
    expect(ToolCallSchema.parse({ tool: 'go', params: { target: 'sofa 1' }, metadata: {} })).toMatchObject({ tool: 'go' });
    expect(ToolCallSchema.safeParse({ tool: 'go', target: 'sofa 1' }).success).toBe(false);
    expect(ToolCallSchema.safeParse({ params: {} }).success).toBe(false);
  });
});

describe('an OpenEnv action schema of fields', () => {
  it("is one tool, `act`, category submit, whose parameters are the action's fields less metadata", () => {
    const mapping = actionMappingFrom(GUESS_ACTION, { envName: 'guess' }, 'test');
    expect(mapping.form).toBe('fields');
    expect(mapping.tools).toHaveLength(1);
    const [tool] = mapping.tools;
    expect(tool).toMatchObject({ name: 'act', category: 'submit', description: 'Guess the secret number.' });
    expect(Object.keys(tool?.parameters.properties as object)).toEqual(['guess']);
    // The params are checked here, with the server's own limits, before anything is sent.
    const v = new ToolValidator(mapping.tools);
    expect(v.check({ tool: 'act', params: { guess: 50 } })).toBeUndefined();
    expect(v.check({ tool: 'act', params: { guess: 500 } })?.message).toMatch(/params.guess: must be <= 100/);
    expect(v.check({ tool: 'act', params: { guess: 5, metadata: {} } })?.code).toBe('invalid_params');
    expect(actionPayload(mapping, { tool: 'act', params: { guess: 50 } })).toEqual({ guess: 50 });
  });

  it('takes the tool name and category from the options, and a description when the schema has none', () => {
    const { description: _, ...bare } = GUESS_ACTION;
    const [tool] = actionMappingFrom(bare, { envName: 'guess', toolName: 'guess', category: 'execute' }, 'test').tools;
    expect(tool).toMatchObject({ name: 'guess', category: 'execute', description: "Act in the OpenEnv environment 'guess'." });
  });

  it('refuses a schema that cannot be parameters, and a tool-call schema with bad or repeated names, naming the place', () => {
    expect(() => actionMappingFrom({ type: 'string' }, { envName: 'x' }, 'GET http://h/schema $.action')).toThrow(
      'GET http://h/schema $.action: the action schema is not an object schema (type "string"), so it cannot be a tool\'s parameters',
    );
    const branch = (name: string) => ({ type: 'object', properties: { tool: { const: name }, params: { type: 'object' } } });
    expect(() => actionMappingFrom({ oneOf: [branch('a b')] }, { envName: 'x' }, 'S')).toThrow('S $.oneOf[0].properties.tool.const: "a b" is not a tool name');
    expect(() => actionMappingFrom({ oneOf: [branch('a'), branch('a')] }, { envName: 'x' }, 'S')).toThrow("S $.oneOf: tool 'a' appears twice");
    expect(() => actionMappingFrom(GUESS_ACTION, { envName: 'x', toolName: 'no spaces' }, 'S')).toThrow('S: tool name "no spaces" is not a tool name');
  });
});
