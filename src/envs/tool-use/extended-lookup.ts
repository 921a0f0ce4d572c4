import { normalizeAttribute, normalizeName, type KnowledgeBase } from './knowledge-base.js';
import { ATTRIBUTES, KIND_ATTRIBUTES, type AttributeValue, type EntityKind, type WorldEntity } from './world.js';
import { DATE_ALIASES, DATE_ATTRIBUTES, entityDate } from './world-dates.js';

/**
 * What `lookup` reads in `gymflow/tool-use-python-v0`, on top of the knowledge base's entity → attribute facts:
 *
 * - **dates**: `birth_date` (people), `founding_date` (cities, companies), `launch_date` (products), as
 *   `YYYY-MM-DD` (`world-dates.ts`); `Orla Venn (person) — birth_date: 1889-07-20`;
 * - **tables**: a collection (`cities`, `companies`, `products`, `people`) instead of an entity, with the
 *   attributes wanted, comma-separated (or `all`), returns one row per entity, `|`-separated, numbers without
 *   units (prices with 2 decimals):
 *
 * ```text
 * Table of 14 cities:
 * name | region | population
 * Velmora | Ashen Delta | 48200
 * …
 * ```
 *
 * Everything else is the knowledge base's own answer. `gymflow/tool-use-v0` does not use this module: its
 * lookups, and so its tasks' results, are unchanged.
 */

/** Collection names `lookup` accepts, by the kind of entity they list. */
export const COLLECTIONS: Readonly<Record<EntityKind, { name: string; aliases: readonly string[] }>> = {
  city: { name: 'cities', aliases: ['cities', 'city', 'all cities'] },
  company: { name: 'companies', aliases: ['companies', 'company', 'all companies'] },
  product: { name: 'products', aliases: ['products', 'product', 'all products'] },
  person: { name: 'people', aliases: ['people', 'persons', 'person', 'all people'] },
};

/** The attributes of a kind in the python variant: the knowledge base's, then the date. */
export function extendedAttributes(kind: EntityKind): string[] {
  return [...KIND_ATTRIBUTES[kind], DATE_ATTRIBUTES[kind].attribute];
}

function collectionKind(name: string): EntityKind | undefined {
  const n = normalizeName(name);
  return (Object.keys(COLLECTIONS) as EntityKind[]).find((k) => COLLECTIONS[k].aliases.includes(n));
}

function attributeOf(kind: EntityKind, name: string): string | undefined {
  const key = normalizeAttribute(name);
  const resolved = Object.hasOwn(DATE_ALIASES, key) ? (DATE_ALIASES[key] as string) : key;
  return extendedAttributes(kind).includes(resolved) ? resolved : undefined;
}

/** An entity's value of an attribute of the python variant (a date is composed from its year). */
export function extendedValue(entity: WorldEntity, attribute: string): AttributeValue | undefined {
  if (attribute === DATE_ATTRIBUTES[entity.kind].attribute) return entityDate(entity);
  return Object.hasOwn(entity.attributes, attribute) ? entity.attributes[attribute] : undefined;
}

/** A table cell: the value without its unit (prices keep their 2 decimals). */
function cell(attribute: string, value: AttributeValue | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  const decimals = Object.hasOwn(ATTRIBUTES, attribute) ? ATTRIBUTES[attribute]?.decimals : undefined;
  return decimals === undefined ? String(value) : value.toFixed(decimals);
}

/** The table of a collection (see the module comment), or the reason there is none. */
export function lookupTable(kb: KnowledgeBase, kind: EntityKind, attributeList: string): string {
  const { name } = COLLECTIONS[kind];
  const known = extendedAttributes(kind);
  const asked = attributeList
    .split(/[,;]/)
    .map((a) => a.trim())
    .filter((a) => a.length > 0 && normalizeAttribute(a) !== 'name');
  let columns: string[];
  if (asked.length === 1 && ['all', '*', 'everything'].includes(normalizeAttribute(asked[0] as string))) columns = known;
  else {
    columns = [];
    for (const a of asked) {
      const attribute = attributeOf(kind, a);
      if (attribute === undefined) return `The ${name} have no attribute '${a}'. Known attributes: ${known.join(', ')} (or "all").`;
      if (!columns.includes(attribute)) columns.push(attribute);
    }
  }
  const rows = kb.list(kind).map((e) => [e.name, ...columns.map((c) => cell(c, extendedValue(e, c)))].join(' | '));
  return [`Table of ${rows.length} ${name}:`, ['name', ...columns].join(' | '), ...rows].join('\n');
}

/**
 * What `lookup` answers in the python variant: a table for a collection, a date for a date attribute, the
 * knowledge base's answer otherwise (its miss for an unknown attribute lists the date attribute too).
 */
export function extendedLookup(kb: KnowledgeBase, entityName: string, attributeName: string): string {
  const kind = kb.get(entityName) === undefined ? collectionKind(entityName) : undefined;
  if (kind !== undefined) return lookupTable(kb, kind, attributeName);
  const entity = kb.get(entityName);
  if (entity !== undefined) {
    const attribute = attributeOf(entity.kind, attributeName);
    if (attribute === DATE_ATTRIBUTES[entity.kind].attribute) {
      const date = entityDate(entity);
      if (date !== undefined) return `${entity.name} (${entity.kind}) — ${attribute}: ${date}`;
    }
  }
  const result = kb.lookup(entityName, attributeName);
  if (result.status !== 'unknown_attribute') return result.text;
  const known = extendedAttributes(result.entity.kind);
  return `${result.entity.name} (${result.entity.kind}) has no attribute '${attributeName}'. Known attributes: ${known.join(', ')}.`;
}

