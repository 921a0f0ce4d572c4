import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import type { TrajectoryStep } from '../../core/trajectory.js';
import type { RuleContext } from './context.js';
import { HashTable64, Interner } from './hash.js';
import { slabArray } from './slab.js';
import { scanParamTokens, scanTokens, type TokenSink } from './tokens.js';

/**
 * The information-use rule's index of informative tokens ({@link scanTokens}): where each distinct token was
 * seen first — the task instruction, an action of step k, or the observation of step k — and so, for each
 * step, how many of its action's tokens an earlier observation revealed.
 *
 * Two implementations give the same answers: {@link WasmRevealIndex} (the default; the scanner and the
 * table in WebAssembly with SIMD, `wasm/tokens.c`, built by `scripts/build-wasm.sh`) and {@link JsRevealIndex}
 * (the reference, in JavaScript, used when the module is not built). They reach them differently: the
 * reference reads the trajectory in order and records every token, the module indexes the actions' tokens
 * first and only looks the observations' tokens up.
 */
export interface RevealIndex {
  /**
   * Indexes a trajectory: its instruction, and every step's action params (the values of strings and
   * numbers, at any depth; not keys) and observation. The WebAssembly index needs the context's calls
   * prepared first ({@link WasmRevealIndex.prepareCalls}).
   */
  reveal(ctx: RuleContext): StepReveals;
}

/** What {@link RevealIndex.reveal} found. */
export interface StepReveals {
  /**
   * Five int32 per step, at 5i … 5i + 4: the informative tokens of step i's action params, how many of
   * those an earlier observation revealed, the step that revealed the first of them (-1: none), how many
   * are new in it (first seen there: in neither the instruction, an earlier action nor an earlier
   * observation), and how many are the instruction's and used by no earlier action. Valid until the index
   * is used again.
   */
  readonly steps: Int32Array;
  /** The first step whose observation revealed a token (first seen there), or -1. */
  readonly firstReveal: number;
}

// First-appearance codes of the reference: 1 instruction (no action used it yet; -2 - k once step k's action
// did); 2 + 2k first seen in the action of step k; 3 + 2k first seen in the observation of step k (odd and
// >= 3: revealed).
const FROM_INSTRUCTION = 1;
const MODE_INSTRUCTION = 0;
const MODE_ACTION = 1;
const MODE_OBSERVATION = 2;
const MODE_COLLECT = 3;

/**
 * The reference implementation, the rule's definition read literally: {@link scanTokens} over the
 * instruction, then each step's params and observation in order, into a {@link HashTable64} of every
 * token's first appearance.
 */
export class JsRevealIndex implements RevealIndex, TokenSink {
  private readonly table = new HashTable64(1024);
  private out = new Int32Array(0);
  private mode = MODE_INSTRUCTION;
  private position = 0;
  private count = 0;
  private used = 0;
  private from = -1;
  private fresh = 0;
  private task = 0;
  private revealed = 0;

  reveal(ctx: RuleContext): StepReveals {
    const { steps, instruction } = ctx;
    const n = steps.length;
    // Distinct tokens run at roughly one per 32–64 characters of text; the table grows if this is low.
    let chars = instruction.length;
    for (let i = 0; i < n; i++) chars += (steps[i] as TrajectoryStep).observation.length;
    this.table.reset((chars >> 5) + 16);
    this.revealed = 0;
    if (this.out.length < 5 * n) this.out = new Int32Array(5 * n);
    const out = this.out;
    this.mode = MODE_INSTRUCTION;
    scanTokens(instruction, this);
    let firstReveal = -1;
    let previous: string | undefined;
    for (let i = 0; i < n; i++) {
      const step = steps[i] as TrajectoryStep;
      this.mode = MODE_ACTION;
      this.position = i;
      this.count = 0;
      this.used = 0;
      this.from = -1;
      this.fresh = 0;
      this.task = 0;
      scanParamTokens(step.action.params, this);
      out[5 * i] = this.count;
      out[5 * i + 1] = this.used;
      out[5 * i + 2] = this.from;
      out[5 * i + 3] = this.fresh;
      out[5 * i + 4] = this.task;
      // An observation equal to the previous step's adds nothing: its tokens were recorded then.
      if (step.observation === previous) continue;
      previous = step.observation;
      this.mode = MODE_OBSERVATION;
      scanTokens(step.observation, this);
      if (firstReveal < 0 && this.revealed > 0) firstReveal = i;
    }
    return { steps: out, firstReveal };
  }

