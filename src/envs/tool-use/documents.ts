import type { SearchDocument } from './search-index.js';
import { ENTITIES, TOPIC_DOCUMENTS, type WorldEntity } from './world.js';

/**
 * The document collection behind the `search` tool: one short article per entity of the world, written
 * from the same facts as the knowledge base, plus background articles on regions, events and landmarks.
 */

/** A searchable document; `tag` is shown in the title's parentheses (`Velmora (city)`). */
export interface WorldDocument extends SearchDocument {
  tag: string;
}

function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

function grouped(n: number): string {
  // An integer's en-US grouping without Intl, whose first use takes tens of milliseconds (this runs when the
  // module loads, also for `gymflow envs`); other numbers as before.
  return Number.isSafeInteger(n) ? String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',') : n.toLocaleString('en-US');
}

function body(e: WorldEntity): string {
  const a = e.attributes;
  const opening = `${e.name} is ${e.clue}. ${e.extra}`;
  switch (e.kind) {
    case 'city':
      return `${opening} It lies in the ${a.region} region, was founded in ${a.founded} and has a population of ${grouped(Number(a.population))}. The city covers ${a.area_km2} km² at an elevation of ${a.elevation_m} m.`;
    case 'company':
      return `${opening} Founded in ${a.founded} by ${a.founder}, the company works in ${a.industry}, is headquartered in ${a.headquarters} and employs ${grouped(Number(a.employees))} people.`;
    case 'product':
      return `${opening} Made by ${a.maker} and launched in ${a.launched}, it sells for ${Number(a.price).toFixed(2)} crowns and weighs ${a.weight_kg} kg.`;
    case 'person':
      return `${opening} Born in ${a.born} in ${a.birthplace}, ${e.name} worked as ${article(String(a.occupation))} ${a.occupation}.`;
  }
}

/** The documents of a world: its entity articles first (in world order), then the background articles. */
export function worldDocuments(entities: readonly WorldEntity[]): WorldDocument[] {
  return [
    ...entities.map((e) => ({ id: `${e.kind}-${slug(e.name)}`, title: e.name, tag: e.kind, body: body(e) })),
    ...TOPIC_DOCUMENTS.map((d) => ({ id: d.id, title: d.title, tag: d.tag, body: d.body })),
  ];
}

/** Every document of the bundled world. */
export const WORLD_DOCUMENTS: readonly WorldDocument[] = worldDocuments(ENTITIES);
