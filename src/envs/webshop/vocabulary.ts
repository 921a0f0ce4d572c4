/**
 * The vocabulary `gymflow/webshop-v0`'s catalogue is generated from (`catalogue.ts`): ten departments of five
 * product types each, with every type's attributes (what a product is: its material, fit, features), its
 * option groups (what a buyer chooses: size, color, flavor, …) and its price range. Written after WebShop's
 * scraped Amazon categories (beauty, fashion, electronics, food, furniture), with names and phrasings of
 * the kind its instructions use ("machine wash", "slim fit", "gluten free", "easy to clean").
 *
 * Rules the data keeps (checked in `catalogue.test.ts`): no phrase contains a comma (pages and instructions
 * list them with commas), and no product's title names another type of its own department, so the reward's
 * type check (`reward.ts`) can read the type from a title.
 */

/** A type of product: one page of the catalogue's generator. */
export interface ProductTypeSpec {
  /** The type as an instruction says it (`hair extension`). */
  name: string;
  /** The type as a title shows it (`Hair Extension`). */
  title: string;
  /** What products of the type may be; each product has 3 to 5 of them. */
  attributes: readonly string[];
  /** Option groups and their values; a product offers a subset of each group's values. */
  options: Readonly<Record<string, readonly string[]>>;
  /** Price range in dollars, both ends inclusive. */
  price: readonly [number, number];
  /** Phrases that may close a title after a dash (`for Women`, `Pack of 2`). */
  extras: readonly string[];
}

/** A department of the store. */
export interface CategorySpec {
  /** Short id (`beauty`), used in task metadata. */
  id: string;
  /** The name a page shows (`Beauty & Personal Care`). */
  name: string;
  types: readonly ProductTypeSpec[];
  /** Sentences that may close a description (shipping, care, warranty). */
  notes: readonly string[];
}

const APPAREL_COLORS = ['black', 'white', 'navy', 'heather gray', 'sky blue', 'olive green', 'burgundy', 'red', 'khaki', 'charcoal'] as const;
const APPAREL_SIZES = ['x-small', 'small', 'medium', 'large', 'x-large', 'xx-large'] as const;
const SHOE_SIZES = ['6', '6.5', '7', '7.5', '8', '8.5', '9', '9.5', '10', '10.5', '11', '12'] as const;
const GADGET_COLORS = ['black', 'white', 'blue', 'red', 'silver', 'rose gold', 'space gray', 'green'] as const;
const PET_SIZES = ['small', 'medium', 'large', 'x-large'] as const;

