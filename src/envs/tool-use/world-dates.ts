import type { EntityKind, WorldEntity } from './world.js';

/**
 * Calendar dates of the world's events, for the date questions of `gymflow/tool-use-python-v0`: each entity's
 * founding (cities, companies), launch (products) or birth (people) falls on the day of the year below, in the
 * year its year attribute gives (`founded`, `launched`, `born`). The date is composed when asked for, so a
 * randomised world (`randomizeValues`) moves it with the redrawn year. No date is 29 February, so every
 * day exists in every year. Dates are proleptic Gregorian, as Python's `datetime` and JavaScript's `Date` count.
 */

/** The date attribute of each kind of entity, and the year attribute it extends. */
export const DATE_ATTRIBUTES: Readonly<Record<EntityKind, { attribute: string; year: string }>> = {
  city: { attribute: 'founding_date', year: 'founded' },
  company: { attribute: 'founding_date', year: 'founded' },
  product: { attribute: 'launch_date', year: 'launched' },
  person: { attribute: 'birth_date', year: 'born' },
};

/** Other spellings of the date attributes that `lookup` accepts (after its own normalisation). */
export const DATE_ALIASES: Readonly<Record<string, string>> = {
  founding_day: 'founding_date',
  foundation_date: 'founding_date',
  date_founded: 'founding_date',
  founded_on: 'founding_date',
  launch_day: 'launch_date',
  launched_on: 'launch_date',
  release_date: 'launch_date',
  date_launched: 'launch_date',
  birthday: 'birth_date',
  birthdate: 'birth_date',
  date_of_birth: 'birth_date',
  born_on: 'birth_date',
};

/** Month and day (`MM-DD`) of each entity's event, by name (drawn once with a fixed seed). */
export const EVENT_DAYS: Readonly<Record<string, string>> = {
  // cities: founded
  Velmora: '01-12',
  Corrowick: '08-06',
  Saltgrave: '12-11',
  Drummerlin: '06-01',
  Quenhollow: '03-22',
  Ostravel: '01-24',
  Kestrin: '07-22',
  Pellingford: '06-06',
  Marrowgate: '03-23',
  Ybrenn: '04-10',
  'Halvard Crossing': '11-17',
  Sunmere: '01-14',
  Brackenfell: '02-10',
  Emberlyn: '09-05',
  // companies: founded
  'Brightwell Dynamics': '03-16',
  'Vantrel Glassworks': '01-28',
  'Finchmoor Provisions': '05-03',
  'Quillon Motors': '07-13',
  'Saltgrave Mineral Company': '09-29',
  'Helix Loom Textiles': '09-21',
  'Corvane Instruments': '02-14',
  'Frostline Outfitters': '11-25',
  'Cinderbath Works': '08-06',
  'Tallyrand Rail': '11-11',
  // products: launched
  'Zephyr Glider Mk II': '01-03',
  'Azure Carafe': '11-12',
  'Delta Smoked Eel Tin': '10-16',
  'Quillon Barge Q7': '11-14',
  'Tideflake Salt': '01-28',
  'Reedsilk Loom 3': '05-04',
  'Corvane Stargazer': '11-08',
  'Lantern Pocket Watch': '08-14',
  'Polar Shell Parka': '01-04',
  'Frostline Trail Boots': '05-02',
  'Cinder Bath Salts': '09-09',
  'Signal Lamp S4': '12-27',
  // people: born
  'Orla Venn': '07-20',
  'Aldo Quill': '01-30',
  'Hesper Finch': '01-12',
  'Dario Quillon': '10-17',
  'Bette Marsh': '08-12',
  'Nadia Orrin': '09-14',
  'Emil Corvane': '01-01',
  'Sigrun Vale': '09-09',
  'Pim Loxley': '12-01',
  'Corwin Tally': '10-09',
  'Maren Oakes': '05-30',
  'Ivo Brask': '10-19',
};

/** The date (`YYYY-MM-DD`) of an entity's event, or `undefined` when the world has no day for it. */
export function entityDate(entity: WorldEntity): string | undefined {
  const day = Object.hasOwn(EVENT_DAYS, entity.name) ? EVENT_DAYS[entity.name] : undefined;
  const year = entity.attributes[DATE_ATTRIBUTES[entity.kind].year];
  if (day === undefined || typeof year !== 'number') return undefined;
  return `${String(year).padStart(4, '0')}-${day}`;
}

/** Days since 1970-01-01 of a `YYYY-MM-DD` date (negative before), proleptic Gregorian. */
export function dayNumber(date: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const utc = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to 1900–1999.
  utc.setUTCFullYear(y, m - 1, d);
  return Math.round(utc.getTime() / 86_400_000);
}

/** The English name of the weekday of a `YYYY-MM-DD` date. */
export function weekdayName(date: string): string {
  const names = ['Thursday', 'Friday', 'Saturday', 'Sunday', 'Monday', 'Tuesday', 'Wednesday'];
  const n = dayNumber(date);
  return names[((n % 7) + 7) % 7] as string;
}