  /** @internal the scanner's callback */
  token(h1: number, h2: number): void {
    const t = this.table;
    const slot = t.upsert(h1, h2);
    if (this.mode === MODE_ACTION) {
      this.count++;
      if (t.inserted) {
        t.setValue(slot, 2 + 2 * this.position);
        this.fresh++;
      } else {
        const v = t.value(slot);
        // Every occurrence counts, as in the module: a token first seen earlier in this same action is new in
        // it, and so is an instruction token that this action is the first to use (its value records which).
        if (v === 2 + 2 * this.position) this.fresh++;
        else if (v === FROM_INSTRUCTION) t.setValue(slot, -2 - this.position);
        if (v === FROM_INSTRUCTION || v === -2 - this.position) this.task++;
        if ((v & 1) === 1 && v >= 3) {
          this.used++;
          if (this.from < 0) this.from = (v - 3) >> 1;
        }
      }
    } else if (t.inserted) {
      if (this.mode === MODE_OBSERVATION) {
        t.setValue(slot, 3 + 2 * this.position);
        this.revealed++;
      } else {
        t.setValue(slot, FROM_INSTRUCTION);
      }
    }
  }
}

/**
 * The part of the global `WebAssembly` API used here (the project's TypeScript libs, ES2023 + node, do not
 * declare it).
 */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
/** A compiled WebAssembly module (`WebAssembly.Module`; opaque here). */
export interface WasmModule {
  readonly [Symbol.toStringTag]: string;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule) => { exports: unknown };
}

function wasmApi(): WasmApi {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) throw new Error('this JavaScript runtime has no WebAssembly');
  return api;
}

interface TokensExports {
  memory: WasmMemory;
  abi_version?(): number;
  reserve(which: number, bytes: number, keep: number): number;
  stats_address(): number;
  reset(steps: number, expected: number): number;
  scan(address: number, len: number, mode: number, position: number): number;
  scan_actions(len: number): number;
  finish(): number;
  hash_call(members: number, tool: number, seed: number): void;
}

/** The module's buffers (`reserve` in tokens.c). */
const BUFFER_INPUT = 0;
const BUFFER_ACTIONS = 1;
const BUFFER_MEMBERS = 2;
const BUFFER_SPANS = 3;

/** A buffer in the module's memory: which one, where it is now, and how many bytes it has room for. */
interface Region {
  readonly which: number;
  address: number;
  capacity: number;
}

/** Type tags of a call's members for `hash_call` (a string and a number with the same text differ). */
const TAG_STRING = 1;
const TAG_NUMBER = 2;
const TAG_TRUE = 3;
const TAG_FALSE = 4;
const TAG_NULL = 5;
/** u32 words per member descriptor: tag, key id, value offset, value length. */
const MEMBER_WORDS = 4;

/** Byte written between two param values, so a token never runs from one into the next. */
const SEPARATOR = 0;
/** Strings up to this long are copied into the module's memory by a JavaScript loop when ASCII. */
export const SHORT_STRING = 64;
const ENCODER = new TextEncoder();

/** `String.prototype.isWellFormed` (Node 20; not in the ES2023 lib): no lone surrogates. O(1) for one-byte strings. */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Tool names and param keys past which {@link WasmRevealIndex.prepareCalls} starts its table of their ids
 * afresh (logs with generated tool names or keys).
 */