/** The ten departments of the store. */
export const CATEGORIES: readonly CategorySpec[] = [
  {
    id: 'beauty',
    name: 'Beauty & Personal Care',
    notes: ['Not tested on animals.', 'Store in a cool and dry place.', 'Patch test before first use.', 'Ships in recyclable packaging.'],
    types: [
      {
        name: 'hair extension', title: 'Hair Extension', price: [15, 80],
        attributes: ['natural looking', 'heat resistant', 'clip in', 'tangle free', 'long lasting', 'human hair', 'easy to apply', 'synthetic fiber', 'straight', 'body wave'],
        options: { color: ['black', 'dark brown', 'medium brown', 'blonde', 'ash blonde', 'auburn', 'platinum'], length: ['14 inch', '16 inch', '18 inch', '20 inch', '22 inch', '24 inch'] },
        extras: ['for Women', 'Full Head Set', 'Thick Double Weft', 'Soft and Silky'],
      },
      {
        name: 'shampoo', title: 'Shampoo', price: [6, 35],
        attributes: ['sulfate free', 'paraben free', 'for dry hair', 'color safe', 'tea tree oil', 'argan oil', 'volumizing', 'anti dandruff', 'cruelty free', 'natural ingredients'],
        options: { scent: ['unscented', 'lavender', 'citrus', 'coconut', 'mint', 'rosemary'], size: ['8 fl oz', '12 fl oz', '16 fl oz', '33.8 fl oz'] },
        extras: ['for Men and Women', 'Salon Quality', 'Daily Use', 'Gentle Formula'],
      },
      {
        name: 'face serum', title: 'Face Serum', price: [9, 60],
        attributes: ['vitamin c', 'hyaluronic acid', 'anti aging', 'fragrance free', 'dermatologist tested', 'for sensitive skin', 'oil free', 'brightening', 'retinol', 'non comedogenic'],
        options: { size: ['0.5 fl oz', '1 fl oz', '1.7 fl oz', '2 fl oz'] },
        extras: ['for Face and Neck', 'Daily Skin Care', 'Lightweight Formula', 'Morning and Night'],
      },
      {
        name: 'lipstick', title: 'Lipstick', price: [5, 32],
        attributes: ['long lasting', 'matte finish', 'moisturizing', 'cruelty free', 'vegan', 'waterproof', 'transfer proof', 'paraben free', 'satin finish', 'highly pigmented'],
        options: { color: ['classic red', 'nude', 'pink', 'berry', 'coral', 'plum', 'mauve', 'brick'], size: ['single', 'pack of 2', 'pack of 3'] },
        extras: ['Lip Color', 'Smooth Application', 'All Day Wear', 'Makeup for Women'],
      },
      {
        name: 'nail polish', title: 'Nail Polish', price: [4, 24],
        attributes: ['quick dry', 'chip resistant', 'non toxic', 'long lasting', 'high gloss', 'vegan', 'gel effect', 'cruelty free', 'no uv lamp needed', 'easy to remove'],
        options: { color: ['red', 'pink', 'black', 'white', 'nude', 'navy', 'lilac', 'glitter silver'], size: ['0.5 fl oz', 'pack of 3', 'pack of 6'] },
        extras: ['Salon Manicure at Home', 'Glossy Shine', 'Nail Lacquer', 'Gift Set'],
      },
    ],
  },
  {
    id: 'clothing',
    name: 'Clothing',
    notes: ['Machine wash cold with like colors.', 'Imported.', 'Model is wearing size medium.', 'Check the size chart before ordering.'],
    types: [
      {
        name: 't-shirt', title: 'T-Shirt', price: [8, 35],
        attributes: ['cotton', 'machine wash', 'short sleeve', 'crew neck', 'v neck', 'slim fit', 'classic fit', 'moisture wicking', 'tagless', 'relaxed fit'],
        options: { color: APPAREL_COLORS, size: APPAREL_SIZES },
        extras: ['for Men', 'for Women', 'Everyday Tee', 'Casual Top'],
      },
      {
        name: 'dress shirt', title: 'Dress Shirt', price: [18, 70],
        attributes: ['wrinkle free', 'button down', 'long sleeve', 'slim fit', 'classic fit', 'cotton spandex', 'machine wash', 'stretch', 'easy care', 'spread collar'],
        options: { color: ['white', 'sky blue', 'black', 'pink', 'lavender', 'navy', 'light gray'], size: ['small', 'medium', 'large', 'x-large', 'xx-large'] },
        extras: ['for Men', 'Business Casual', 'Formal Office Wear', 'Solid Color'],
      },
      {
        name: 'jeans', title: 'Jeans', price: [20, 90],
        attributes: ['high waist', 'stretch', 'slim fit', 'straight leg', 'relaxed fit', 'distressed', 'machine wash', 'button closure', 'bootcut', 'five pocket'],
        options: { color: ['dark wash', 'medium wash', 'light wash', 'black', 'gray'], size: ['28w x 30l', '30w x 30l', '30w x 32l', '32w x 32l', '34w x 32l', '36w x 32l', '38w x 34l'] },
        extras: ['for Women', 'for Men', 'Denim Pants', 'Classic Five Pocket Style'],
      },
      {
        name: 'hoodie', title: 'Hoodie', price: [20, 65],
        attributes: ['fleece lined', 'pullover', 'zip up', 'kangaroo pocket', 'drawstring hood', 'machine wash', 'heavyweight', 'cotton blend', 'oversized fit', 'ribbed cuffs'],
        options: { color: APPAREL_COLORS, size: APPAREL_SIZES },
        extras: ['Hooded Sweatshirt', 'for Men', 'for Women', 'Warm Winter Top'],
      },
      {
        name: 'yoga pants', title: 'Yoga Pants', price: [14, 55],
        attributes: ['high waist', 'tummy control', 'side pockets', 'four way stretch', 'squat proof', 'moisture wicking', 'quick dry', 'buttery soft', 'flare leg', 'ankle length'],
        options: { color: ['black', 'navy', 'charcoal', 'dusty rose', 'olive green', 'burgundy', 'heather gray'], size: APPAREL_SIZES },
        extras: ['for Women', 'Workout Leggings', 'Athletic Running Tights', 'Gym Wear'],
      },
    ],
  },
  {
    id: 'shoes',
    name: 'Shoes',
    notes: ['Fits true to size.', 'Spot clean only.', 'Shipped in the original box.', 'Free exchanges on sizes.'],
    types: [
      {
        name: 'running shoe', title: 'Running Shoes', price: [30, 140],
        attributes: ['lightweight', 'breathable mesh', 'rubber sole', 'non slip', 'arch support', 'cushioned', 'wide width', 'lace up', 'shock absorbing', 'reflective details'],
        options: { color: ['black', 'white', 'gray', 'navy', 'red', 'blue', 'neon green'], size: SHOE_SIZES },
        extras: ['for Men', 'for Women', 'Road Trainers', 'Athletic Workout Footwear'],
      },
      {
        name: 'sneaker', title: 'Sneakers', price: [25, 110],
        attributes: ['canvas', 'leather', 'rubber sole', 'slip on', 'lace up', 'memory foam', 'low top', 'high top', 'platform', 'classic style'],
        options: { color: ['white', 'black', 'navy', 'beige', 'gray', 'olive green', 'pink'], size: SHOE_SIZES },
        extras: ['Casual Fashion', 'for Men', 'for Women', 'Everyday Street Style'],
      },
      {
        name: 'hiking boot', title: 'Hiking Boots', price: [45, 180],
        attributes: ['waterproof', 'leather', 'ankle support', 'slip resistant', 'rubber sole', 'insulated', 'lightweight', 'steel toe', 'lace up', 'breathable'],
        options: { color: ['brown', 'black', 'tan', 'gray', 'olive green'], size: SHOE_SIZES },
        extras: ['Outdoor Trekking', 'for Men', 'for Women', 'Trail Backpacking'],
      },
      {
        name: 'sandal', title: 'Sandals', price: [12, 70],
        attributes: ['adjustable strap', 'arch support', 'open toe', 'cushioned footbed', 'non slip', 'waterproof', 'leather', 'flat', 'ankle strap', 'quick dry'],
        options: { color: ['black', 'brown', 'tan', 'white', 'gold', 'silver', 'navy'], size: SHOE_SIZES },
        extras: ['for Women', 'for Men', 'Summer Beach', 'Casual Walking'],
      },
      {
        name: 'slipper', title: 'Slippers', price: [10, 50],
        attributes: ['memory foam', 'faux fur', 'non slip', 'machine washable', 'indoor outdoor', 'fuzzy', 'slip on', 'rubber sole', 'open toe', 'warm lining'],
        options: { color: ['gray', 'pink', 'black', 'beige', 'brown', 'navy', 'white'], size: ['5-6', '7-8', '9-10', '11-12', '13-14'] },
        extras: ['House Shoes', 'for Women', 'for Men', 'Cozy Bedroom'],
      },
    ],
  },
  {
    id: 'electronics',
    name: 'Electronics',
    notes: ['Includes a 12-month warranty.', 'Compatible with most phones and tablets.', 'FCC certified.', 'Quick start guide included.'],
    types: [
      {
        name: 'wireless earbuds', title: 'Wireless Earbuds', price: [15, 150],
        attributes: ['noise cancelling', 'long battery life', 'bluetooth 5.3', 'waterproof', 'touch control', 'built in microphone', 'charging case', 'deep bass', 'low latency', 'ergonomic fit'],
        options: { color: GADGET_COLORS },
        extras: ['Bluetooth Headphones', 'In-Ear Headset', 'for Sports and Work', 'Stereo Sound'],
      },
      {
        name: 'bluetooth speaker', title: 'Bluetooth Speaker', price: [18, 130],
        attributes: ['portable', 'waterproof', 'long battery life', 'deep bass', '360 degree sound', 'built in microphone', 'dustproof', 'stereo pairing', 'lightweight', 'rugged design'],
        options: { color: GADGET_COLORS },
        extras: ['Outdoor Party', 'Loud Stereo Sound', 'for Home and Travel', 'Wireless Audio'],
      },
      {
        name: 'phone charger', title: 'Phone Charger', price: [8, 45],
        attributes: ['fast charging', 'usb c', 'dual port', 'foldable plug', 'compact', 'overheat protection', 'travel friendly', 'universal compatibility', 'gan technology', 'led indicator'],
        options: { color: ['black', 'white', 'gray', 'blue'], wattage: ['20w', '30w', '45w', '65w', '100w'] },
        extras: ['Wall Adapter', 'Power Block', 'for iPhone and Android', 'Charging Brick'],
      },
      {
        name: 'power bank', title: 'Power Bank', price: [15, 80],
        attributes: ['fast charging', 'usb c', 'slim design', 'led display', 'wireless charging', 'high capacity', 'airline approved', 'dual output', 'lightweight', 'pass through charging'],
        options: { color: ['black', 'white', 'blue', 'pink', 'silver'], capacity: ['5000mah', '10000mah', '20000mah', '26800mah'] },
        extras: ['Portable Battery Pack', 'External Battery', 'for Travel', 'Phone Backup Battery'],
      },
      {
        name: 'usb cable', title: 'USB Cable', price: [5, 25],
        attributes: ['braided nylon', 'fast charging', 'data transfer', 'tangle free', 'durable', 'usb c to usb c', 'right angle', 'aluminum connector', 'flexible', 'gold plated'],
        options: { color: ['black', 'white', 'gray', 'red', 'blue'], length: ['1 ft', '3 ft', '6 ft', '10 ft'] },
        extras: ['Charging Cord', 'Pack of 2', 'Sync Wire', 'for Phones and Laptops'],
      },
    ],
  },
  {
    id: 'home',
    name: 'Home & Bedding',
    notes: ['Machine wash cold and tumble dry low.', 'Colors may vary slightly from the photos.', 'OEKO-TEX certified fabric.', 'Packed in a reusable zip bag.'],
    types: [
      {
        name: 'throw pillow cover', title: 'Throw Pillow Cover', price: [8, 35],
        attributes: ['velvet', 'linen', 'hidden zipper', 'machine washable', 'soft', 'decorative', 'double sided', 'fade resistant', 'farmhouse style', 'boho style'],
        options: { color: ['cream', 'gray', 'navy', 'mustard yellow', 'sage green', 'blush pink', 'terracotta'], size: ['16 x 16 inch', '18 x 18 inch', '20 x 20 inch', '12 x 20 inch'] },
        extras: ['Set of 2', 'Cushion Case', 'for Couch and Sofa', 'Living Room Decor'],
      },
      {
        name: 'bed sheet set', title: 'Bed Sheet Set', price: [20, 120],
        attributes: ['deep pocket', 'microfiber', 'egyptian cotton', 'wrinkle resistant', 'breathable', 'cooling', 'hypoallergenic', 'machine washable', 'fade resistant', '400 thread count'],
        options: { color: ['white', 'ivory', 'gray', 'navy', 'sage green', 'light blue', 'taupe'], size: ['twin', 'full', 'queen', 'king', 'california king'] },
        extras: ['4 Piece', 'Hotel Luxury', 'Soft Bedding', 'Fitted and Flat'],
      },
      {
        name: 'blackout curtain', title: 'Blackout Curtains', price: [15, 70],
        attributes: ['thermal insulated', 'noise reducing', 'grommet top', 'energy saving', 'room darkening', 'machine washable', 'rod pocket', 'privacy', 'light blocking', 'wrinkle free'],
        options: { color: ['black', 'gray', 'navy', 'beige', 'white', 'greyish white', 'teal'], size: ['52 x 63 inch', '52 x 84 inch', '52 x 96 inch', '52 x 108 inch'] },
        extras: ['Window Drapes', '2 Panels', 'for Bedroom', 'for Living Room'],
      },
      {
        name: 'bath towel', title: 'Bath Towel', price: [12, 60],
        attributes: ['100% cotton', 'highly absorbent', 'quick dry', 'soft', 'lint free', 'machine washable', 'plush', 'lightweight', 'hotel quality', 'fade resistant'],
        options: { color: ['white', 'gray', 'navy', 'beige', 'aqua', 'sage green', 'charcoal'], size: ['pack of 2', 'pack of 4', 'pack of 6', 'pack of 8'] },
        extras: ['for Bathroom', 'Spa Collection', 'Large Towels', 'Everyday Use'],
      },
      {
        name: 'area rug', title: 'Area Rug', price: [25, 200],
        attributes: ['non slip', 'machine washable', 'low pile', 'stain resistant', 'shag', 'vintage design', 'easy clean', 'soft', 'non shedding', 'indoor outdoor'],
        options: { color: ['gray', 'beige', 'blue', 'multi', 'ivory', 'red', 'green'], size: ['2 x 3 ft', '3 x 5 ft', '4 x 6 ft', '5 x 7 ft', '8 x 10 ft'] },
        extras: ['for Living Room', 'for Bedroom', 'Floor Carpet', 'Modern Geometric'],
      },
    ],
  },
  {
    id: 'kitchen',
    name: 'Kitchen & Dining',
    notes: ['Hand wash recommended to keep it like new.', 'Food grade materials.', 'Lifetime customer support.', 'Gift box included.'],
    types: [
      {
        name: 'water bottle', title: 'Water Bottle', price: [8, 45],
        attributes: ['stainless steel', 'vacuum insulated', 'bpa free', 'leak proof', 'dishwasher safe', 'wide mouth', 'straw lid', 'keeps drinks cold', 'sweat proof', 'lightweight'],
        options: { color: ['black', 'white', 'navy', 'mint', 'lilac', 'coral', 'stainless'], size: ['12 oz', '18 oz', '24 oz', '32 oz', '40 oz'] },
        extras: ['for Sports', 'Travel Flask', 'for Gym and Office', 'Reusable'],
      },
      {
        name: 'coffee mug', title: 'Coffee Mug', price: [6, 35],
        attributes: ['ceramic', 'microwave safe', 'dishwasher safe', 'large handle', 'insulated', 'lead free', 'stackable', 'spill proof lid', 'stainless steel', 'double wall'],
        options: { color: ['white', 'black', 'blue', 'speckled cream', 'matte gray', 'green', 'pink'], size: ['8 oz', '12 oz', '16 oz', '20 oz'] },
        extras: ['Tea Cup', 'Gift for Coffee Lovers', 'Set of 2', 'for Latte and Cappuccino'],
      },
      {
        name: 'frying pan', title: 'Frying Pan', price: [15, 90],
        attributes: ['non stick', 'oven safe', 'induction compatible', 'cast iron', 'stainless steel', 'pfoa free', 'dishwasher safe', 'stay cool handle', 'with lid', 'even heating'],
        options: { size: ['8 inch', '10 inch', '11 inch', '12 inch'] },
        extras: ['Skillet', 'Omelette Pan', 'Chef Cookware', 'for All Stovetops'],
      },
      {
        name: 'knife set', title: 'Knife Set', price: [20, 150],
        attributes: ['high carbon stainless steel', 'with block', 'ergonomic handle', 'razor sharp', 'full tang', 'dishwasher safe', 'rust resistant', 'with sharpener', 'forged', 'german steel'],
        options: { color: ['black', 'silver', 'wood', 'white'], size: ['6 piece', '8 piece', '12 piece', '15 piece'] },
        extras: ['Kitchen Cutlery', 'Chef Knives', 'Gift Set', 'Professional Grade'],
      },
      {
        name: 'cutting board', title: 'Cutting Board', price: [10, 60],
        attributes: ['bamboo', 'juice groove', 'non slip feet', 'reversible', 'dishwasher safe', 'eco friendly', 'extra large', 'with handles', 'acacia wood', 'antibacterial'],
        options: { size: ['small', 'medium', 'large', 'set of 3'] },
        extras: ['Chopping Block', 'Serving Tray', 'for Meat and Vegetables', 'Butcher Block'],
      },
    ],
  },
  {
    id: 'grocery',
    name: 'Grocery & Gourmet Food',
    notes: ['Produced in a facility that also handles tree nuts.', 'Best before date printed on the pack.', 'Store in a cool and dry place.', 'Resealable packaging.'],
    types: [
      {
        name: 'protein bar', title: 'Protein Bar', price: [12, 45],
        attributes: ['gluten free', 'high protein', 'low sugar', 'keto friendly', 'non gmo', 'plant based', 'individually wrapped', 'no artificial flavors', 'dairy free', 'high fiber'],
        options: { flavor: ['chocolate chip', 'peanut butter', 'cookies and cream', 'birthday cake', 'salted caramel', 'almond coconut'], size: ['pack of 6', 'pack of 12', 'pack of 24'] },
        extras: ['Healthy Snack', 'Meal Replacement', 'On the Go', 'Variety Friendly'],
      },
      {
        name: 'coffee beans', title: 'Coffee Beans', price: [9, 40],
        attributes: ['whole bean', 'organic', 'fair trade', 'medium roast', 'dark roast', 'light roast', 'single origin', 'low acid', 'arabica', 'small batch roasted'],
        options: { flavor: ['original', 'french roast', 'espresso', 'colombian', 'hazelnut'], size: ['12 oz', '1 lb', '2 lb', '5 lb'] },
        extras: ['Gourmet Blend', 'Fresh Roasted', 'Rich and Smooth', 'Bulk Bag'],
      },
      {
        name: 'green tea', title: 'Green Tea', price: [5, 30],
        attributes: ['organic', 'caffeine free', 'loose leaf', 'non gmo', 'no artificial flavors', 'antioxidant rich', 'kosher', 'sugar free', 'individually wrapped', 'unsweetened'],
        options: { flavor: ['jasmine', 'mint', 'lemon', 'matcha', 'honey ginger', 'original'], size: ['20 count', '40 count', '100 count'] },
        extras: ['Tea Bags', 'Hot or Iced', 'Japanese Style', 'Calming Blend'],
      },
      {
        name: 'mixed nuts', title: 'Mixed Nuts', price: [8, 35],
        attributes: ['unsalted', 'roasted', 'raw', 'gluten free', 'non gmo', 'kosher', 'high protein', 'no artificial flavors', 'keto friendly', 'resealable bag'],
        options: { flavor: ['lightly salted', 'honey roasted', 'sea salt', 'original'], size: ['8 oz', '16 oz', '2 lb', '3 lb'] },
        extras: ['Healthy Snack', 'Party Mix', 'Trail Mix Base', 'Bulk Value Pack'],
      },
      {
        name: 'dark chocolate', title: 'Dark Chocolate', price: [4, 30],
        attributes: ['70% cacao', 'vegan', 'sugar free', 'fair trade', 'organic', 'gluten free', 'non gmo', 'dairy free', 'keto friendly', 'individually wrapped'],
        options: { flavor: ['sea salt', 'almond', 'mint', 'orange', 'original', 'raspberry'], size: ['pack of 1', 'pack of 4', 'pack of 10'] },
        extras: ['Gourmet Bar', 'Gift Box', 'Premium Cocoa', 'Snack Squares'],
      },
    ],
  },
  {
    id: 'sports',
    name: 'Sports & Outdoors',
    notes: ['Includes a carrying bag.', 'Tested for durability.', 'Thirty day money back guarantee.', 'Wipe clean with a damp cloth.'],
    types: [
      {
        name: 'yoga mat', title: 'Yoga Mat', price: [15, 80],
        attributes: ['non slip', 'extra thick', 'eco friendly', 'tpe', 'natural rubber', 'carrying strap', 'alignment lines', 'sweat resistant', 'lightweight', 'double sided'],
        options: { color: ['purple', 'blue', 'black', 'pink', 'teal', 'gray', 'green'], size: ['4mm', '6mm', '8mm', '10mm'] },
        extras: ['Exercise Mat', 'for Pilates and Floor Workouts', 'Home Gym', 'Fitness Mat'],
      },
      {
        name: 'resistance band', title: 'Resistance Bands', price: [8, 40],
        attributes: ['latex free', 'anti snap', 'with handles', 'door anchor', 'portable', 'fabric', 'stackable', 'carrying bag', 'heavy duty', 'non slip'],
        options: { size: ['light', 'medium', 'heavy', 'x-heavy', 'set of 5'] },
        extras: ['Workout Bands', 'for Strength Training', 'Home Fitness', 'Physical Therapy'],
      },
      {
        name: 'camping tent', title: 'Camping Tent', price: [40, 250],
        attributes: ['waterproof', 'easy setup', 'instant pop up', 'rainfly', 'windproof', 'mesh windows', 'lightweight', 'double layer', 'uv protection', 'carry bag'],
        options: { color: ['green', 'gray', 'orange', 'blue', 'tan'], size: ['2 person', '4 person', '6 person', '8 person'] },
        extras: ['Dome Tent', 'for Family Outdoor', 'Backpacking', 'Hiking and Festivals'],
      },
      {
        name: 'dumbbell', title: 'Dumbbells', price: [15, 200],
        attributes: ['adjustable', 'neoprene coated', 'hex shape', 'anti roll', 'non slip grip', 'cast iron', 'rubber coated', 'with stand', 'quick change', 'chrome handle'],
        options: { size: ['5 lb', '10 lb', '15 lb', '20 lb', '25 lb', '52.5 lb'] },
        extras: ['Hand Weights', 'Pair', 'Home Gym', 'Strength Training'],
      },
      {
        name: 'jump rope', title: 'Jump Rope', price: [6, 30],
        attributes: ['adjustable', 'tangle free', 'ball bearings', 'foam handles', 'weighted', 'speed cable', 'digital counter', 'cordless', 'lightweight', 'steel wire'],
        options: { color: ['black', 'red', 'blue', 'pink', 'green'] },
        extras: ['Skipping Rope', 'for Fitness', 'Cardio Workout', 'for Kids and Adults'],
      },
    ],
  },
  {
    id: 'pets',
    name: 'Pet Supplies',
    notes: ['Vet recommended.', 'Supervise your pet during use.', 'Satisfaction guaranteed.', 'Made with pet safe materials.'],
    types: [
      {
        name: 'dog bed', title: 'Dog Bed', price: [20, 120],
        attributes: ['orthopedic', 'memory foam', 'washable cover', 'non slip bottom', 'waterproof lining', 'bolster', 'calming', 'chew resistant', 'removable cover', 'raised edges'],
        options: { color: ['gray', 'brown', 'navy', 'beige', 'charcoal', 'pink'], size: PET_SIZES },
        extras: ['for Large Dogs', 'for Small Dogs', 'Pet Couch', 'Dog Sofa'],
      },
      {
        name: 'cat toy', title: 'Cat Toy', price: [4, 30],
        attributes: ['interactive', 'catnip', 'feather', 'battery operated', 'rechargeable', 'non toxic', 'self play', 'motion activated', 'crinkle', 'durable'],
        options: { style: ['wand', 'ball', 'mouse', 'tunnel', 'spring', 'set of 10'] },
        extras: ['for Indoor Cats', 'Kitten Play', 'Exercise Toy', 'Teaser'],
      },
      {
        name: 'dog leash', title: 'Dog Leash', price: [8, 40],
        attributes: ['reflective', 'padded handle', 'heavy duty', 'nylon', 'bungee', 'traffic handle', 'retractable', 'rope', 'hands free', 'waste bag holder'],
        options: { color: ['black', 'red', 'blue', 'orange', 'green', 'pink', 'purple'], length: ['4 ft', '5 ft', '6 ft', '10 ft', '16 ft'] },
        extras: ['for Medium and Large Dogs', 'for Small Dogs', 'Walking Lead', 'Training Lead'],
      },
      {
        name: 'pet shampoo', title: 'Pet Shampoo', price: [6, 30],
        attributes: ['oatmeal', 'aloe vera', 'tearless', 'for sensitive skin', 'deodorizing', 'flea and tick', 'hypoallergenic', 'soap free', 'natural ingredients', 'paraben free'],
        options: { scent: ['unscented', 'lavender', 'coconut', 'fresh linen', 'vanilla'], size: ['8 fl oz', '16 fl oz', '32 fl oz', '1 gallon'] },
        extras: ['for Dogs and Cats', 'Grooming Wash', 'Puppy Safe', 'Conditioning Formula'],
      },
      {
        name: 'cat litter', title: 'Cat Litter', price: [10, 45],
        attributes: ['clumping', 'odor control', 'dust free', 'unscented', 'lightweight', 'natural', 'multi cat', 'biodegradable', 'low tracking', 'flushable'],
        options: { size: ['10 lb', '14 lb', '20 lb', '28 lb', '40 lb'] },
        extras: ['Kitty Litter', 'Clay Formula', 'Easy Scoop', 'for Litter Box'],
      },
    ],
  },
  {
    id: 'toys',
    name: 'Toys & Games',
    notes: ['Recommended for ages 3 and up.', 'Batteries not included.', 'Meets safety standards.', 'Makes a great gift.'],
    types: [
      {
        name: 'building blocks', title: 'Building Blocks', price: [12, 90],
        attributes: ['stem', 'educational', 'compatible with major brands', 'non toxic', 'storage box', 'creative', 'colorful', 'bpa free', 'large pieces', 'magnetic'],
        options: { size: ['100 pieces', '300 pieces', '500 pieces', '1000 pieces'] },
        extras: ['Construction Set', 'for Kids', 'Learning Kit', 'Classic Bricks'],
      },
      {
        name: 'jigsaw puzzle', title: 'Jigsaw Puzzle', price: [8, 40],
        attributes: ['thick pieces', 'glare free', 'precision cut', 'poster included', 'recycled cardboard', 'family friendly', 'landscape', 'challenging', 'dust free', 'sturdy box'],
        options: { size: ['300 pieces', '500 pieces', '1000 pieces', '2000 pieces'] },
        extras: ['for Adults', 'Family Game Night', 'Brain Teaser', 'Wall Art'],
      },
      {
        name: 'plush toy', title: 'Plush Toy', price: [7, 45],
        attributes: ['soft', 'huggable', 'machine washable', 'hypoallergenic', 'cuddly', 'kawaii', 'weighted', 'embroidered eyes', 'stuffed', 'for toddlers'],
        options: { style: ['bear', 'bunny', 'unicorn', 'dinosaur', 'cat', 'penguin'], size: ['8 inch', '12 inch', '16 inch', '24 inch'] },
        extras: ['Stuffed Animal', 'Gift for Kids', 'Pillow Buddy', 'Nursery Decor'],
      },
      {
        name: 'remote control car', title: 'Remote Control Car', price: [20, 120],
        attributes: ['rechargeable battery', 'high speed', 'all terrain', 'off road', '2.4ghz', 'led lights', 'waterproof', 'four wheel drive', 'shock absorbers', 'stunt'],
        options: { color: ['red', 'blue', 'green', 'black', 'orange', 'yellow'] },
        extras: ['RC Truck', 'for Boys and Girls', 'Toy Vehicle', 'Outdoor Racing'],
      },
      {
        name: 'board game', title: 'Board Game', price: [10, 60],
        attributes: ['strategy', 'family friendly', 'party game', 'cooperative', 'for 2 to 4 players', 'quick to learn', 'educational', 'card game', 'travel size', 'award winning'],
        options: { style: ['standard edition', 'deluxe edition', 'travel edition'] },
        extras: ['for Adults and Kids', 'Game Night', 'Tabletop', 'Fun for All Ages'],
      },
    ],
  },
];

/** Syllables brand names are made of (`Vel` + `ora` = `Velora`). */
export const BRAND_HEADS = ['Vel', 'Lum', 'Kor', 'Zen', 'Ari', 'Bel', 'Cal', 'Dor', 'Fen', 'Hal', 'Jun', 'Mar', 'Nov', 'Ost', 'Pal', 'Quin', 'Ros', 'Sol', 'Tav', 'Vor'] as const;
/** The ends of brand names. */
export const BRAND_TAILS = ['ora', 'ix', 'ana', 'eo', 'ent', 'ura', 'ivo', 'elle', 'ark', 'io'] as const;

