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
 * The index is built inside out. Only a token that some action uses can make that action score 1, so the
 * table holds the instruction's and the actions' tokens (all actions are scanned first, `scan_actions`),
 * and an observation only looks its tokens up: it marks the action tokens it reveals, and inserts nothing.
 * Which observation revealed anything first is all the rule needs of the rest. Once that is known and no
 * action token is left that a later observation could still reveal (its first action still ahead, none
 * revealing it yet), the remaining observations cannot change a verdict, and the caller stops scanning them.
 * Until then, once the first reveal is known, an observation's token matters only if it is one of those
 * pending action tokens: a counting filter of them (a byte per slot, by a one-multiply sketch of the token's
 * bytes) turns away nearly every other token before its informative test, hash and probe.
 *
 * `scan_text` is inlined into one copy per mode, so the observation loop carries none of the others' code.
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
/* 64-byte blocks classified at a time before they are walked (2 KiB of text). */
#define CHUNK_BLOCKS 32u

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
 * 1 the action params of a whole trajectory (`hash_call` hashes them, `scan_actions` scans them);
 * 2 a call's member descriptors (u32, for `hash_call`); 3 where each step's params end in buffer 1 (u32
 * per step, for `scan_actions`).
 */
enum { BUFFER_INPUT = 0, BUFFER_ACTIONS = 1, BUFFER_MEMBERS = 2, BUFFER_SPANS = 3, BUFFERS = 4 };

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

/* ---- the table: 64-bit token hash -> token id ----------------------------------------------------- */

