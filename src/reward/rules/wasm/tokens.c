/*
 * The information-use rule's token index, as WebAssembly with 128-bit SIMD (built by
 * scripts/build-wasm.sh into build/wasm/tokens.wasm, loaded by ../token-index.ts).
 *
 * Tokens are those of ../tokens.ts (`scanTokens`), read from the UTF-8 bytes of the text instead of its
 * UTF-16 code units:
 *   - a word byte is A-Z a-z 0-9 _ or any byte >= 0x80 (every byte of a non-ASCII character, so a run of
 *     non-ASCII characters is a run of word bytes, exactly as every non-ASCII code unit is a letter there);
 *   - a joiner (. / -) belongs to a token when a word byte precedes and a word byte follows it;
 *   - a token is informative when its length in UTF-16 code units is >= 4, or >= 2 and it contains a
 *     digit, '_' or a joiner.
 * So the token boundaries and the informative test are those of the reference scanner; only the hash
 * differs (64 bits over the UTF-8 bytes), and it is the same for equal tokens in any text.
 *
 * Classification is branch-free, 64 bytes at a time: four 16-byte vectors become 64-bit masks (word,
 * joiner, marks), token membership is `word | (joiner & word before & word after)`, and tokens are walked
 * edge to edge with count-trailing-zeros. Only token ends do per-token work: hashing 8 bytes per
 * multiply, and one probe of an open-addressing table whose slots carry a generation stamp (so a reset
 * for the next trajectory costs O(1)).
 *
 * The same module hashes each step's tool call for the redundancy rule (`hash_call`): the params are written
 * here once per trajectory, hashed, and scanned for tokens later from the same bytes.
 *
 * Memory: a bump allocator over linear memory. The buffers and the table are reallocated only to
 * grow (geometrically), so what is left behind is bounded by the final sizes.
 */
#include <stdint.h>
#include <wasm_simd128.h>

#define PAGE 65536u
/* Bytes past the input's end that loads may touch: the last 64-byte block and an 8-byte hash load. */
#define PAD 80u

extern unsigned char __heap_base;

static uint32_t heap_top;
static uint32_t heap_end;
/* Set when linear memory grew (JavaScript's views of it are then stale); cleared by `take_grown`. */
static int32_t grown;

/* 16-aligned bump allocation; 0 when memory cannot grow. */
static uint32_t alloc(uint32_t bytes) {
  if (heap_top == 0) {
    heap_top = ((uint32_t)(uintptr_t)&__heap_base + 15u) & ~15u;
    heap_end = (uint32_t)__builtin_wasm_memory_size(0) * PAGE;
  }
  uint32_t p = heap_top;
  uint32_t need = p + bytes;
  if (need > heap_end) {
    uint32_t pages = (need - heap_end + PAGE - 1u) / PAGE;
    if (__builtin_wasm_memory_grow(0, pages) == (__SIZE_TYPE__)-1) return 0;
    heap_end += pages * PAGE;
    grown = 1;
  }
  heap_top = (need + 15u) & ~15u;
  return p;
}

/* What `reset` and `scan` return: 0 out of memory, 1 done, 2 done and memory grew (JavaScript's views of
 * it are stale). */
static int32_t done(int32_t ok) {
  if (!ok) return 0;
  int32_t g = grown;
  grown = 0;
  return 1 + g;
}

/* ---- buffers ---------------------------------------------------------------------------------- */

/*
 * Buffers JavaScript writes into (`reserve`): 0 the input of one scan (an instruction, an observation);
 * 1 the action params of a whole trajectory (`hash_call` hashes them, `scan` reads them back step by step);
 * 2 a call's member descriptors (u32, for `hash_call`).
 */
enum { BUFFER_INPUT = 0, BUFFER_ACTIONS = 1, BUFFER_MEMBERS = 2, BUFFERS = 3 };

static uint8_t *buffers[BUFFERS];
static uint32_t capacities[BUFFERS]; /* usable bytes, PAD more are allocated */

/*
 * Buffer `which` with room for at least `bytes` bytes; its first `keep` bytes are kept. Returns its address
 * (0 when memory is exhausted or `which` is not a buffer). The address changes only when the buffer grows.
 */
__attribute__((export_name("reserve"))) uint32_t reserve(uint32_t which, uint32_t bytes, uint32_t keep) {
  if (which >= BUFFERS) return 0;
  if (bytes <= capacities[which]) return (uint32_t)(uintptr_t)buffers[which];
  uint32_t cap = capacities[which] * 2u > bytes ? capacities[which] * 2u : bytes;
  if (cap < 4096u) cap = 4096u;
  uint32_t p = alloc(cap + PAD);
  if (p == 0) return 0;
  uint8_t *next = (uint8_t *)(uintptr_t)p;
  if (keep > capacities[which]) keep = capacities[which];
  for (uint32_t i = 0; i < keep; i++) next[i] = buffers[which][i];
  buffers[which] = next;
  capacities[which] = cap;
  return p;
}

