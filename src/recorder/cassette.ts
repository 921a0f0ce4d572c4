import { canonicalJson } from '../core/canonical.js';
import type { PathProblem } from './openai-messages.js';
import type { JsonObject } from './values.js';
import { arr, baseName, isRecord, num, rec, str, toIsoTimestamp } from './values.js';
import type { ConversionItem, ConvertContext } from './adapter.js';
import { problem } from './adapter.js';
import { convertDocuments } from './document.js';

/**
 * VCR cassettes (YAML, as written by vcrpy and pydantic-ai's serializer): recorded HTTP interactions
 * with an LLM API. Shared by the OpenAI and Anthropic cassette adapters.
 *
 * Each request carries the whole conversation so far, so one agent run is a sequence of interactions
 * whose message lists grow; a request whose messages do not extend the previous one's starts a new
 * conversation (a cassette may hold several runs).
 */

/** One recorded call: its parsed request and response bodies. */
export interface Interaction {
  index: number;
  uri: string | undefined;
  status: number | undefined;
  request: JsonObject;
  response: JsonObject;
  /** Response time from the `date` header, when recorded. */
  responseDate: string | undefined;
  /** Response headers worth keeping (`openai-processing-ms`, `request-id`…). */
  responseHeaders: JsonObject;
}

/** The interactions of a parsed cassette, with problems for those whose bodies could not be read. */
export function readInteractions(doc: unknown): { interactions: Interaction[]; problems: PathProblem[] } {
  const problems: PathProblem[] = [];
  const interactions: Interaction[] = [];
  arr(rec(doc).interactions).forEach((raw, index) => {
    const at = `$.interactions[${index}]`;
    const request = rec(rec(raw).request);
    const response = rec(rec(raw).response);
    const requestBody = body(request);
    const responseBody = body(response);
    if (!requestBody) {
      problems.push({ path: `${at}.request`, message: 'request has no JSON body (parsed_body or body.string); interaction skipped', severity: 'error' });
      return;
    }
    if (!responseBody) {
      problems.push({ path: `${at}.response`, message: 'response has no JSON body; interaction skipped', severity: 'error' });
      return;
    }
    const headers = rec(response.headers);
    const kept: JsonObject = {};
    for (const [k, v] of Object.entries(headers)) {
      if (/processing-ms|request-id|ratelimit|retry-after/i.test(k)) kept[k] = Array.isArray(v) && v.length === 1 ? v[0] : v;
    }
    interactions.push({
      index,
      uri: str(request.uri),
      status: num(rec(response.status).code),
      request: requestBody,
      response: responseBody,
      responseDate: toIsoTimestamp(headerValue(headers, 'date')),
      responseHeaders: kept,
    });
  });
  return { interactions, problems };
}

/**
 * Splits interactions into conversations: the next request continues the current conversation when its
 * message list is longer and starts with the same first message.
 */
export function splitConversations(interactions: readonly Interaction[]): Interaction[][] {
  const out: Interaction[][] = [];
  let current: Interaction[] = [];
  let previous: unknown[] | undefined;
  for (const it of interactions) {
    const messages = arr(it.request.messages);
    const continues =
      previous !== undefined && messages.length > previous.length && canonicalJson(messages[0]) === canonicalJson(previous[0]);
    if (!continues && current.length > 0) {
      out.push(current);
      current = [];
    }
    current.push(it);
    previous = messages;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** True when the head of a file looks like a VCR cassette calling `host`. */
export function looksLikeCassette(head: string, firstRecord: unknown, host: RegExp): boolean {
  if (isRecord(firstRecord)) {
    const first = rec(arr(firstRecord.interactions)[0]);
    return Object.keys(first).length > 0 && host.test(str(rec(first.request).uri) ?? JSON.stringify(rec(first.request).headers ?? {}));
  }
  return /^interactions:\s*$/m.test(head) && host.test(head);
}

function body(part: JsonObject): JsonObject | undefined {
  if (isRecord(part.parsed_body)) return part.parsed_body;
  const raw = isRecord(part.body) ? part.body.string : part.body;
  if (typeof raw === 'string' && raw.trim().startsWith('{')) {
    try {
      const value = JSON.parse(raw) as unknown;
      return isRecord(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function headerValue(headers: JsonObject, name: string): unknown {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  return undefined;
}

/**
 * Converts a cassette file: reads the YAML, reports malformed interactions, splits the traffic into
 * conversations and converts each with `convertConversation` (task id = file name, `#n` when a cassette
 * holds several). `api` names the API in the "nothing found" problem.
 */
export function convertCassetteFile(
  path: string,
  ctx: ConvertContext,
  api: string,
  convertConversation: (conversation: readonly Interaction[], taskId: string, ctx: ConvertContext) => Iterable<ConversionItem>,
): AsyncGenerator<ConversionItem> {
  return convertDocuments(path, ctx, (doc, line) => convertCassette(doc, line, path, ctx, api, convertConversation), { yaml: true });
}

function* convertCassette(
  doc: unknown,
  line: number | undefined,
  path: string,
  ctx: ConvertContext,
  api: string,
  convertConversation: (conversation: readonly Interaction[], taskId: string, ctx: ConvertContext) => Iterable<ConversionItem>,
): Generator<ConversionItem> {
  const { interactions, problems } = readInteractions(doc);
  for (const p of problems) yield problem(ctx.file, p.path, p.message, { severity: p.severity });
  const conversations = splitConversations(interactions.filter((it) => Array.isArray(it.request.messages)));
  if (conversations.length === 0) {
    yield problem(ctx.file, '$.interactions', `no ${api} interactions with request messages found`);
    return;
  }
  // A cassette per line of a JSONL file is named by its line.
  const base = `${baseName(path, ['.yaml', '.yml', '.jsonl'])}${line !== undefined ? `:${line}` : ''}`;
  for (const [n, conversation] of conversations.entries()) {
    yield* convertConversation(conversation, conversations.length > 1 ? `${base}#${n + 1}` : base, ctx);
  }
}