const NAME_IDS_LIMIT = 4096;

/** The call hashes of a trajectory's steps ({@link WasmRevealIndex.prepareCalls}). */
export interface PreparedCalls {
  /** Step i's hash as two int32 lanes at [2i] and [2i + 1]; 0, 0 for the steps listed in `nested`. */
  readonly hashes: Int32Array;
  /** Steps whose params hold an array, an object or a value JSON has no form for: not hashed here. */
  readonly nested: readonly number[];
}

/**
 * The WebAssembly implementation (`wasm/tokens.c`, built into {@link TOKENS_WASM}): texts are written
 * into the module's memory as UTF-8 and scanned there, 64 bytes per step of branch-free SIMD
 * classification, with the table in the module's memory too. It about halves the information-use rule's
 * time against {@link JsRevealIndex} on code-like text (docs/reward.md, "Cost").
 *
 * It indexes inside out: the instruction's and every action's tokens go into the table first, and each
 * observation then only looks its tokens up, marking the action tokens it reveals. Once the first revealing
 * observation is known and no action token is left that a later observation could reveal first, the
 * remaining observations are not scanned at all (`wasm/tokens.c` has the argument); until then, a filter of
 * the action tokens still pending turns nearly every other observation token away before any table work.
 *
 * It also serves the redundancy rule: {@link prepareCalls} writes a trajectory's action params into the
 * module once and hashes every call there, and {@link reveal} scans those same bytes for tokens, so the
 * params are read once for both rules.
 */
export class WasmRevealIndex implements RevealIndex {
  private readonly wasm: TokensExports;
  /** The module's memory, and a view of it; renewed when it grows (`views`). */
  private memory = new ArrayBuffer(0);
  private bytes: Buffer = Buffer.alloc(0);
  private readonly input: Region = { which: BUFFER_INPUT, address: 0, capacity: 0 };
  private readonly actions: Region = { which: BUFFER_ACTIONS, address: 0, capacity: 0 };
  private readonly membersRegion: Region = { which: BUFFER_MEMBERS, address: 0, capacity: 0 };
  private readonly spansRegion: Region = { which: BUFFER_SPANS, address: 0, capacity: 0 };
  /** The start of the input buffer, for `encodeInto`. */
  private head = new Uint8Array(0);
  private members = new Uint32Array(0);
  private spans = new Uint32Array(0);
  private results = new Int32Array(0);
  private stats = new Int32Array(8);
  /** What {@link prepareCalls} last prepared, and for whom. */
  private preparedFor: object | undefined;
  private prepared: PreparedCalls = { hashes: new Int32Array(0), nested: [] };
  /**
   * Step i's params end at byte callEnd[i] of the actions buffer (i < the prepared steps), and begin where
   * the previous step's end.
   */
  private callEnd = new Uint32Array(0);
  /**
   * Ids of tool names and param keys for the call hashes, kept from one trajectory to the next: they are a
   * few dozen strings, which a table per trajectory would spend most of its time learning again. Ids only
   * need to agree within a trajectory.
   */
  private names = new Interner();

  constructor(module: WasmModule) {
    this.wasm = new (wasmApi().Instance)(module).exports as TokensExports;
    this.reserve(this.input, 1 << 16, 0);
    this.reserve(this.actions, 1 << 16, 0);
    this.reserve(this.membersRegion, 1 << 10, 0);
    this.reserve(this.spansRegion, 1 << 10, 0);
    this.check(this.wasm.reset(0, 1024));
  }