/* Per 64-byte block of the current scan: word, joiner, mark (digit, '_', joiner) and >= 0x80 masks. */
static uint64_t *block_word;
static uint64_t *block_join;
static uint64_t *block_mark;
static uint64_t *block_high;
static uint32_t block_capacity;

static int reserve_blocks(uint32_t blocks) {
  if (blocks <= block_capacity) return 1;
  uint32_t cap = block_capacity * 2u > blocks ? block_capacity * 2u : blocks;
  if (cap < 1024u) cap = 1024u;
  uint32_t w = alloc(cap * 8u), j = alloc(cap * 8u), m = alloc(cap * 8u), h = alloc(cap * 8u);
  if (w == 0 || j == 0 || m == 0 || h == 0) return 0;
  block_word = (uint64_t *)(uintptr_t)w;
  block_join = (uint64_t *)(uintptr_t)j;
  block_mark = (uint64_t *)(uintptr_t)m;
  block_high = (uint64_t *)(uintptr_t)h;
  block_capacity = cap;
  return 1;
}

/* ---- the table: 64-bit token hash -> first-seen code -------------------------------------------- */

typedef struct {
  uint64_t key;
  int32_t value;
  uint32_t gen;
} Slot;

static Slot *slots;
static uint32_t slot_mask;
static uint32_t slot_count; /* keys of the current generation */
static uint32_t generation = 1;

static int table_alloc(uint32_t capacity) {
  uint32_t p = alloc(capacity * (uint32_t)sizeof(Slot));
  if (p == 0) return 0;
  Slot *s = (Slot *)(uintptr_t)p;
  for (uint32_t i = 0; i < capacity; i++) s[i].gen = 0;
  slots = s;
  slot_mask = capacity - 1u;
  return 1;
}

static int table_grow(void) {
  Slot *old = slots;
  uint32_t old_capacity = slot_mask + 1u;
  if (!table_alloc(old_capacity * 2u)) return 0;
  for (uint32_t i = 0; i < old_capacity; i++) {
    if (old[i].gen != generation) continue;
    uint32_t k = (uint32_t)old[i].key & slot_mask;
    while (slots[k].gen == generation) k = (k + 1u) & slot_mask;
    slots[k] = old[i];
  }
  return 1;
}

/* ---- results --------------------------------------------------------------------------------- */

/*
 * Read by JavaScript after each scan (`stats_address`): [0] informative tokens in the last action scan,
 * [1] of those, tokens revealed at an earlier step, [2] the step that revealed the first used one (-1: none),
 * [3] tokens first seen in an observation since the last reset, [4] tokens written by `collect` mode,
 * [5] 1 when memory ran out (the scan stopped); [6], [7] the low and high halves of `hash_call`'s hash.
 */
static int32_t stats[8];

__attribute__((export_name("stats_address"))) uint32_t stats_address(void) { return (uint32_t)(uintptr_t)stats; }

/*
 * Empties the table for a new trajectory, sized for `expected` distinct tokens (it grows beyond that as
 * needed). Returns as `scan` does.
 */
__attribute__((export_name("reset"))) int32_t reset(uint32_t expected) {
  uint32_t capacity = 1024u;
  while (capacity < expected * 2u && capacity < (1u << 28)) capacity *= 2u;
  stats[3] = 0;
  stats[5] = 0;
  slot_count = 0;
  generation++;
  if (generation == 0) {
    /* wrapped after 2^32 resets: stale stamps could alias, so clear them */
    for (uint32_t i = 0; i <= slot_mask && slots != 0; i++) slots[i].gen = 0;
    generation = 1;
  }
  if (slots == 0 || slot_mask + 1u < capacity) return done(table_alloc(capacity));
  return done(1);
}

/* ---- scanning --------------------------------------------------------------------------------- */

enum { MODE_INSTRUCTION = 0, MODE_ACTION = 1, MODE_OBSERVATION = 2, MODE_COLLECT = 3 };

static inline uint64_t load64(const uint8_t *p) {
  uint64_t x;
  __builtin_memcpy(&x, p, 8);
  return x;
}

/* 64-bit hash of `len` (>= 1) bytes: 8 bytes per multiply, murmur3's fmix64 at the end. */
static inline uint64_t hash_bytes(const uint8_t *p, uint32_t len) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)len * 0xc2b2ae3d27d4eb4full);
  while (len > 8u) {
    h = (h ^ load64(p)) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    p += 8;
    len -= 8u;
  }
  h ^= load64(p) & (~0ull >> (64u - 8u * len));
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

