import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { defaultKnowledgeBase, editDistance, normalizeName } from './knowledge-base.js';
import { ENTITIES, KIND_ATTRIBUTES } from './world.js';

const kb = defaultKnowledgeBase();

describe('KnowledgeBase', () => {
  it('looks up attributes case-insensitively, with units', () => {
    expect(kb.lookup('velmora', 'Population').text).toBe('Velmora (city) — population: 48200');
    expect(kb.lookup('The Azure Carafe', 'price').text).toBe('Azure Carafe (product) — price: 42.50 crowns');
    expect(kb.lookup('Brightwell Dynamics', 'hq')).toMatchObject({ status: 'found', value: 'Drummerlin' });
  });

  it('answers unknown entities with suggestions instead of failing', () => {
    const miss = kb.lookup('Velmor', 'population');
    expect(miss).toMatchObject({ status: 'unknown_entity', suggestions: ['Velmora'] });
    expect(miss.text).toBe("No entity named 'Velmor' in the knowledge base. Did you mean: Velmora?");
    expect(kb.lookup('Brightwell', 'founded').text).toContain('Brightwell Dynamics');
    expect(kb.lookup('Zanzibar', 'population').text).toContain('Try search');
  });

  it('answers unknown attributes with the known ones', () => {
    const miss = kb.lookup('Velmora', 'gdp');
    expect(miss.status).toBe('unknown_attribute');
    expect(miss.text).toBe("Velmora (city) has no attribute 'gdp'. Known attributes: region, population, founded, area_km2, elevation_m.");
  });

  it('is consistent: every entity has its kind’s attributes and links resolve', () => {
    expect(new Set(ENTITIES.map((e) => normalizeName(e.name))).size).toBe(ENTITIES.length);
    for (const e of ENTITIES) {
      expect(Object.keys(e.attributes).sort()).toEqual([...KIND_ATTRIBUTES[e.kind]].sort());
      for (const link of ['headquarters', 'founder', 'maker', 'birthplace']) {
        const target = e.attributes[link];
        if (target !== undefined) expect(kb.get(String(target)), `${e.name}.${link}`).toBeDefined();
      }
    }
    expect(() => kb.value('Velmora', 'price')).toThrow(TaskError);
  });

  it('computes edit distance', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });
});

describe('KnowledgeBase hardening', () => {
  it('does not expose Object.prototype members as attributes', () => {
    for (const attribute of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(kb.lookup('Velmora', attribute).status).toBe('unknown_attribute');
    }
    expect(kb.lookup('constructor', 'population').status).toBe('unknown_entity');
  });
});
