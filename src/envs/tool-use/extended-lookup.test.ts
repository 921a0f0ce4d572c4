import { describe, expect, it } from 'vitest';
import { extendedLookup, lookupTable } from './extended-lookup.js';
import { defaultKnowledgeBase } from './knowledge-base.js';

const kb = defaultKnowledgeBase();

describe('extended lookup (gymflow/tool-use-python-v0)', () => {
  it('returns a collection as a table of the columns asked for, one row per entity in world order', () => {
    const text = extendedLookup(kb, 'cities', 'region, population');
    const lines = text.split('\n');
    expect(lines.slice(0, 3)).toEqual(['Table of 14 cities:', 'name | region | population', 'Velmora | Ashen Delta | 48200']);
    expect(lines).toHaveLength(16);
    // Prices keep two decimals, no units anywhere; the collection and column names take aliases.
    expect(extendedLookup(kb, 'Products', 'cost; weight').split('\n')[2]).toBe('Zephyr Glider Mk II | 185000.00 | 640');
    expect(extendedLookup(kb, 'persons', 'birthday').split('\n')[2]).toBe('Orla Venn | 1889-07-20');
    expect(lookupTable(kb, 'company', 'all').split('\n')[1]).toBe('name | industry | founded | headquarters | employees | founder | founding_date');
    expect(lookupTable(kb, 'company', 'name, employees').split('\n')[1]).toBe('name | employees');
  });

  it('names the known columns for an unknown one', () => {
    expect(extendedLookup(kb, 'people', 'born, shoe_size')).toBe(
      "The people have no attribute 'shoe_size'. Known attributes: occupation, born, birthplace, birth_date (or \"all\").",
    );
  });

  it('reads dates, and answers everything else as the knowledge base does', () => {
    expect(extendedLookup(kb, 'Brightwell Dynamics', 'founding date')).toBe('Brightwell Dynamics (company) — founding_date: 1921-03-16');
    expect(extendedLookup(kb, 'Azure Carafe', 'release_date')).toBe('Azure Carafe (product) — launch_date: 1901-11-12');
    expect(extendedLookup(kb, 'Velmora', 'population')).toBe(kb.lookup('Velmora', 'population').text);
    expect(extendedLookup(kb, 'Velmor', 'population')).toBe(kb.lookup('Velmor', 'population').text);
    expect(extendedLookup(kb, 'Orla Venn', 'height')).toBe("Orla Venn (person) has no attribute 'height'. Known attributes: occupation, born, birthplace, birth_date.");
  });
});