  /**
   * {@link RevealIndex.reveal} for the context whose calls {@link prepareCalls} prepared last.
   *
   * @throws RevealIndexMemoryError when the module's memory cannot hold the trajectory's tokens.
   */
  reveal(ctx: RuleContext): StepReveals {
    if (this.preparedFor !== ctx) throw new Error('WasmRevealIndex.reveal: prepare the context\'s calls first (prepareCalls)');
    const { steps, instruction } = ctx;
    const n = steps.length;
    // The steps' params lie one after another in the actions buffer; the module is told where each ends.
    // (`prepareCalls` keeps the ends in JavaScript: its writes may grow memory, which detaches any view.)
    if (4 * n > this.spansRegion.capacity) this.reserve(this.spansRegion, 4 * n, 0);
    const spans = this.spans;
    const ends = this.callEnd;
    for (let i = 0; i < n; i++) spans[i] = ends[i] as number;
    const actionBytes = n > 0 ? (ends[n - 1] as number) : 0;
    // The table holds the instruction's and the actions' tokens, sized for one distinct token per 8 bytes
    // (it grows past that).
    this.check(this.wasm.reset(n, Math.min(((instruction.length + actionBytes) >> 3) + 16, 1 << 26)));
    this.scanInput(this.writeWhole(instruction), MODE_INSTRUCTION, 0);
    this.check(this.wasm.scan_actions(actionBytes));
    let previous: string | undefined;
    for (let i = 0; i < n; i++) {
      // An observation equal to the previous step's can reveal nothing: that one was scanned (`===` on the
      // same string object is a pointer comparison; different lengths differ at once).
      const observation = (steps[i] as TrajectoryStep).observation;
      if (observation === previous) continue;
      previous = observation;
      this.scanInput(this.writeWhole(observation), MODE_OBSERVATION, i);
      // Settled: no later observation can change a verdict.
      if (this.stats[2] === 1) break;
    }
    this.check(this.wasm.finish());
    const stats = this.stats;
    // The results array moves only when it grows: its view is kept until then, or until memory grows
    // (`views`). It has 1,024 elements at least, the smallest array the module allocates.
    const at = stats[0] as number;
    let results = this.results;
    if (results.byteOffset !== at || results.length < 5 * n) {
      results = new Int32Array(this.memory, at, Math.max(5 * n, 1024));
      this.results = results;
    }
    return { steps: results, firstReveal: stats[1] as number };
  }

  /**
   * Writes the action params of every step into the module's memory and hashes each call (tool name and
   * params; key order and `undefined` members ignored: equal canonical JSON, equal hash), with `seed`
   * choosing the hash family and the tool names and keys entering as ids (`names`). Steps whose
   * params hold an array, an object or a value JSON has no form for are listed in `nested` and left for the
   * caller.
   *
   * Done once per `owner` (a rule context): a second call for the same owner returns the same result, and
   * {@link reveal} then scans the prepared bytes. The result stays valid until the next call for another
   * owner.
   *
   * @throws RevealIndexMemoryError when the module's memory cannot hold the params.
   */
  prepareCalls(owner: object, steps: readonly { action: { tool: string; params: Record<string, unknown> } }[], seed: number): PreparedCalls {
    if (this.preparedFor === owner) return this.prepared;
    this.preparedFor = undefined;
    if (this.names.size >= NAME_IDS_LIMIT) this.names = new Interner();
    const ids = this.names;
    const n = steps.length;
    const hashes = slabArray(Int32Array, 2 * n);
    const nested: number[] = [];
    // Where each step's bytes end: read back by `reveal` until the next trajectory, so one array serves
    // every trajectory, growing with the longest.
    if (this.callEnd.length < n) this.callEnd = new Uint32Array(Math.max(n, 2 * this.callEnd.length));
    const ends = this.callEnd;
    const actions = this.actions;
    let end = 0;
    for (let i = 0; i < n; i++) {
      const { tool, params } = (steps[i] as (typeof steps)[number]).action;
      let count = 0;
      let plain = true;
      for (const key in params) {
        if (!Object.prototype.hasOwnProperty.call(params, key)) continue;
        const v = params[key];
        if (v === undefined) continue;
        const start = end;
        let tag: number;
        let length = 0;
        if (typeof v === 'string' || typeof v === 'number') {
          tag = typeof v === 'string' ? TAG_STRING : TAG_NUMBER;
          // The bytes `reveal` scans; the value's hash covers them without the separator after them.
          end = this.writeValue(actions, v, end);
          length = end - 1 - start;
        } else if (typeof v === 'boolean') {
          tag = v ? TAG_TRUE : TAG_FALSE;
        } else if (v === null) {
          tag = TAG_NULL;
        } else {
          plain = false;
          end = this.writeValue(actions, v, end);
          continue;
        }
        if ((count + 1) * MEMBER_WORDS * 4 > this.membersRegion.capacity) this.reserve(this.membersRegion, 2 * (count + 1) * MEMBER_WORDS * 4, count * MEMBER_WORDS * 4);
        // Read after the writes: one that grows memory renews the views.
        const m = this.members;
        const at = count * MEMBER_WORDS;
        m[at] = tag;
        m[at + 1] = ids.id(key);
        m[at + 2] = start;
        m[at + 3] = length;
        count++;
      }
      ends[i] = end;
      if (!plain) {
        nested.push(i);
        continue;
      }
      this.wasm.hash_call(count, ids.id(tool), seed);
      const stats = this.stats;
      hashes[2 * i] = stats[6] as number;
      hashes[2 * i + 1] = stats[7] as number;
    }
    this.prepared = { hashes, nested };
    this.preparedFor = owner;
    return this.prepared;
  }

