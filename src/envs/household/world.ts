import type { Rng } from '../../core/rng.js';

/**
 * The household of `gymflow/household-v0`: rooms with receptacles holding objects, generated from a seed
 * (ALFWorld's scenes, as text). A {@link House} is the generated layout and placement; a {@link World} is one
 * episode's mutable copy of it (what is open, what the agent holds, each object's state).
 */

/** What a receptacle does besides holding things. */
export type Appliance = 'heat' | 'cool' | 'clean';

/** A kind of receptacle: whether it opens and which appliance it is. */
export interface ReceptacleKind {
  openable: boolean;
  appliance?: Appliance;
}

/** Receptacle types (ALFWorld's names). */
export const RECEPTACLE_KINDS = {
  fridge: { openable: true, appliance: 'cool' },
  microwave: { openable: true, appliance: 'heat' },
  stoveburner: { openable: false, appliance: 'heat' },
  sinkbasin: { openable: false, appliance: 'clean' },
  bathtubbasin: { openable: false, appliance: 'clean' },
  countertop: { openable: false },
  cabinet: { openable: true },
  drawer: { openable: true },
  shelf: { openable: false },
  diningtable: { openable: false },
  coffeetable: { openable: false },
  sidetable: { openable: false },
  desk: { openable: false },
  dresser: { openable: false },
  bed: { openable: false },
  sofa: { openable: false },
  armchair: { openable: false },
  garbagecan: { openable: false },
  toilet: { openable: false },
  safe: { openable: true },
} as const satisfies Record<string, ReceptacleKind>;

/** A receptacle type name. */
export type ReceptacleType = keyof typeof RECEPTACLE_KINDS;

/** A kind of object: what can be done to it and where it may lie. */
export interface ObjectKind {
  /** Appliances that change its state (`heat` makes it hot, …). */
  affords: readonly Appliance[];
  /** Can be examined under a desk lamp (ALFWorld's look-at-object-in-light objects). */
  examinable: boolean;
  /** Receptacle types it may start in or be put into. */
  places: readonly ReceptacleType[];
}

const FOOD: readonly ReceptacleType[] = ['countertop', 'diningtable', 'fridge', 'cabinet', 'shelf', 'garbagecan'];
const DISH: readonly ReceptacleType[] = ['countertop', 'diningtable', 'cabinet', 'shelf', 'sinkbasin', 'fridge', 'microwave', 'coffeetable'];
const UTENSIL: readonly ReceptacleType[] = ['countertop', 'diningtable', 'drawer', 'sinkbasin', 'cabinet'];
const SMALL: readonly ReceptacleType[] = ['desk', 'sidetable', 'dresser', 'drawer', 'shelf', 'coffeetable', 'safe', 'diningtable'];
const SOFT: readonly ReceptacleType[] = ['bed', 'sofa', 'armchair'];
const BATH: readonly ReceptacleType[] = ['countertop', 'cabinet', 'shelf', 'toilet', 'bathtubbasin', 'garbagecan'];

