import { TaskError } from '../../core/errors.js';
import { ATTRIBUTES, ENTITIES, KIND_ATTRIBUTES, type AttributeValue, type EntityKind, type WorldEntity } from './world.js';

/**
 * The exact-lookup knowledge base behind the `lookup` tool: entity → attribute → value. Names and
 * attributes are matched case-insensitively; a miss is an informative answer with suggestions, never an
 * error.
 */

/** Other spellings of attribute names that `lookup` accepts. */
export const ATTRIBUTE_ALIASES: Readonly<Record<string, string>> = {
  area: 'area_km2',
  elevation: 'elevation_m',
  altitude: 'elevation_m',
  weight: 'weight_kg',
  hq: 'headquarters',
  headquartered: 'headquarters',
  founding_year: 'founded',
  year_founded: 'founded',
  foundation: 'founded',
  birth_year: 'born',
  year_of_birth: 'born',
  birth_place: 'birthplace',
  place_of_birth: 'birthplace',
  manufacturer: 'maker',
  made_by: 'maker',
  staff: 'employees',
  cost: 'price',
  launch_year: 'launched',
  job: 'occupation',
  profession: 'occupation',
};

/** The result of a lookup, with the observation text the tool shows. */
export type LookupResult =
  | { status: 'found'; entity: WorldEntity; attribute: string; value: AttributeValue; text: string }
  | { status: 'unknown_entity'; query: string; suggestions: string[]; text: string }
  | { status: 'unknown_attribute'; entity: WorldEntity; attribute: string; known: readonly string[]; text: string };

/** Lower case, NFKC, single spaces, no surrounding quotes, no leading "the", no trailing "(kind)". */
export function normalizeName(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .trim()
    .replace(/^["'`]+|["'`.]+$/g, '')
    .replace(/\s*\((city|company|product|person)\)$/, '')
    .replace(/^the\s+/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** An attribute name as `lookup` reads it: lower case, `_` for spaces and dashes, {@link ATTRIBUTE_ALIASES} resolved. */
export function normalizeAttribute(attribute: string): string {
  const key = attribute.normalize('NFKC').toLowerCase().trim().replace(/[\s-]+/g, '_');
  return Object.hasOwn(ATTRIBUTE_ALIASES, key) ? (ATTRIBUTE_ALIASES[key] ?? key) : key;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** A value as `lookup` prints it: prices with two decimals, units after numbers. */
export function formatValue(attribute: string, value: AttributeValue): string {
  const meta = Object.hasOwn(ATTRIBUTES, attribute) ? ATTRIBUTES[attribute] : undefined;
  if (typeof value === 'string') return value;
  const text = meta?.decimals !== undefined ? value.toFixed(meta.decimals) : String(value);
  return meta?.unit ? `${text} ${meta.unit}` : text;
}

/**
 * An in-memory knowledge base over a set of entities.
 *
 * @example
 * ```ts
 * const kb = defaultKnowledgeBase();
 * kb.lookup('velmora', 'population').text; // 'Velmora (city) — population: 48200'
 * kb.lookup('Velmor', 'population').text;  // "No entity named 'Velmor' … Did you mean: Velmora?"
 * ```
 */
export class KnowledgeBase {
  private readonly byName = new Map<string, WorldEntity>();

  /** Indexes `entities` by normalised name. */
  constructor(readonly entities: readonly WorldEntity[]) {
    for (const entity of entities) this.byName.set(normalizeName(entity.name), entity);
  }

  /** The entity with this name (matched as {@link normalizeName} does), if any. */
  get(name: string): WorldEntity | undefined {
    return this.byName.get(normalizeName(name));
  }

  /** Entities of one kind (all when omitted), in world order. */
  list(kind?: EntityKind): WorldEntity[] {
    return this.entities.filter((e) => kind === undefined || e.kind === kind);
  }

  /** What the `lookup` tool answers for `entity`/`attribute`. */
  lookup(entityName: string, attributeName: string): LookupResult {
    const entity = this.get(entityName);
    if (!entity) {
      const suggestions = this.suggest(entityName);
      const hint = suggestions.length ? `Did you mean: ${suggestions.join(', ')}?` : 'Try search to find the right name.';
      return {
        status: 'unknown_entity',
        query: entityName,
        suggestions,
        text: `No entity named '${entityName}' in the knowledge base. ${hint}`,
      };
    }
    const attribute = normalizeAttribute(attributeName);
    // hasOwn: `constructor` or `__proto__` must not reach Object.prototype.
    const value = Object.hasOwn(entity.attributes, attribute) ? entity.attributes[attribute] : undefined;
    const label = `${entity.name} (${entity.kind})`;
    if (value === undefined) {
      const known = KIND_ATTRIBUTES[entity.kind];
      return {
        status: 'unknown_attribute',
        entity,
        attribute: attributeName,
        known,
        text: `${label} has no attribute '${attributeName}'. Known attributes: ${known.join(', ')}.`,
      };
    }
    return { status: 'found', entity, attribute, value, text: `${label} — ${attribute}: ${formatValue(attribute, value)}` };
  }

  /** The value of an attribute, for task generation. Throws a {@link TaskError} when missing. */
  value(entityName: string, attribute: string): AttributeValue {
    const attributes = this.get(entityName)?.attributes;
    const value = attributes && Object.hasOwn(attributes, attribute) ? attributes[attribute] : undefined;
    if (value === undefined) throw new TaskError(`tool-use: knowledge base has no '${attribute}' for '${entityName}'`);
    return value;
  }

  /** Up to three known names close to `query` (edit distance, containment or a shared word). */
  suggest(query: string): string[] {
    const q = normalizeName(query);
    if (!q) return [];
    const words = new Set(q.split(' ').filter((w) => w.length > 2));
    const scored: { name: string; score: number }[] = [];
    for (const entity of this.entities) {
      const n = normalizeName(entity.name);
      const distance = editDistance(q, n);
      const related =
        distance <= Math.max(2, Math.floor(n.length / 3)) ||
        n.includes(q) ||
        q.includes(n) ||
        n.split(' ').some((w) => words.has(w));
      if (related) scored.push({ name: entity.name, score: distance });
    }
    return scored
      .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name))
      .slice(0, 3)
      .map((s) => s.name);
  }
}

let shared: KnowledgeBase | undefined;

/** The knowledge base of the bundled world, built once per process. */
export function defaultKnowledgeBase(): KnowledgeBase {
  shared ??= new KnowledgeBase(ENTITIES);
  return shared;
}
