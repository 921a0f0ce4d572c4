import type { Rng } from './rng.js';
import type { JsonSchema } from './types.js';

/**
 * Draws a value that satisfies a simple JSON Schema (object, string, number, integer, boolean, array,
 * enum, const): all required properties and a random subset of optional ones. Used by the random agent
 * and the environment checker to produce well-formed actions without knowing the tool.
 */
export function sampleFromSchema(schema: JsonSchema, rng: Rng, depth = 0): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return rng.pick(schema.enum as unknown[]);
  if ('const' in schema) return schema.const;
  const type = Array.isArray(schema.type) ? (schema.type[0] as string) : (schema.type as string | undefined);
  switch (type) {
    case 'string':
      return sampleString(schema, rng);
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : 0;
      const max = typeof schema.maximum === 'number' ? schema.maximum : min + 100;
      return type === 'integer' ? rng.int(Math.ceil(min), Math.floor(max)) : min + rng.next() * (max - min);
    }
    case 'boolean':
      return rng.next() < 0.5;
    case 'array': {
      if (depth > 3) return [];
      const items = (schema.items as JsonSchema | undefined) ?? { type: 'string' };
      const n = rng.int(typeof schema.minItems === 'number' ? schema.minItems : 0, 2);
      return Array.from({ length: n }, () => sampleFromSchema(items, rng, depth + 1));
    }
    case 'object':
    default: {
      if (depth > 3) return {};
      const props = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(props)) {
        if (required.has(key) || rng.next() < 0.5) out[key] = sampleFromSchema(sub, rng, depth + 1);
      }
      return out;
    }
  }
}

const WORDS = ['alpha', 'beta', '42', 'x', 'hello world', 'README.md', '1 + 2', 'test', 'velmora', 'population'];

function sampleString(schema: JsonSchema, rng: Rng): string {
  const s = rng.pick(WORDS);
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  return s.length >= min ? s : s.padEnd(min, 'x');
}
