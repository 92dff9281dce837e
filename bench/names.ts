/**
 * Plant names for the seeded stores: an adjective, a plant and a cultivar (31 × 53 × 61 = 100,223 names,
 * each about ten times in a million, so name order has ties broken by id), picked by a multiplicative
 * hash of the id so that name order is not id order. A four-letter word such as "fern" is in one name in
 * 53. SQLite's seed makes them in JavaScript, PostgreSQL's in SQL with the same arithmetic (SEED_NAME_SQL).
 */

const ADJECTIVES =
  'Variegated Dwarf Giant Golden Silver Red Weeping Creeping Trailing Spotted Striped Miniature Royal Wild Japanese Mexican African Boston Swiss Dragon Zebra Tiger Velvet Purple Blue Crested Painted Hardy Desert Mountain Lemon'.split(
    ' ',
  );
const PLANTS =
  'Fern Palm Aloe Cactus Ivy Lily Orchid Begonia Monstera Philodendron Pothos Calathea Ficus Dracaena Peperomia Hoya Sansevieria Anthurium Bromeliad Croton Fittonia Maranta Pilea Alocasia Aglaonema Schefflera Yucca Agave Echeveria Haworthia Kalanchoe Sedum Crassula Tradescantia Syngonium Spathiphyllum Zamioculcas Chlorophytum Dieffenbachia Caladium Asparagus Oxalis Coleus Geranium Jasmine Gardenia Camellia Azalea Hibiscus Bougainvillea Lavender Rosemary Basil'.split(
    ' ',
  );
const CULTIVARS =
  'Alba Aurea Compacta Elegans Gracilis Minor Major Nana Pendula Rubra Variegata Splendens Superba Nova Bella Grandis Lutea Nigra Rosea Viridis Argentea Ovata Pumila Robusta Sylvestris Tricolor Marginata Picta Dubia Fragrans Glauca Hirsuta Lucida Mollis Nobilis Odorata Perennis Repens Sativa Tenuis Undulata Vulgaris Zeylanica Blush Ember Frost Glow Haze Ivory Jewel Kiss Lace Mist Noir Opal Pearl Quartz Ruby Satin Topaz Umber'.split(
    ' ',
  );

/** How a seeded store's plants are named: seedName's adjective-plant-cultivar names, or catalogueName's common words. */
export type SeedNames = 'varied' | 'catalogue';

/** The tag of seeded plant `id`: three in four plants have one. */
export const SEED_TAGS = ['tropical', 'succulent', 'fern', null] as const;

/** Knuth's multiplicative hash of the id, as an unsigned 32-bit number. */
const hash = (id: number) => Math.imul(id, 2654435761) >>> 0;

export function seedName(id: number): string {
  const h = hash(id);
  return `${ADJECTIVES[h % 31]} ${PLANTS[(h >>> 5) % 53]} ${CULTIVARS[(h >>> 11) % 61]}`;
}

/** seedName in SQL, for `g` (a bigint) with the three word lists as $2, $3 and $4 (SEED_NAME_PARAMS). */
export const SEED_NAME_SQL = `(SELECT a[h % 31 + 1] || ' ' || p[(h / 32) % 53 + 1] || ' ' || c[(h / 2048) % 61 + 1]
  FROM (SELECT (g * 2654435761) % 4294967296 AS h, $2::text[] AS a, $3::text[] AS p, $4::text[] AS c) w)`;
export const SEED_NAME_PARAMS = [ADJECTIVES, PLANTS, CULTIVARS];

/** The key of the plant half-way through the name order of plants 1..count (name, then id). */
export function halfWayByName(count: number): { id: number; name: string } {
  const ids = Array.from({ length: count }, (_, i) => i + 1);
  const names = ids.map(seedName);
  ids.sort((a, b) => {
    const x = names[a - 1]!;
    const y = names[b - 1]!;
    return x < y ? -1 : x > y ? 1 : a - b;
  });
  const id = ids[Math.floor(count / 2)]!;
  return { id, name: names[id - 1]! };
}

/**
 * A catalogue of common words: every name is `Bulk <word> <n>-<id mod 1000>` with one of ten words picked
 * by the id's hash, so each word is in one name in ten (20,000 of 200k), a 3-letter start of a word such as
 * `fer` or `pal` is held by 10% of the names, and `ca` or `pa` (three words each) by 30%. In name order
 * the names of a word stand together, one block after another: searches as people type in a shop that
 * sells a few kinds of plant in quantity, where the seeded adjective-plant-cultivar names are rarer.
 */
const CATALOGUE = ['cactus', 'calla', 'camellia', 'fern', 'ivy', 'monstera', 'moss', 'palm', 'pansy', 'papyrus'];

/** The 3-letter searches that one catalogue name in ten holds, and the 2-letter ones that three in ten hold. */
export const CATALOGUE_TYPED = { three: ['fer', 'pal', 'ivy', 'mos', 'cac', 'cal', 'pan', 'mon'], two: ['ca', 'pa'] };

export function catalogueName(id: number): string {
  const h = hash(id);
  return `Bulk ${CATALOGUE[(h >>> 16) % CATALOGUE.length]} ${(h >>> 4) % 10}-${id % 1000}`;
}

/** catalogueName in SQL, for `g` (a bigint) with the words as $2 (CATALOGUE_NAME_PARAMS). */
export const CATALOGUE_NAME_SQL = `(SELECT 'Bulk ' || w[(h / 65536) % 10 + 1] || ' ' || ((h / 16) % 10) || '-' || (g % 1000)
  FROM (SELECT (g * 2654435761) % 4294967296 AS h, $2::text[] AS w) x)`;
export const CATALOGUE_NAME_PARAMS = [CATALOGUE];
