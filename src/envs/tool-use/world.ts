/**
 * The fictional world behind `gymflow/tool-use-v0`: cities, companies, products and people with
 * invented facts, so no answer can be recalled from real-world knowledge. The knowledge base
 * (`lookup`) and the document collection (`search`) are both built from this one module, so they never
 * disagree. Prices are in crowns, the world's currency.
 */

/** The kinds of entity the knowledge base holds. */
export type EntityKind = 'city' | 'company' | 'product' | 'person';

/** An attribute's value: a number, a string, or the name of another entity. */
export type AttributeValue = number | string;

/** One entity of the world. */
export interface WorldEntity {
  name: string;
  kind: EntityKind;
  /**
   * A description unique to this entity, used by search tasks instead of the name
   * ("a river port famous for its blue glassworks"). It opens the entity's document.
   */
  clue: string;
  /** One more sentence of colour for its document. */
  extra: string;
  attributes: Readonly<Record<string, AttributeValue>>;
}

/** How an attribute is typed, worded and printed. */
export interface AttributeMeta {
  /** `number` (amounts), `year`, `string` (free text) or `entity` (the name of another entity). */
  type: 'number' | 'year' | 'string' | 'entity';
  /** For `entity` attributes: the kind of entity named. */
  target?: EntityKind;
  /** Printed after numeric values (`crowns`, `km²`). */
  unit?: string;
  /** Decimal places when printed (prices: 2). */
  decimals?: number;
}

/** Every attribute, by name. */
export const ATTRIBUTES: Readonly<Record<string, AttributeMeta>> = {
  region: { type: 'string' },
  population: { type: 'number' },
  founded: { type: 'year' },
  area_km2: { type: 'number', unit: 'km²' },
  elevation_m: { type: 'number', unit: 'm' },
  industry: { type: 'string' },
  headquarters: { type: 'entity', target: 'city' },
  employees: { type: 'number' },
  founder: { type: 'entity', target: 'person' },
  maker: { type: 'entity', target: 'company' },
  category: { type: 'string' },
  price: { type: 'number', unit: 'crowns', decimals: 2 },
  launched: { type: 'year' },
  weight_kg: { type: 'number', unit: 'kg' },
  occupation: { type: 'string' },
  born: { type: 'year' },
  birthplace: { type: 'entity', target: 'city' },
};

/** The attributes every entity of a kind has, in display order. */
export const KIND_ATTRIBUTES: Readonly<Record<EntityKind, readonly string[]>> = {
  city: ['region', 'population', 'founded', 'area_km2', 'elevation_m'],
  company: ['industry', 'founded', 'headquarters', 'employees', 'founder'],
  product: ['maker', 'category', 'price', 'launched', 'weight_kg'],
  person: ['occupation', 'born', 'birthplace'],
};

type CityRow = [name: string, region: string, population: number, founded: number, area: number, elevation: number, clue: string, extra: string];
type CompanyRow = [name: string, industry: string, founded: number, hq: string, employees: number, founder: string, clue: string, extra: string];
type ProductRow = [name: string, maker: string, category: string, price: number, launched: number, weight: number, clue: string, extra: string];
type PersonRow = [name: string, occupation: string, born: number, birthplace: string, clue: string, extra: string];