  /**
   * The informative tokens of `text` as strings, found by the WebAssembly scanner (for tests: they must be
   * those of `informativeTokens`).
   */
  tokens(text: string): string[] {
    // Room for the UTF-8 text and two offsets per possible token after it.
    this.reserve(this.input, 3 * text.length + 8 * text.length + 16, 0);
    const len = this.writeWhole(text);
    this.scanInput(len, MODE_COLLECT, 0);
    const found = this.stats[4] as number;
    const offsets = new Uint32Array(this.wasm.memory.buffer, this.input.address + ((len + 3) & ~3), 2 * found);
    // Byte offset -> UTF-16 offset, with the byte lengths the writers use (4 bytes for a surrogate pair).
    const unitAt = new Int32Array(len + 1);
    let byte = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      const pair = c >= 0xd800 && c < 0xdc00 && i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) < 0xe000;
      unitAt[byte] = i;
      byte += c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
      if (pair) i++;
    }
    unitAt[byte] = text.length;
    const out: string[] = [];
    for (let k = 0; k < found; k++) out.push(text.slice(unitAt[offsets[2 * k] as number], unitAt[offsets[2 * k + 1] as number]));
    return out;
  }

  /**
   * Scans the first `len` bytes of the input buffer. (Its address is read here, after the write that may
   * have moved the buffer.)
   */
  private scanInput(len: number, mode: number, position: number): void {
    this.check(this.wasm.scan(this.input.address, len, mode, position));
  }

  /** Writes `text` as UTF-8 at the start of the input buffer; returns its length in bytes. */
  private writeWhole(text: string): number {
    if (3 * text.length + 1 > this.input.capacity) this.reserve(this.input, 3 * text.length + 1, 0);
    if (!isWellFormed(text)) return this.writeWtf8(this.input, text, 0);
    // `encodeInto` into a view kept for the start of the buffer: no view to create, unlike `write` below.
    return ENCODER.encodeInto(text, this.head).written;
  }

  /** Writes `text` as UTF-8 at `offset` of a buffer; returns the offset after it. */
  private write(region: Region, text: string, offset: number): number {
    const n = text.length;
    // UTF-8 takes at most 3 bytes per UTF-16 code unit; one more for a separator.
    const need = offset + 3 * n + 1;
    if (need > region.capacity) this.reserve(region, need, offset);
    const bytes = this.bytes;
    const at = region.address + offset;
    if (n <= SHORT_STRING) {
      // Short strings (paths, commands, patterns) are copied here: `Buffer.write` costs more to call than
      // this loop costs to run. A non-ASCII character hands the string over to it.
      let i = 0;
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c >= 0x80) break;
        bytes[at + i] = c;
      }
      if (i === n) return offset + n;
    }
    if (!isWellFormed(text)) return this.writeWtf8(region, text, offset);
    return offset + bytes.write(text, at, region.capacity - offset, 'utf8');
  }

  /**
   * Writes a string with lone surrogates as WTF-8: UTF-8, except that a lone surrogate gets its own 3-byte
   * sequence instead of U+FFFD, so distinct strings stay distinct (as the reference scanner sees them).
   * Room for 3 bytes per code unit is reserved by the caller.
   */
  private writeWtf8(region: Region, text: string, offset: number): number {
    const bytes = this.bytes;
    let at = region.address + offset;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      let c = text.charCodeAt(i);
      if (c < 0x80) {
        bytes[at++] = c;
      } else if (c < 0x800) {
        bytes[at++] = 0xc0 | (c >> 6);
        bytes[at++] = 0x80 | (c & 63);
      } else {
        if (c >= 0xd800 && c < 0xdc00 && i + 1 < n) {
          const d = text.charCodeAt(i + 1);
          if (d >= 0xdc00 && d < 0xe000) {
            c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
            i++;
            bytes[at++] = 0xf0 | (c >> 18);
            bytes[at++] = 0x80 | ((c >> 12) & 63);
            bytes[at++] = 0x80 | ((c >> 6) & 63);
            bytes[at++] = 0x80 | (c & 63);
            continue;
          }
        }
        bytes[at++] = 0xe0 | (c >> 12);
        bytes[at++] = 0x80 | ((c >> 6) & 63);
        bytes[at++] = 0x80 | (c & 63);
      }
    }
    return at - region.address;
  }

  /** Writes the decimal digits of a non-negative int32 (line numbers, counts) as `String` would. */
  private writeInt(region: Region, value: number, offset: number): number {
    if (offset + 12 > region.capacity) this.reserve(region, offset + 12, offset);
    const bytes = this.bytes;
    let digits = 1;
    for (let v = value; v >= 10; v = (v / 10) | 0) digits++;
    let at = region.address + offset + digits;
    let v = value;
    do {
      const q = (v / 10) | 0;
      bytes[--at] = 48 + v - q * 10;
      v = q;
    } while (v > 0);
    return offset + digits;
  }

  /** Writes every string and number of `value` (at any depth), each followed by a separator. */
  private writeValue(region: Region, value: unknown, offset: number): number {
    if (typeof value === 'string') {
      offset = this.write(region, value, offset);
    } else if (typeof value === 'number') {
      offset = (value | 0) === value && value >= 0 ? this.writeInt(region, value, offset) : this.write(region, String(value), offset);
    } else if (Array.isArray(value)) {
      for (const v of value) offset = this.writeValue(region, v, offset);
      return offset;
    } else if (value !== null && typeof value === 'object') {
      const o = value as Record<string, unknown>;
      for (const key in o) {
        if (Object.prototype.hasOwnProperty.call(o, key)) offset = this.writeValue(region, o[key], offset);
      }
      return offset;
    } else {
      return offset;
    }
    this.bytes[region.address + offset] = SEPARATOR;
    return offset + 1;
  }

  /** Room for `bytes` bytes in a buffer, keeping its first `keep` bytes. */
  private reserve(region: Region, bytes: number, keep: number): void {
    const at = this.wasm.reserve(region.which, bytes, keep);
    if (at === 0) throw outOfMemory();
    region.address = at;
    region.capacity = Math.max(bytes, region.capacity);
    this.views();
  }

  /**
   * Acts on what `reset`/`scan` returned: 0 memory exhausted; 2 memory grew (for the table or the masks),
   * which replaced its buffer, so the views are renewed.
   */
  private check(status: number): void {
    if (status === 2) this.views();
    else if (status === 0) throw outOfMemory();
  }

  private views(): void {
    const buffer = this.wasm.memory.buffer;
    this.memory = buffer;
    this.bytes = Buffer.from(buffer);
    this.head = new Uint8Array(buffer, this.input.address, this.input.capacity);
    this.members = new Uint32Array(buffer, this.membersRegion.address, this.membersRegion.capacity >> 2);
    this.spans = new Uint32Array(buffer, this.spansRegion.address, this.spansRegion.capacity >> 2);
    this.results = new Int32Array(0);
    this.stats = new Int32Array(buffer, this.wasm.stats_address(), 8);
  }
}