/** Object types (ALFWorld's names) with their affordances. */
export const OBJECT_KINDS = {
  apple: { affords: ['heat', 'cool', 'clean'], examinable: false, places: FOOD },
  tomato: { affords: ['heat', 'cool', 'clean'], examinable: false, places: FOOD },
  potato: { affords: ['heat', 'cool', 'clean'], examinable: false, places: FOOD },
  egg: { affords: ['heat', 'cool'], examinable: false, places: FOOD },
  lettuce: { affords: ['cool', 'clean'], examinable: false, places: FOOD },
  bread: { affords: ['heat', 'cool'], examinable: false, places: FOOD },
  mug: { affords: ['heat', 'cool', 'clean'], examinable: true, places: [...DISH, 'desk'] },
  cup: { affords: ['heat', 'cool', 'clean'], examinable: false, places: DISH },
  plate: { affords: ['heat', 'cool', 'clean'], examinable: false, places: DISH },
  bowl: { affords: ['heat', 'cool', 'clean'], examinable: true, places: DISH },
  pan: { affords: ['cool', 'clean'], examinable: false, places: ['countertop', 'stoveburner', 'cabinet', 'sinkbasin'] },
  pot: { affords: ['cool', 'clean'], examinable: false, places: ['countertop', 'stoveburner', 'cabinet', 'shelf'] },
  knife: { affords: ['clean'], examinable: false, places: UTENSIL },
  fork: { affords: ['clean'], examinable: false, places: UTENSIL },
  spoon: { affords: ['clean'], examinable: false, places: UTENSIL },
  spatula: { affords: ['clean'], examinable: false, places: UTENSIL },
  ladle: { affords: ['clean'], examinable: false, places: UTENSIL },
  dishsponge: { affords: ['clean'], examinable: false, places: ['countertop', 'sinkbasin', 'cabinet', 'shelf'] },
  cloth: { affords: ['clean'], examinable: false, places: BATH },
  soapbar: { affords: ['clean'], examinable: false, places: BATH },
  spraybottle: { affords: [], examinable: false, places: BATH },
  toiletpaper: { affords: [], examinable: false, places: BATH },
  book: { affords: [], examinable: true, places: [...SMALL, ...SOFT] },
  cd: { affords: [], examinable: true, places: SMALL },
  pen: { affords: [], examinable: true, places: SMALL },
  pencil: { affords: [], examinable: true, places: SMALL },
  keychain: { affords: [], examinable: true, places: SMALL },
  creditcard: { affords: [], examinable: true, places: SMALL },
  cellphone: { affords: [], examinable: true, places: [...SMALL, ...SOFT] },
  alarmclock: { affords: [], examinable: true, places: ['desk', 'sidetable', 'dresser', 'shelf'] },
  watch: { affords: [], examinable: true, places: SMALL },
  statue: { affords: [], examinable: true, places: ['shelf', 'coffeetable', 'dresser', 'sidetable', 'desk', 'diningtable'] },
  vase: { affords: [], examinable: true, places: ['shelf', 'coffeetable', 'dresser', 'sidetable', 'diningtable', 'safe'] },
  remotecontrol: { affords: [], examinable: true, places: ['coffeetable', 'sofa', 'armchair', 'sidetable', 'dresser'] },
  pillow: { affords: [], examinable: true, places: SOFT },
  laptop: { affords: [], examinable: true, places: ['desk', 'bed', 'sofa', 'coffeetable', 'diningtable'] },
  newspaper: { affords: [], examinable: true, places: ['coffeetable', 'sofa', 'armchair', 'sidetable', 'diningtable', 'garbagecan'] },
} as const satisfies Record<string, ObjectKind>;

/** An object type name. */
export type ObjectType = keyof typeof OBJECT_KINDS;

/** The room types a house is made of. */
export type RoomType = 'kitchen' | 'livingroom' | 'bedroom' | 'bathroom' | 'office';

/** How many receptacles of each type a room template gets: `[type, min, max]`. */
type Furnishing = readonly [ReceptacleType, number, number];

/**
 * Room templates per room type. A house draws one template per room and then the number of each
 * receptacle; the splits use disjoint templates (see `tasks.ts`), so a held-out room is furnished in a
 * way no training room is (ALFWorld's unseen scenes).
 */