const CITIES: CityRow[] = [
  ['Velmora', 'Ashen Delta', 48200, 1312, 61, 4, 'a river port famous for its blue glassworks', 'Grain barges unload at its stone quays.'],
  ['Corrowick', 'Northern Reach', 127500, 1188, 142, 310, 'the city that hosts the Festival of Lanterns every winter', 'Its old town is ringed by a double wall of grey granite.'],
  ['Saltgrave', 'Saltmarsh Coast', 23900, 1544, 38, 2, 'a coastal town surrounded by terraced salt pans', 'Flamingos spend the winter in its shallow pans.'],
  ['Drummerlin', 'Highveld', 86100, 1421, 97, 1240, 'a mountain city crowned by a copper-domed observatory', 'Glider pilots ride the thermals above its cliffs.'],
  ['Quenhollow', 'Northern Reach', 15400, 1603, 22, 540, 'a gorge town known for its seventy-arch timber bridge', 'The bridge carries the old post road over the Quen river.'],
  ['Ostravel', 'Ashen Delta', 204300, 1097, 188, 12, 'the seat of the Delta Assembly and the largest city of the delta', 'Its covered market is the oldest in the region.'],
  ['Kestrin', 'Saltmarsh Coast', 9800, 1702, 14, 6, 'a fishing harbour guarded by a lighthouse painted in red spirals', 'Its fleet lands mackerel and crab.'],
  ['Pellingford', 'Highveld', 56700, 1356, 73, 980, 'a market town whose cheese ripens in limestone caves', 'A clock tower with twelve bells stands over its square.'],
  ['Marrowgate', 'Northern Reach', 34100, 1489, 45, 420, 'a lakeside town that holds horse races on its frozen lake', 'Pine forests surround the lake on three sides.'],
  ['Ybrenn', 'Saltmarsh Coast', 71200, 1265, 83, 8, 'a shipbuilding port where tall-masted schooners are still built by hand', 'Its dry docks were dug by monks.'],
  ['Halvard Crossing', 'Highveld', 12600, 1788, 19, 1510, 'a plateau town where five railway lines meet', 'It grew up around a coaching inn.'],
  ['Sunmere', 'Ashen Delta', 41800, 1630, 52, 3, 'a lagoon town known for floating gardens grown on reed rafts', 'Boats replace carts in most of its streets.'],
  ['Brackenfell', 'Northern Reach', 27300, 1452, 36, 660, 'a former mining town with a library carved into a cliff face', 'Its copper mines closed long ago.'],
  ['Emberlyn', 'Highveld', 98400, 1210, 112, 870, 'a spa city built around steaming hot springs', 'Visitors bathe in its terraced pools all year.'],
];

const COMPANIES: CompanyRow[] = [
  ['Brightwell Dynamics', 'aviation', 1921, 'Drummerlin', 4200, 'Orla Venn', 'a maker of wind-powered cargo gliders', 'Its test field lies on the plateau above town.'],
  ['Vantrel Glassworks', 'glassmaking', 1854, 'Velmora', 860, 'Aldo Quill', 'the glassmaker that supplies stained windows to the Delta Assembly hall', 'Its furnaces have burned without a pause for decades.'],
  ['Finchmoor Provisions', 'preserved food', 1902, 'Ybrenn', 1530, 'Hesper Finch', 'a cannery famous for smoked eels packed in tins', 'Sailors call its tins "harbour bread".'],
  ['Quillon Motors', 'river transport', 1968, 'Ostravel', 7300, 'Dario Quillon', 'a builder of electric river barges', 'Its yard sits where two canals meet.'],
  ['Saltgrave Mineral Company', 'salt and minerals', 1811, 'Saltgrave', 640, 'Bette Marsh', 'the oldest salt harvester on the coast', 'It still rakes its pans by hand at dawn.'],
  ['Helix Loom Textiles', 'textile machinery', 1887, 'Sunmere', 2100, 'Nadia Orrin', 'a maker of looms that weave cloth from reed fibre', 'Its mills are powered by the lagoon tide.'],
  ['Corvane Instruments', 'precision instruments', 1935, 'Pellingford', 980, 'Emil Corvane', 'a workshop that makes telescopes and pocket watches', 'Every lens it sells is ground and tested by hand.'],
  ['Frostline Outfitters', 'outdoor clothing', 1979, 'Marrowgate', 450, 'Sigrun Vale', 'an outfitter of clothing for polar expeditions', 'Its designs are tested on the frozen lake.'],
  ['Cinderbath Works', 'wellness', 1995, 'Emberlyn', 310, 'Pim Loxley', 'a producer of mineral bath products from volcanic springs', 'It bottles spring water for export as well.'],
  ['Tallyrand Rail', 'railway signalling', 1893, 'Halvard Crossing', 2650, 'Corwin Tally', 'a manufacturer of railway signals and crossing gates', 'Its signal boxes stand on every Highveld line.'],
];

