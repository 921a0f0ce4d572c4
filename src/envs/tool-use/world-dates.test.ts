import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/rng.js';
import { randomizeEntities } from './randomize.js';
import { ENTITIES } from './world.js';
import { DATE_ATTRIBUTES, dayNumber, entityDate, EVENT_DAYS, weekdayName } from './world-dates.js';

describe('world dates', () => {
  it('gives every entity a real day, never 29 February, named by its kind', () => {
    expect(Object.keys(EVENT_DAYS).sort()).toEqual(ENTITIES.map((e) => e.name).sort());
    for (const day of Object.values(EVENT_DAYS)) {
      expect(day).toMatch(/^(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/);
      expect(day).not.toBe('02-29');
    }
    const orla = ENTITIES.find((e) => e.name === 'Orla Venn');
    expect(orla && entityDate(orla)).toBe('1889-07-20');
    expect(DATE_ATTRIBUTES.person.attribute).toBe('birth_date');
  });

  it("moves a date with its entity's redrawn year", () => {
    const world = randomizeEntities(ENTITIES, new Rng(3));
    for (const e of world) {
      const year = e.attributes[DATE_ATTRIBUTES[e.kind].year];
      expect(entityDate(e)).toBe(`${String(year)}-${EVENT_DAYS[e.name] ?? ''}`);
    }
  });

  it("counts days and names weekdays as Python's datetime does (proleptic Gregorian)", () => {
    // Values from CPython: (date(1921, 3, 16) - date(1889, 7, 20)).days, date(…).strftime('%A').
    expect(dayNumber('1921-03-16') - dayNumber('1889-07-20')).toBe(11561);
    expect(dayNumber('1970-01-01')).toBe(0);
    expect(dayNumber('1000-01-01')).toBe(-354285);
    expect(dayNumber('2000-03-01') - dayNumber('2000-02-28')).toBe(2);
    expect(dayNumber('1900-03-01') - dayNumber('1900-02-28')).toBe(1);
    expect([weekdayName('1889-07-20'), weekdayName('1312-01-12'), weekdayName('2000-01-01'), weekdayName('1066-10-14')]).toEqual(['Saturday', 'Tuesday', 'Saturday', 'Sunday']);
  });
});
