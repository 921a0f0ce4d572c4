/**
 * Parsing YAML text into plain data, with every way it can fail reported as a message and a line rather than
 * thrown. `yaml`'s `toJS` throws on an alias with no anchor before it (`*a`) and on too many aliases, and
 * builds a cyclic value from an alias inside its own anchor (`a: &a [*a]`), which nothing downstream can
 * serialise; a key that is a mapping or a list (`? a: b`) it turns into a string of several lines, with a warning
 * on stderr. All four are the input's fault, so they are problems like a syntax error.
 */
import { isCollection, isSeq, LineCounter, parseDocument, visit, type Document, type Node as YamlNode } from 'yaml';

/** The value of a YAML document, with the parsed document and its line counter for locating paths in it. */
export type YamlParse =
  | { ok: true; value: unknown; doc: Document.Parsed; lines: LineCounter }
  | { ok: false; message: string; line: number | undefined };

/** Aliases a document may expand (the library's default is 100); more is treated as an expansion attack. */
export const MAX_YAML_ALIASES = 1000;

/** Parses YAML (or JSON, a subset) text; never throws. */
export function parseYamlText(text: string): YamlParse {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const lineAt = (offset: number | undefined): number | undefined => (offset === undefined ? undefined : lines.linePos(offset).line);
  const first = doc.errors[0];
  if (first) return { ok: false, message: first.message.split('\n', 1)[0] ?? first.message, line: lineAt(first.pos[0]) };
  const bad = badNode(doc);
  if (bad) return { ok: false, message: bad.message, line: lineAt(bad.offset) };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) as unknown, doc, lines };
  } catch (err) {
    return { ok: false, message: (err as Error).message.split('\n', 1)[0] ?? String(err), line: undefined };
  }
}

/** The first alias with no anchor before it or inside the node its anchor names (a cycle), or key that is a collection. */
function badNode(doc: Document.Parsed): { message: string; offset: number | undefined } | undefined {
  let found: { message: string; offset: number | undefined } | undefined;
  visit(doc, {
    Pair(_key, pair) {
      if (!isCollection(pair.key)) return undefined;
      found = { message: `a key is a ${isSeq(pair.key) ? 'list' : 'mapping'}; keys must be plain values (a \`?\` at the start of a line starts such a key)`, offset: pair.key.range?.[0] };
      return visit.BREAK;
    },
    Alias(_key, alias, path) {
      const target = alias.resolve(doc);
      if (target === undefined) {
        found = { message: `alias *${alias.source} has no anchor &${alias.source} before it`, offset: alias.range?.[0] };
        return visit.BREAK;
      }
      // Anchors come before their aliases, so an alias can only loop back through one of its own ancestors.
      if (path.includes(target as unknown as YamlNode)) {
        found = { message: `alias *${alias.source} is inside the node its anchor names (a cycle)`, offset: alias.range?.[0] };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}