const PRODUCTS: ProductRow[] = [
  ['Zephyr Glider Mk II', 'Brightwell Dynamics', 'aircraft', 185000, 1958, 640, 'a cargo glider with folding wings', 'It can land on a meadow of any slope.'],
  ['Azure Carafe', 'Vantrel Glassworks', 'glassware', 42.5, 1901, 1.2, 'a water carafe tinted cobalt blue', 'Each one is blown from a single gather of glass.'],
  ['Delta Smoked Eel Tin', 'Finchmoor Provisions', 'food', 6.8, 1921, 0.35, 'a tin of smoked eels packed in oil', 'An unopened tin keeps for ten years.'],
  ['Quillon Barge Q7', 'Quillon Motors', 'vessel', 92000, 1989, 18000, 'an electric barge that carries grain along the delta canals', 'Its batteries charge from solar sails.'],
  ['Tideflake Salt', 'Saltgrave Mineral Company', 'food', 4.25, 1833, 0.5, 'flaky sea salt harvested at low tide', 'Chefs across the world sprinkle it on bread.'],
  ['Reedsilk Loom 3', 'Helix Loom Textiles', 'machinery', 3400, 1912, 210, 'a treadle loom for weaving reed silk at home', 'Its shuttle runs on brass rails.'],
  ['Corvane Stargazer', 'Corvane Instruments', 'instrument', 1280, 1952, 14, 'a refracting telescope for amateur astronomers', 'It folds into a wooden case.'],
  ['Lantern Pocket Watch', 'Corvane Instruments', 'instrument', 215, 1947, 0.12, 'a pocket watch whose dial glows in the dark', 'Night-shift railway guards carried it for decades.'],
  ['Polar Shell Parka', 'Frostline Outfitters', 'clothing', 349, 1984, 1.9, 'a windproof parka rated for forty degrees below zero', 'Its hood has a wire rim to shape it against the wind.'],
  ['Frostline Trail Boots', 'Frostline Outfitters', 'clothing', 129.99, 1991, 1.6, 'waterproof hiking boots with studded soles', 'The studs can be swapped for summer treads.'],
  ['Cinder Bath Salts', 'Cinderbath Works', 'wellness', 18.9, 1998, 0.8, 'bath salts scented with volcanic ash', 'They turn bath water a pale grey.'],
  ['Signal Lamp S4', 'Tallyrand Rail', 'equipment', 760, 1911, 7.5, 'a four-colour signal lamp for railway crossings', 'Its oil reservoir lasts a full week.'],
];

const PEOPLE: PersonRow[] = [
  ['Orla Venn', 'aeronautical engineer', 1889, 'Corrowick', 'an engineer who crossed the Highveld in a glider of her own design', 'She flew her last flight at the age of seventy.'],
  ['Aldo Quill', 'glassblower', 1821, 'Velmora', 'a glassblower who discovered a recipe for cobalt glass', 'He trained more than forty apprentices.'],
  ['Hesper Finch', 'merchant', 1870, 'Ybrenn', 'a merchant who first sold tinned eels to sailors', 'She kept her ledgers in verse.'],
  ['Dario Quillon', 'engineer', 1931, 'Ostravel', 'an engineer who put electric motors on river barges', 'He raced motorboats as a young man.'],
  ['Bette Marsh', 'chemist', 1779, 'Saltgrave', 'a chemist who studied how sea water evaporates', 'Her notebooks are kept in the coastal archive.'],
  ['Nadia Orrin', 'inventor', 1852, 'Sunmere', 'an inventor who patented a loom driven by tidal wheels', 'She held nineteen patents.'],
  ['Emil Corvane', 'clockmaker', 1899, 'Pellingford', 'a clockmaker who ground his own telescope lenses', 'He repaired the twelve-bell clock in his home town.'],
  ['Sigrun Vale', 'mountaineer', 1948, 'Marrowgate', 'a mountaineer who led the first winter ascent of Mount Hask', 'She sewed her first parka herself.'],
  ['Pim Loxley', 'physician', 1961, 'Emberlyn', 'a physician who prescribed hot spring baths to his patients', 'He wrote a guide to the springs of the Highveld.'],
  ['Corwin Tally', 'surveyor', 1858, 'Halvard Crossing', 'a surveyor who mapped the route of the first Highveld railway', 'He walked the whole route twice.'],
  ['Maren Oakes', 'poet', 1902, 'Quenhollow', 'a poet who wrote a cycle of songs about timber bridges', 'Her songs are still sung at weddings.'],
  ['Ivo Brask', 'cartographer', 1794, 'Brackenfell', 'a cartographer who drew the first complete map of the Northern Reach', 'His maps hang in the cliff library.'],
];

