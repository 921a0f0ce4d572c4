import type { Rng } from './rng.js';
import type { JsonSchema } from './types.js';

const WORDS = ['42', '-7', '3/4', '0', 'yes', 'no', 'hello', 'answer', 'x', '1 + 2', 'foo bar', 'unknown', '(', '2 * (3'];

function asSchema(value: unknown): JsonSchema {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonSchema) : {};
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/**
 * Draws a random value satisfying the common JSON Schema keywords: `enum`, `const`, `type` (string, number,
 * integer, boolean, array, object, null), `minimum`/`maximum`, `minLength`/`maxLength`, `items`,
 * `properties` and `required` (optional properties are included half of the time).
 *
 * @example
 * ```ts
 * sampleFromSchema({ type: 'integer', minimum: 1, maximum: 3 }, new Rng(1)); // 1, 2 or 3
 * ```
 */
export function sampleFromSchema(schema: JsonSchema, rng: Rng, depth = 0): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return rng.pick(schema.enum as unknown[]);
  if ('const' in schema) return schema.const;
  const type = Array.isArray(schema.type) ? rng.pick(schema.type as unknown[]) : schema.type;
  switch (type) {
    case 'string': {
      const min = numberOr(schema.minLength, 0);
      const max = numberOr(schema.maxLength, 64);
      let text = rng.next() < 0.5 ? rng.pick(WORDS) : String(rng.int(-1000, 1000));
      while (text.length < min) text += 'a';
      return text.slice(0, Math.max(min, max));
    }
    case 'integer': {
      const min = Math.ceil(numberOr(schema.minimum, -100));
      const max = Math.floor(numberOr(schema.maximum, 100));
      return rng.int(min, Math.max(min, max));
    }
    case 'number': {
      const min = numberOr(schema.minimum, -100);
      const max = numberOr(schema.maximum, 100);
      return min + rng.next() * (max - min);
    }
    case 'boolean':
      return rng.next() < 0.5;
    case 'null':
      return null;
    case 'array': {
      if (depth > 4) return [];
      const n = rng.int(numberOr(schema.minItems, 0), Math.max(numberOr(schema.minItems, 0), Math.min(numberOr(schema.maxItems, 3), 3)));
      return Array.from({ length: n }, () => sampleFromSchema(asSchema(schema.items), rng, depth + 1));
    }
    case 'object':
      return depth > 4 ? {} : sampleObject(schema, rng, depth + 1);
    default:
      // No usable type: any small scalar.
      return rng.pick<unknown>([rng.pick(WORDS), rng.int(-10, 10), rng.next() < 0.5]);
  }
}

/** A random object for an object schema: every required property, and each optional one half of the time. */
export function sampleObject(schema: JsonSchema, rng: Rng, depth = 0): Record<string, unknown> {
  const properties = asSchema(schema.properties);
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]).map(String) : []);
  const out: Record<string, unknown> = {};
  for (const [name, sub] of Object.entries(properties)) {
    if (required.has(name) || rng.next() < 0.5) out[name] = sampleFromSchema(asSchema(sub), rng, depth);
  }
  return out;
}