export const ROOM_TEMPLATES: Readonly<Record<RoomType, readonly (readonly Furnishing[])[]>> = {
  kitchen: [
    [['fridge', 1, 1], ['microwave', 1, 1], ['stoveburner', 2, 4], ['sinkbasin', 1, 1], ['countertop', 1, 2], ['cabinet', 3, 6], ['drawer', 1, 3], ['garbagecan', 1, 1]],
    [['fridge', 1, 1], ['microwave', 1, 1], ['stoveburner', 1, 2], ['sinkbasin', 1, 2], ['countertop', 2, 3], ['cabinet', 2, 4], ['shelf', 1, 2], ['diningtable', 1, 1]],
    [['fridge', 1, 1], ['microwave', 1, 1], ['stoveburner', 2, 2], ['sinkbasin', 1, 1], ['countertop', 1, 1], ['drawer', 2, 5], ['diningtable', 1, 1], ['garbagecan', 1, 1]],
    [['fridge', 1, 1], ['microwave', 1, 1], ['stoveburner', 3, 4], ['sinkbasin', 1, 1], ['countertop', 2, 2], ['cabinet', 4, 7], ['shelf', 1, 1]],
    [['fridge', 1, 1], ['microwave', 1, 1], ['stoveburner', 1, 1], ['sinkbasin', 2, 2], ['countertop', 3, 3], ['shelf', 2, 3], ['drawer', 1, 2], ['garbagecan', 1, 1]],
    [['fridge', 1, 1], ['microwave', 1, 1], ['stoveburner', 2, 3], ['sinkbasin', 1, 1], ['diningtable', 1, 2], ['cabinet', 1, 2], ['safe', 1, 1]],
  ],
  livingroom: [
    [['sofa', 1, 1], ['coffeetable', 1, 1], ['sidetable', 1, 2], ['shelf', 1, 3]],
    [['sofa', 1, 2], ['armchair', 1, 2], ['coffeetable', 1, 1], ['drawer', 1, 2]],
    [['sofa', 1, 1], ['armchair', 1, 1], ['diningtable', 1, 1], ['shelf', 2, 4], ['garbagecan', 1, 1]],
    [['armchair', 2, 2], ['coffeetable', 1, 2], ['cabinet', 1, 3], ['sidetable', 1, 1]],
    [['sofa', 1, 1], ['coffeetable', 2, 2], ['safe', 1, 1], ['shelf', 1, 1]],
    [['armchair', 1, 3], ['sidetable', 2, 3], ['dresser', 1, 1]],
  ],
  bedroom: [
    [['bed', 1, 1], ['desk', 1, 1], ['sidetable', 1, 2], ['drawer', 2, 4], ['garbagecan', 1, 1]],
    [['bed', 1, 1], ['dresser', 1, 1], ['sidetable', 1, 1], ['shelf', 1, 3]],
    [['bed', 1, 1], ['desk', 1, 1], ['dresser', 1, 1], ['drawer', 1, 2], ['safe', 1, 1]],
    [['bed', 1, 2], ['sidetable', 2, 2], ['shelf', 2, 4], ['armchair', 1, 1]],
    [['bed', 1, 1], ['desk', 1, 1], ['shelf', 1, 1], ['cabinet', 1, 2]],
    [['bed', 1, 1], ['dresser', 1, 1], ['drawer', 3, 5], ['garbagecan', 1, 1]],
  ],
  bathroom: [
    [['sinkbasin', 1, 1], ['bathtubbasin', 1, 1], ['toilet', 1, 1], ['countertop', 1, 1], ['cabinet', 1, 3]],
    [['sinkbasin', 1, 2], ['toilet', 1, 1], ['shelf', 1, 2], ['garbagecan', 1, 1]],
    [['sinkbasin', 1, 1], ['bathtubbasin', 1, 1], ['toilet', 1, 1], ['drawer', 1, 2]],
    [['sinkbasin', 2, 2], ['toilet', 1, 1], ['countertop', 1, 1], ['shelf', 1, 1], ['garbagecan', 1, 1]],
    [['sinkbasin', 1, 1], ['toilet', 1, 1], ['cabinet', 2, 4], ['bathtubbasin', 1, 1]],
    [['sinkbasin', 1, 1], ['toilet', 1, 1], ['dresser', 1, 1], ['shelf', 2, 2]],
  ],
  office: [
    [['desk', 1, 1], ['shelf', 2, 3], ['drawer', 1, 3], ['garbagecan', 1, 1]],
    [['desk', 1, 2], ['sidetable', 1, 1], ['safe', 1, 1], ['armchair', 1, 1]],
    [['desk', 1, 1], ['cabinet', 1, 2], ['coffeetable', 1, 1], ['shelf', 1, 1]],
    [['desk', 1, 1], ['dresser', 1, 1], ['drawer', 2, 3], ['sofa', 1, 1]],
    [['desk', 2, 2], ['shelf', 1, 2], ['garbagecan', 1, 1]],
    [['desk', 1, 1], ['sidetable', 2, 2], ['cabinet', 1, 1], ['armchair', 1, 1]],
  ],
};

/** Where a desk lamp may stand. */
export const LAMP_PLACES: readonly ReceptacleType[] = ['desk', 'sidetable', 'dresser'];

/** A receptacle of a house: `cabinet 3` in the kitchen. */
export interface ReceptacleSpec {
  name: string;
  type: ReceptacleType;
  room: RoomType;
}

/** An object of a house and where it starts. `desklamp` objects are fixed lamps, not takeable. */
export interface ObjectSpec {
  name: string;
  type: ObjectType | 'desklamp';
  /** The receptacle it starts in (its name). */
  at: string;
}

/** A generated house: rooms (with the template each used), receptacles, objects. Immutable. */
export interface House {
  rooms: readonly { type: RoomType; template: number }[];
  receptacles: readonly ReceptacleSpec[];
  objects: readonly ObjectSpec[];
}

/**
 * Generates a house: a kitchen plus a bedroom or an office plus up to one more room, each furnished from a
 * template `templateFor(room, rng)` chooses; then one desk lamp and 10–16 objects on places their kind allows.
 */