static inline uint64_t fmix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

/* `hash_bytes`, also for no bytes. */
static inline uint64_t hash_span(const uint8_t *p, uint32_t len) {
  return len == 0u ? 0x2545f4914f6cdd1dull : hash_bytes(p, len);
}

/*
 * Hash of a tool call for the redundancy rule, into stats[6] (low half) and stats[7] (high half). The tool
 * and the param keys come as ids (the caller's interning: equal strings, equal ids); each of the `members`
 * params is four u32 in the members buffer: its type tag, its key's id, its value's offset and length in the
 * actions buffer (the value's UTF-8 bytes, or its decimal form for a number).
 *
 * Members are hashed one by one and *added* (mod 2^64), so the order of the keys does not matter: equal
 * params under canonical JSON (the caller skips `undefined` members) hash alike. The caller confirms a match
 * exactly, so a collision (2^-64) costs nothing but a comparison.
 */
__attribute__((export_name("hash_call"))) void hash_call(uint32_t members, uint32_t tool, uint32_t seed) {
  const uint8_t *values = buffers[BUFFER_ACTIONS];
  const uint32_t *m = (const uint32_t *)(uintptr_t)buffers[BUFFER_MEMBERS];
  uint64_t sum = 0;
  for (uint32_t i = 0; i < members; i++, m += 4) {
    uint64_t label = ((uint64_t)m[1] << 8) | m[0];
    sum += fmix64(hash_span(values + m[2], m[3]) ^ (label * 0x9e3779b97f4a7c15ull));
  }
  uint64_t h = fmix64(((uint64_t)tool * 0xc2b2ae3d27d4eb4full) ^ ((uint64_t)seed << 32));
  h = fmix64(h + sum * 0x9e3779b97f4a7c15ull);
  h = fmix64(h ^ ((uint64_t)members * 0xff51afd7ed558ccdull));
  stats[6] = (int32_t)(uint32_t)h;
  stats[7] = (int32_t)(uint32_t)(h >> 32);
}

/* Whether any bit of the per-block masks is set in positions [s, e). */
static inline int any_in(const uint64_t *masks, uint32_t s, uint32_t e) {
  uint32_t b = s >> 6, last = (e - 1u) >> 6;
  uint64_t lo = ~0ull << (s & 63u);
  uint64_t hi = ~0ull >> (63u - ((e - 1u) & 63u));
  if (b == last) return (masks[b] & lo & hi) != 0;
  if (masks[b] & lo) return 1;
  for (uint32_t k = b + 1u; k < last; k++)
    if (masks[k]) return 1;
  return (masks[last] & hi) != 0;
}

/* Length in UTF-16 code units of the UTF-8 bytes [s, e). */
static uint32_t utf16_length(const uint8_t *p, uint32_t s, uint32_t e) {
  uint32_t n = 0;
  for (uint32_t i = s; i < e; i++) {
    uint8_t c = p[i];
    if ((c & 0xc0u) != 0x80u) n++;     /* a character starts: one unit */
    if ((c & 0xf8u) == 0xf0u) n++;     /* 4-byte sequence: a surrogate pair */
  }
  return n;
}

static inline uint32_t mask16(v128_t v) { return (uint32_t)wasm_i8x16_bitmask(v); }

/*
 * Scans the `len` bytes at `address` (inside one of the buffers), recording each informative token in the table
 * according to `mode` (the rule's first-appearance codes: 1 instruction, 2 + 2·position first seen in an
 * action, 3 + 2·position first seen in an observation). In collect mode the tokens' [start, end) byte
 * offsets go after `address + len` instead (for tests). Returns 0 when memory ran out,
 * 2 when it grew, else 1.
 */