typedef struct {
  uint64_t key;
  int32_t id;
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

/* An int32 array that grows geometrically (by `alloc`, so a grown array leaves its old copy behind). */
typedef struct {
  int32_t *at;
  uint32_t capacity;
} Array;

/* Room for `n` elements in `a`, keeping the first `keep`; 0 when memory is exhausted. */
static int array_reserve(Array *a, uint32_t n, uint32_t keep) {
  if (n <= a->capacity) return 1;
  uint32_t cap = a->capacity * 2u > n ? a->capacity * 2u : n;
  if (cap < 1024u) cap = 1024u;
  uint32_t p = alloc(cap * 4u);
  if (p == 0) return 0;
  int32_t *next = (int32_t *)(uintptr_t)p;
  for (uint32_t i = 0; i < keep; i++) next[i] = a->at[i];
  a->at = next;
  a->capacity = cap;
  return 1;
}

/* Per token id, side by side at [2 id] and [2 id + 1]: the step whose action it was first seen in (for the
 * instruction's tokens: -1 until an action uses one, then -2 - k for step k, the first to use it), and the
 * observation that revealed it (-1: none). */
static Array token_state;
static uint32_t tokens;
/* Per step: ids of the informative tokens of its action, in order (`action_ids`, step i's run ending at
 * `action_end[i]`), and how many tokens first seen in its action no observation has revealed yet. */
static Array action_ids, action_end, unrevealed_at;
static uint32_t action_tokens;
/* While `scan_actions` runs: where each step's params end in the actions buffer. */
static const uint32_t *action_span_end;
/* Per step, written by `finish`: informative tokens of the action, those revealed by an earlier
 * observation, the step that revealed the first of them (-1: none), those new in it (first seen there: in
 * no instruction, earlier action or earlier observation), and the instruction's that no earlier action used. */
static Array results;

/* The steps of the trajectory, the first observation that revealed a token (-1: none yet), the next step
 * whose action tokens the observations scanned so far have passed, and how many tokens first seen in the
 * actions of later steps are still unrevealed. */
static uint32_t steps;
static int32_t first_reveal;
static uint32_t passed;
static uint32_t pending;

/*
 * A counting filter of the pending tokens (first seen in a later step's action and not revealed yet: the
 * only ones an observation can still reveal), by their `sketch`: a byte per slot counts the pending tokens
 * whose sketch lands there (saturating at 255, never decremented then). Once the first reveal is known,
 * an observation's token whose slot counts 0 is not pending, so it can change nothing and is neither
 * hashed nor looked up. `token_sketch` keeps each token's sketch by id (those of the instruction too,
 * unused). The action tokens' ids run from `instruction_tokens` in the order of their first steps, so
 * `drop_id` walks them as the scan passes those steps.
 */
static Array token_sketch, filter;
static uint32_t filter_shift;
static uint32_t instruction_tokens, drop_id;
/* The filter's bytes in use (they are all 0 between trajectories unless `filter_dirty`: `finish` takes every
 * token back out instead of clearing them), and whether a slot saturated or a trajectory was left unfinished. */
static uint32_t filter_bytes;
static int filter_dirty, filter_saturated;

static inline void filter_drop(uint32_t id) {
  uint8_t *c = (uint8_t *)filter.at + ((uint32_t)token_sketch.at[id] >> filter_shift);
  if (*c != 255u) (*c)--;
}

/* Token `id`, no longer pending because its step was passed, leaves the filter unless a reveal took it out. */
static inline void filter_pass(uint32_t id) {
  if (token_state.at[2u * id + 1u] < 0) filter_drop(id);
}

/* The state an observation's lookup reads for a token in no slot: first seen in no action, so none to reveal. */
static int32_t no_token_state[2] = {-1, -1};

/* ---- results --------------------------------------------------------------------------------- */

/*
 * Read by JavaScript (`stats_address`): [0] the address of `finish`'s results, [1] the first observation
 * that revealed a token (-1: none), [2] 1 when no observation after the last one scanned can change a
 * verdict, [4] tokens written by `collect` mode, [5] 1 when memory ran out (the scan stopped); [6], [7]
 * the low and high halves of `hash_call`'s hash.
 */
static int32_t stats[8];

__attribute__((export_name("stats_address"))) uint32_t stats_address(void) { return (uint32_t)(uintptr_t)stats; }

/*
 * The version of what this module and token-index.ts exchange (exports, buffers, the layout of `finish`'s
 * results). Raise it with any change to them: a module built from an older source is then refused (the
 * rules use the JavaScript index and say why) instead of read with the wrong layout.
 */
__attribute__((export_name("abi_version"))) uint32_t abi_version(void) { return 3u; }

/*
 * Empties the index for a new trajectory of `n` steps, sized for `expected` distinct instruction and
 * action tokens (it grows beyond that as needed). Returns as `scan` does.
 */
__attribute__((export_name("reset"))) int32_t reset(uint32_t n, uint32_t expected) {
  uint32_t capacity = 1024u;
  while (capacity < expected * 2u && capacity < (1u << 28)) capacity *= 2u;
  stats[1] = -1;
  stats[2] = 0;
  stats[5] = 0;
  slot_count = 0;
  tokens = 0;
  action_tokens = 0;
  steps = n;
  first_reveal = -1;
  passed = 0;
  pending = 0;
  generation++;
  if (generation == 0) {
    /* wrapped after 2^32 resets: stale stamps could alias, so clear them */
    for (uint32_t i = 0; i <= slot_mask && slots != 0; i++) slots[i].gen = 0;
    generation = 1;
  }
  if (!array_reserve(&action_end, n, 0) || !array_reserve(&unrevealed_at, n, 0)) return done(0);
  for (uint32_t i = 0; i < n; i++) {
    unrevealed_at.at[i] = 0;
    action_end.at[i] = -1;
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

/*
 * A cheap 32-bit summary of a token's `len` (>= 1) bytes for the filter: its first and last 8 bytes (all of
 * them up to 16) and its length, one multiply. Branch-free; reads 8 bytes from `p` as `hash_bytes` does.
 */
static inline uint32_t sketch(const uint8_t *p, uint32_t len) {
  uint32_t head = len < 8u ? len : 8u;
  uint64_t first = load64(p) & (~0ull >> (64u - 8u * head));
  uint32_t long_token = len > 8u;
  uint64_t last = load64(p + (long_token ? len - 8u : 0u)) & (0ull - (uint64_t)long_token);
  uint64_t x = first + ((last << 29) | (last >> 35)) + len;
  return (uint32_t)((x * 0x9e3779b97f4a7c15ull) >> 32);
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

/* Tokens first seen in the action of step `passed` can no longer be revealed once the observations up to
 * step `upto - 1` are scanned: drops them from `pending` for every step up to `upto`. */
static void pass_to(uint32_t upto) {
  for (; passed <= upto && passed < steps; passed++) pending -= (uint32_t)unrevealed_at.at[passed];
  for (; drop_id < tokens && (uint32_t)token_state.at[2u * drop_id] < passed; drop_id++) filter_pass(drop_id);
}

/* Whether no observation after those scanned can change a verdict (see the module documentation). */
static inline int settled(void) { return first_reveal >= 0 && pending == 0; }

/*
 * Scans the `len` bytes at `address` (inside one of the buffers) for informative tokens, by `mode`:
 * - instruction: each token goes into the table (first seen in the instruction);
 * - action (the params of every step, from `scan_actions`; `position` is the first step): each token goes
 *   into the table, first seen in the step whose params hold it unless it was already there, and its id is
 *   appended to that step's list;
 * - observation (step `position`): each token is looked up; one not in the table, or one first seen in a
 *   later step's action and not revealed before, is revealed here (see the module documentation);
 * - collect: the tokens' [start, end) byte offsets go after `address + len` (for tests).
 * Returns 0 when memory ran out, else 1.
 */
static inline __attribute__((always_inline)) int32_t scan_text(uint32_t address, uint32_t len, int32_t mode, int32_t position) {
  stats[4] = 0;
  if (len == 0) return 1;
  const uint8_t *text = (const uint8_t *)(uintptr_t)address;
  uint32_t blocks = (len + 63u) >> 6;
  if (!reserve_blocks(blocks + 1u)) return 0;

  const v128_t c0 = wasm_i8x16_splat('0'), c10 = wasm_i8x16_splat(10);
  const v128_t ca = wasm_i8x16_splat('a'), c26 = wasm_i8x16_splat(26), c20 = wasm_i8x16_splat(0x20);
  const v128_t cu = wasm_i8x16_splat('_'), cdot = wasm_i8x16_splat('.'), cslash = wasm_i8x16_splat('/');
  const v128_t cdash = wasm_i8x16_splat('-');

  uint32_t *collected = (uint32_t *)(uintptr_t)(((uint32_t)(uintptr_t)text + len + 3u) & ~3u);
  int32_t found = 0;
  int32_t in_token = 0;
  uint32_t start = 0;
  uint64_t carry_word = 0, carry_member = 0;
  uint64_t any_high = 0;
  /* Classify a chunk of blocks, then walk it while its masks are still in the nearest cache (a long text,
   * such as all the actions of a trajectory, would otherwise be classified whole before any walking). The
   * walk of block b needs block b + 1's word, so the last block of a chunk is walked with the next one. */
  uint32_t b = 0;
  for (uint32_t c = 0; c < blocks; c += CHUNK_BLOCKS) {
    uint32_t chunk_end = c + CHUNK_BLOCKS < blocks ? c + CHUNK_BLOCKS : blocks;
    for (uint32_t x = c; x < chunk_end; x++) {
      uint64_t word = 0, join = 0, mark = 0, high = 0;
      for (uint32_t q = 0; q < 4u; q++) {
        v128_t v = wasm_v128_load(text + x * 64u + q * 16u);
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
      uint32_t valid = len - x * 64u;
      if (valid < 64u) {
        uint64_t keep = (1ull << valid) - 1ull;
        word &= keep;
        join &= keep;
        mark &= keep;
        high &= keep;
      }
      block_word[x] = word;
      block_join[x] = join;
      block_mark[x] = mark;
      block_high[x] = high;
      any_high |= high;
    }
    if (chunk_end == blocks) block_word[blocks] = 0;
    uint32_t walk_end = chunk_end == blocks ? blocks + 1u : chunk_end - 1u;
    for (; b < walk_end; b++) {
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
        if (mode == MODE_OBSERVATION && first_reveal >= 0) {
          /* The first reveal is known: only a pending token can matter, and the filter says whether this
           * may be one. Checked before the informative test, whose outcome would be a hard-to-predict
           * branch per token: the filter's is nearly always "no" (a pending token is informative). */
          if (((const uint8_t *)filter.at)[sketch(text + start, n) >> filter_shift] == 0u) continue;
        }
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
        uint32_t k = (uint32_t)key & slot_mask;
        if (mode == MODE_OBSERVATION) {
          /*
           * Branch-free for the two common outcomes, an empty slot (a token of no action) and the token's
           * own slot with nothing to reveal: which of them it is would otherwise be a coin-flip branch per
           * token. A slot that is neither (another key: a collision) moves on to the next.
           */
          for (;;) {
            const Slot *s = &slots[k];
            int live = s->gen == generation;
            int same = live & (s->key == key);
            if (live & !same) {
              k = (k + 1u) & slot_mask;
              continue;
            }
            /* in no action nor the instruction: first seen in an observation, this one or an earlier one */
            first_reveal = (!live & (first_reveal < 0)) ? position : first_reveal;
            /* the token's state, or one that reveals nothing (chosen by a mask: `?:` would become a branch
             * again; an empty slot's id is stale, so its address is computed but never read) */
            uintptr_t pick = (uintptr_t)0 - (uintptr_t)same;
            uintptr_t own = (uintptr_t)token_state.at + 8u * (uint32_t)s->id;
            int32_t *state = (int32_t *)((pick & own) | (~pick & (uintptr_t)no_token_state));
            int32_t first = state[0];
            if (first > position && state[1] < 0) {
              state[1] = position;
              filter_drop((uint32_t)s->id);
              unrevealed_at.at[first]--;
              pending--;
              if (first_reveal < 0) first_reveal = position;
              if (pending == 0) return 1;
            }
            break;
          }
          continue;
        }
        if (mode == MODE_ACTION) {
          /* the step whose params hold the token: tokens never cross a step's end (values end in a separator) */
          while (start >= action_span_end[position]) action_end.at[position++] = (int32_t)action_tokens;
        }
        Slot *s;
        for (;;) {
          s = &slots[k];
          if (s->gen != generation) {
            /* first sight */
            if ((slot_count + 1u) * 2u > slot_mask + 1u) {
              if (!table_grow()) return 0;
              k = (uint32_t)key & slot_mask;
              continue;
            }
            if (!array_reserve(&token_state, 2u * tokens + 2u, 2u * tokens) || !array_reserve(&token_sketch, tokens + 1u, tokens)) return 0;
            token_sketch.at[tokens] = (int32_t)sketch(text + start, n);
            s->gen = generation;
            s->key = key;
            s->id = (int32_t)tokens;
            slot_count++;
            token_state.at[2 * tokens] = mode == MODE_ACTION ? position : -1;
            token_state.at[2 * tokens + 1] = -1;
            tokens++;
            if (mode == MODE_ACTION) {
              unrevealed_at.at[position]++;
              pending++;
            }
            break;
          }
          if (s->key == key) break;
          k = (k + 1u) & slot_mask;
        }
        if (mode == MODE_ACTION) {
          /* an instruction token no earlier action used: this step acts on a word of the task */
          int32_t *first = &token_state.at[2u * (uint32_t)s->id];
          if (*first == -1) *first = -2 - (int32_t)position;
          if (!array_reserve(&action_ids, action_tokens + 1u, action_tokens)) return 0;
          action_ids.at[action_tokens++] = s->id;
        }
      }
    }
  }
  stats[4] = found;
  return 1;
}

/*
 * Scans the `len` bytes at `address`: the instruction, an observation (of step `position`, in step order,
 * after `scan_actions`), or collect mode (see `scan_text`; actions are scanned by `scan_actions`). An observation scan updates stats[1] and stats[2]. Returns 0 when memory ran
 * out, 2 when it grew, else 1.
 */
__attribute__((export_name("scan"))) int32_t scan(uint32_t address, uint32_t len, int32_t mode, int32_t position) {
  if (mode == MODE_OBSERVATION) {
    pass_to((uint32_t)position);
    if (settled()) {
      stats[2] = 1;
      return done(1);
    }
  }
  int32_t ok = mode == MODE_OBSERVATION ? scan_text(address, len, MODE_OBSERVATION, position)
              : mode == MODE_INSTRUCTION ? scan_text(address, len, MODE_INSTRUCTION, position)
                                         : scan_text(address, len, MODE_COLLECT, position);
  if (!ok) stats[5] = 1;
  if (mode == MODE_OBSERVATION) {
    /* the next observation can reveal only tokens first seen after its own step */
    pass_to((uint32_t)position + 1u);
    stats[1] = first_reveal;
    stats[2] = settled();
  }
  return done(ok);
}

/*
 * Scans the action params of every step, after the instruction and before any observation: the first
 * `len` bytes of buffer 1, where step i's params end at byte `ends[i]` of buffer 3 (u32). The steps'
 * params lie one after another, so one scan reads them all. Returns as `scan` does.
 */
__attribute__((export_name("scan_actions"))) int32_t scan_actions(uint32_t len) {
  action_span_end = (const uint32_t *)(uintptr_t)buffers[BUFFER_SPANS];
  instruction_tokens = tokens;
  int32_t ok = scan_text((uint32_t)(uintptr_t)buffers[BUFFER_ACTIONS], len, MODE_ACTION, 0);
  if (!ok) {
    stats[5] = 1;
    return done(0);
  }
  /* the steps after the last token's */
  uint32_t i = steps;
  while (i > 0 && action_end.at[i - 1] < 0) action_end.at[--i] = (int32_t)action_tokens;
  /* the filter of the pending tokens, all the actions' tokens for now: 8 slots per token, at least 256 */
  uint32_t slots_log2 = 8u;
  while ((1u << slots_log2) < 8u * (tokens - instruction_tokens) && slots_log2 < 28u) slots_log2++;
  uint32_t bytes = 1u << slots_log2;
  if (filter_dirty) {
    for (uint32_t w = 0; w < filter_bytes >> 2; w++) filter.at[w] = 0;
    filter_dirty = 0;
  }
  if (bytes > filter.capacity * 4u) {
    /* fresh memory: the bump allocator hands out bytes never used, and linear memory starts zeroed */
    if (!array_reserve(&filter, bytes >> 2, 0)) {
      stats[5] = 1;
      return done(0);
    }
  }
  filter_shift = 32u - slots_log2;
  filter_bytes = bytes;
  filter_dirty = 1;
  uint8_t *f = (uint8_t *)filter.at;
  int saturated = 0;
  for (uint32_t id = instruction_tokens; id < tokens; id++) {
    uint8_t *c = f + ((uint32_t)token_sketch.at[id] >> filter_shift);
    if (*c != 255u) (*c)++;
    else saturated = 1;
  }
  filter_saturated = saturated;
  drop_id = instruction_tokens;
  return done(1);
}

/*
 * After the observations: for each step, its action's informative tokens, how many of them an earlier
 * observation revealed, which step revealed the first of those (-1: none), how many are new in it (first
 * seen there), and how many are the instruction's and used by no earlier action, as five i32 per step at the
 * address in stats[0]. Returns as `scan` does.
 */
__attribute__((export_name("finish"))) int32_t finish(void) {
  /* the tokens still in the filter leave it, so it is all 0 again for the next trajectory */
  for (; drop_id < tokens; drop_id++) filter_pass(drop_id);
  if (!filter_saturated) filter_dirty = 0;
  if (!array_reserve(&results, 5u * steps, 0)) return done(0);
  int32_t *out = results.at;
  uint32_t j = 0;
  for (uint32_t i = 0; i < steps; i++) {
    uint32_t end = (uint32_t)action_end.at[i];
    int32_t used = 0, from = -1, fresh = 0, task = 0;
    out[5 * i] = (int32_t)(end - j);
    for (; j < end; j++) {
      uint32_t id = (uint32_t)action_ids.at[j];
      int32_t revealed = token_state.at[2u * id + 1u];
      int32_t first = token_state.at[2u * id];
      /* first seen in this action and in no observation before */
      fresh += (first == (int32_t)i) & (revealed < 0);
      task += first == -2 - (int32_t)i;
      if (revealed >= 0) {
        /* revealed before its first action, so by a step before this one */
        if (from < 0) from = revealed;
        used++;
      }
    }
    out[5 * i + 1] = used;
    out[5 * i + 2] = from;
    out[5 * i + 3] = fresh;
    out[5 * i + 4] = task;
  }
  stats[0] = (int32_t)(uintptr_t)out;
  stats[1] = first_reveal;
  return done(1);
}