export function generateHouse(rng: Rng, templateFor: (room: RoomType, rng: Rng) => number): House {
  const roomTypes: RoomType[] = ['kitchen', rng.pick<RoomType>(['bedroom', 'office'])];
  const extra = rng.pick<RoomType | undefined>(['livingroom', 'bathroom', undefined]);
  if (extra) roomTypes.push(extra);
  const counters = new Map<string, number>();
  const numbered = (type: string): string => {
    const n = (counters.get(type) ?? 0) + 1;
    counters.set(type, n);
    return `${type} ${n}`;
  };
  const rooms: { type: RoomType; template: number }[] = [];
  const receptacles: ReceptacleSpec[] = [];
  for (const room of roomTypes) {
    const template = templateFor(room, rng);
    rooms.push({ type: room, template });
    for (const [type, min, max] of ROOM_TEMPLATES[room][template] ?? []) {
      const n = rng.int(min, max);
      for (let i = 0; i < n; i++) receptacles.push({ name: numbered(type), type, room });
    }
  }
  const objects: ObjectSpec[] = [];
  const lampPlaces = receptacles.filter((r) => (LAMP_PLACES as readonly string[]).includes(r.type));
  // Every bedroom and office template has a desk, side table or dresser.
  if (lampPlaces.length > 0) objects.push({ name: numbered('desklamp'), type: 'desklamp', at: rng.pick(lampPlaces).name });
  const types = Object.keys(OBJECT_KINDS) as ObjectType[];
  const count = rng.int(10, 16);
  for (let tries = 0; objects.length < count + 1 && tries < 200; tries++) {
    const type = rng.pick(types);
    const places = receptacles.filter((r) => (OBJECT_KINDS[type].places as readonly string[]).includes(r.type));
    if (places.length === 0) continue;
    objects.push({ name: numbered(type), type, at: rng.pick(places).name });
  }
  return { rooms, receptacles, objects };
}

/** A layout's signature: rooms and their receptacles in order (two houses with the same one look alike). */
export function layoutSignature(house: House): string {
  return house.rooms.map((room) => `${room.type}:${house.receptacles.filter((r) => r.room === room.type).map((r) => r.name).join(',')}`).join('|');
}

/** What the agent sees first (ALFWorld's opening): the rooms and their receptacles, not what they hold. */
export function describeHouse(house: House): string {
  const rooms = house.rooms.map((room) => `The ${ROOM_NAMES[room.type]} has ${listThings(house.receptacles.filter((r) => r.room === room.type).map((r) => r.name))}.`);
  return `You are in the middle of a house. ${rooms.join(' ')}`;
}

/** An object in an episode: where it is and its state. */
export interface WorldObject {
  name: string;
  type: ObjectType | 'desklamp';
  /** The receptacle holding it, or `undefined` while the agent holds it. */
  at: string | undefined;
  clean: boolean;
  hot: boolean;
  cool: boolean;
  /** Lamps only. */
  on: boolean;
}

/** A receptacle in an episode. */
export interface WorldReceptacle {
  name: string;
  type: ReceptacleType;
  room: RoomType;
  openable: boolean;
  open: boolean;
  appliance: Appliance | undefined;
  /** Objects in it, in the order they were put there. */
  contents: WorldObject[];
}

/** One episode's mutable state of a house. */
export interface World {
  rooms: readonly RoomType[];
  receptacles: Map<string, WorldReceptacle>;
  objects: Map<string, WorldObject>;
  /** The receptacle the agent stands at, a room it stands in, or the middle of the house (`undefined`). */
  location: { kind: 'receptacle'; name: string } | { kind: 'room'; room: RoomType } | undefined;
  held: WorldObject | undefined;
}

/** A fresh episode state for a house: everything closed, nothing held, every object in its place. */
export function buildWorld(house: House): World {
  const receptacles = new Map<string, WorldReceptacle>();
  for (const r of house.receptacles) {
    const kind: ReceptacleKind = RECEPTACLE_KINDS[r.type];
    receptacles.set(r.name, { name: r.name, type: r.type, room: r.room, openable: kind.openable, open: false, appliance: kind.appliance, contents: [] });
  }
  const objects = new Map<string, WorldObject>();
  for (const o of house.objects) {
    const obj: WorldObject = { name: o.name, type: o.type, at: o.at, clean: false, hot: false, cool: false, on: false };
    objects.set(o.name, obj);
    receptacles.get(o.at)?.contents.push(obj);
  }
  return { rooms: house.rooms.map((r) => r.type), receptacles, objects, location: undefined, held: undefined };
}

/** `a apple 1, a mug 2, and a knife 1` (ALFWorld's list style, articles included). */
export function listThings(names: readonly string[]): string {
  if (names.length === 0) return 'nothing';
  const items = names.map((n) => `a ${n}`);
  if (items.length === 1) return items[0] as string;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1] as string}`;
}

/** Room names as the text shows them. */
export const ROOM_NAMES: Readonly<Record<RoomType, string>> = {
  kitchen: 'kitchen',
  livingroom: 'living room',
  bedroom: 'bedroom',
  bathroom: 'bathroom',
  office: 'office',
};