/**
 * The WebAssembly index ran out of memory (a wasm32 module has at most 4 GiB: a trajectory with gigabytes of
 * text). The index stays usable for the next trajectory; the rule scores this one with {@link JsRevealIndex}.
 */
export class RevealIndexMemoryError extends Error {
  constructor() {
    super('information-use token index: WebAssembly memory exhausted (a trajectory with gigabytes of text?)');
    this.name = 'RevealIndexMemoryError';
  }
}

function outOfMemory(): Error {
  return new RevealIndexMemoryError();
}

let shared: RevealIndex | undefined;

/**
 * The process's index (rules run synchronously and never re-enter, so one is reused): the WebAssembly one,
 * or the JavaScript reference, with a warning, when the module is not built or cannot be instantiated here.
 */
export function sharedRevealIndex(): RevealIndex {
  if (shared === undefined) {
    try {
      shared = new WasmRevealIndex(tokensModule());
    } catch (err) {
      process.emitWarning(`the WebAssembly token index is unavailable, so the reward rules use the slower JavaScript one: ${(err as Error).message}`, { code: 'GYMFLOW_NO_WASM' });
      shared = new JsRevealIndex();
    }
  }
  return shared;
}

/** Where `scripts/build-wasm.sh` puts the token index module (`build/wasm/tokens.wasm` of the repository). */
export const TOKENS_WASM = join(PACKAGE_ROOT, 'build', 'wasm', 'tokens.wasm');