__attribute__((export_name("scan"))) int32_t scan(uint32_t address, uint32_t len, int32_t mode, int32_t position) {
  if (mode == MODE_ACTION) {
    stats[0] = 0;
    stats[1] = 0;
    stats[2] = -1;
  }
  stats[4] = 0;
  if (len == 0) return done(1);
  const uint8_t *text = (const uint8_t *)(uintptr_t)address;
  uint32_t blocks = (len + 63u) >> 6;
  if (!reserve_blocks(blocks + 1u)) {
    stats[5] = 1;
    return done(0);
  }

  const v128_t c0 = wasm_i8x16_splat('0'), c10 = wasm_i8x16_splat(10);
  const v128_t ca = wasm_i8x16_splat('a'), c26 = wasm_i8x16_splat(26), c20 = wasm_i8x16_splat(0x20);
  const v128_t cu = wasm_i8x16_splat('_'), cdot = wasm_i8x16_splat('.'), cslash = wasm_i8x16_splat('/');
  const v128_t cdash = wasm_i8x16_splat('-');
  uint64_t any_high = 0;
  for (uint32_t b = 0; b < blocks; b++) {
    uint64_t word = 0, join = 0, mark = 0, high = 0;
    for (uint32_t q = 0; q < 4u; q++) {
      v128_t v = wasm_v128_load(text + b * 64u + q * 16u);
      v128_t digit = wasm_u8x16_lt(wasm_i8x16_sub(v, c0), c10);
      v128_t alpha = wasm_u8x16_lt(wasm_i8x16_sub(wasm_v128_or(v, c20), ca), c26);
      v128_t under = wasm_i8x16_eq(v, cu);
      v128_t j = wasm_v128_or(wasm_v128_or(wasm_i8x16_eq(v, cdot), wasm_i8x16_eq(v, cslash)), wasm_i8x16_eq(v, cdash));
      v128_t dm = wasm_v128_or(digit, under);
      /* bytes >= 0x80 have their top bit set: the bitmask of v itself */
      uint32_t h16 = mask16(v);
      word |= (uint64_t)(mask16(wasm_v128_or(dm, alpha)) | h16) << (q * 16u);
      high |= (uint64_t)h16 << (q * 16u);
      join |= (uint64_t)mask16(j) << (q * 16u);
      mark |= (uint64_t)mask16(wasm_v128_or(dm, j)) << (q * 16u);
    }
    uint32_t valid = len - b * 64u;
    if (valid < 64u) {
      uint64_t keep = (1ull << valid) - 1ull;
      word &= keep;
      join &= keep;
      mark &= keep;
      high &= keep;
    }
    block_word[b] = word;
    block_join[b] = join;
    block_mark[b] = mark;
    block_high[b] = high;
    any_high |= high;
  }
  block_word[blocks] = 0;

  uint32_t *collected = (uint32_t *)(uintptr_t)(((uint32_t)(uintptr_t)text + len + 3u) & ~3u);
  int32_t found = 0;
  int32_t in_token = 0;
  uint32_t start = 0;
  uint64_t carry_word = 0, carry_member = 0;
  for (uint32_t b = 0; b <= blocks; b++) {
    uint64_t word = block_word[b];
    uint64_t member = 0;
    if (b < blocks) {
      uint64_t before = (word << 1) | carry_word;
      uint64_t after = (word >> 1) | (block_word[b + 1] << 63);
      member = word | (block_join[b] & before & after);
    }
    carry_word = word >> 63;
    uint64_t edges = member ^ ((member << 1) | carry_member);
    carry_member = member >> 63;
    while (edges) {
      uint32_t at = b * 64u + (uint32_t)__builtin_ctzll(edges);
      edges &= edges - 1ull;
      if (!in_token) {
        start = at;
        in_token = 1;
        continue;
      }
      in_token = 0;
      /* token [start, at) */
      uint32_t n = at - start;
      if (n < 2u) continue;
      if (any_high != 0 && any_in(block_high, start, at)) {
        uint32_t units = utf16_length(text, start, at);
        if (units < 2u || (units < 4u && !any_in(block_mark, start, at))) continue;
      } else if (n < 4u && !any_in(block_mark, start, at)) {
        continue;
      }
      if (mode == MODE_COLLECT) {
        collected[2 * found] = start;
        collected[2 * found + 1] = at;
        found++;
        continue;
      }
      uint64_t key = hash_bytes(text + start, n);
      if (key == 0) key = 1;
      if ((slot_count + 1u) * 2u > slot_mask + 1u && !table_grow()) {
        stats[5] = 1;
        return done(0);
      }
      uint32_t k = (uint32_t)key & slot_mask;
      Slot *s;
      for (;;) {
        s = &slots[k];
        if (s->gen != generation) {
          /* first sight */
          s->gen = generation;
          s->key = key;
          slot_count++;
          if (mode == MODE_ACTION) {
            stats[0]++;
            s->value = 2 + 2 * position;
          } else if (mode == MODE_OBSERVATION) {
            s->value = 3 + 2 * position;
            stats[3]++;
          } else {
            s->value = 1;
          }
          break;
        }
        if (s->key == key) {
          if (mode == MODE_ACTION) {
            stats[0]++;
            int32_t v = s->value;
            if ((v & 1) == 1 && v >= 3) {
              stats[1]++;
              if (stats[2] < 0) stats[2] = (v - 3) >> 1;
            }
          }
          break;
        }
        k = (k + 1u) & slot_mask;
      }
    }
  }
  stats[4] = found;
  return done(1);
}