/** Every entity of the world, cities first. */
export const ENTITIES: readonly WorldEntity[] = [
  ...CITIES.map(([name, region, population, founded, area, elevation, clue, extra]): WorldEntity => ({
    name,
    kind: 'city',
    clue,
    extra,
    attributes: { region, population, founded, area_km2: area, elevation_m: elevation },
  })),
  ...COMPANIES.map(([name, industry, founded, headquarters, employees, founder, clue, extra]): WorldEntity => ({
    name,
    kind: 'company',
    clue,
    extra,
    attributes: { industry, founded, headquarters, employees, founder },
  })),
  ...PRODUCTS.map(([name, maker, category, price, launched, weight, clue, extra]): WorldEntity => ({
    name,
    kind: 'product',
    clue,
    extra,
    attributes: { maker, category, price, launched, weight_kg: weight },
  })),
  ...PEOPLE.map(([name, occupation, born, birthplace, clue, extra]): WorldEntity => ({
    name,
    kind: 'person',
    clue,
    extra,
    attributes: { occupation, born, birthplace },
  })),
];

/** A document about something that is not an entity (regions, events, landmarks): search only. */
export interface TopicDocument {
  id: string;
  title: string;
  /** Shown in the title's parentheses: `Ashen Delta (region)`. */
  tag: string;
  body: string;
}

/** Background documents; they mention entities and share words with clues, so search must rank. */
export const TOPIC_DOCUMENTS: readonly TopicDocument[] = [
  { id: 'region-ashen-delta', title: 'Ashen Delta', tag: 'region', body: 'The Ashen Delta is a low, marshy region of river channels and canals. Its cities are Ostravel, Velmora and Sunmere. Grain, glass and reed cloth travel by barge to the sea.' },
  { id: 'region-northern-reach', title: 'Northern Reach', tag: 'region', body: 'The Northern Reach is a cold upland of lakes and pine forest. Corrowick, Quenhollow, Marrowgate and Brackenfell lie within it. Winters are long and the lakes freeze hard.' },
  { id: 'region-saltmarsh-coast', title: 'Saltmarsh Coast', tag: 'region', body: 'The Saltmarsh Coast is a flat shore of salt pans, harbours and shipyards. Saltgrave, Kestrin and Ybrenn are its towns. Fishing and salt have shaped its economy for centuries.' },
  { id: 'region-highveld', title: 'Highveld', tag: 'region', body: 'The Highveld is a high plateau of grassland and cliffs. Drummerlin, Pellingford, Halvard Crossing and Emberlyn stand on it. Its railways climb the escarpment in long loops.' },
  { id: 'event-festival-of-lanterns', title: 'Festival of Lanterns', tag: 'event', body: 'The Festival of Lanterns fills the streets with paper lanterns on the longest night of winter. Lantern makers from across the Northern Reach compete for a silver prize.' },
  { id: 'event-ice-races', title: 'Ice races', tag: 'event', body: 'Horse races on frozen lakes are an old winter custom of the north. Riders use studded shoes, and the course is marked with pine branches.' },
  { id: 'institution-delta-assembly', title: 'Delta Assembly', tag: 'institution', body: 'The Delta Assembly governs the canals, tolls and dykes of the Ashen Delta. Its hall has stained windows of blue and gold glass.' },
  { id: 'topic-crown', title: 'Crown', tag: 'currency', body: 'The crown is the currency used across the world of these documents. One crown is divided into one hundred pennies, and all prices are quoted in crowns.' },
  { id: 'topic-glassmaking', title: 'Glassmaking in the delta', tag: 'topic', body: 'Glassmaking in the delta began with furnaces fired by reed charcoal. Cobalt gives delta glass its famous blue colour. Several glassworks still operate along the river.' },
  { id: 'topic-highveld-railway', title: 'Highveld railway', tag: 'topic', body: 'The first Highveld railway linked the plateau towns to the coast. Its signals, lamps and crossing gates were built on the plateau itself.' },
  { id: 'landmark-mount-hask', title: 'Mount Hask', tag: 'landmark', body: 'Mount Hask is the highest peak of the Northern Reach. Its north face was long thought impossible to climb in winter.' },
  { id: 'landmark-quen-river', title: 'Quen river', tag: 'landmark', body: 'The Quen river cuts a deep gorge through the Northern Reach before it joins the delta. Timber bridges and water mills line its banks.' },
];