/**
 * The `abi_version` of `wasm/tokens.c` this code reads (its exports, buffers and result layout). A module built
 * from another version of the source (a checkout updated without `npm run setup`) would be read with the wrong
 * layout and give wrong verdicts without an error, so it is refused.
 */
export const TOKENS_ABI_VERSION = 3;

let compiled: WasmModule | undefined;

/**
 * The compiled {@link TOKENS_WASM}, checked to be of {@link TOKENS_ABI_VERSION}.
 *
 * @throws Error naming the file and how to build it when it is missing or was built from another version.
 */
export function tokensModule(): WasmModule {
  if (compiled === undefined) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(TOKENS_WASM);
    } catch {
      throw new Error(`${TOKENS_WASM} is not built (run \`npm run setup\`, or \`bash scripts/build-wasm.sh\` with clang and lld installed)`);
    }
    compiled = checkedTokensModule(bytes, TOKENS_WASM);
  }
  return compiled;
}

/**
 * Compiles a token index module (`file` names it in errors) and checks its `abi_version`.
 *
 * @throws Error naming `file` when it was built from another version of `wasm/tokens.c`.
 */
export function checkedTokensModule(bytes: Uint8Array, file: string): WasmModule {
  const module = new (wasmApi().Module)(bytes);
  const version = (new (wasmApi().Instance)(module).exports as TokensExports).abi_version?.();
  if (version !== TOKENS_ABI_VERSION) {
    throw new Error(
      `${file} was built from another version of tokens.c (ABI ${version ?? 'from before versions'}; this code reads ${TOKENS_ABI_VERSION}): rebuild it with \`npm run setup\` or \`bash scripts/build-wasm.sh\``,
    );
  }
  return module;
}
