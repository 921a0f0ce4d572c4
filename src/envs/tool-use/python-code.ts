import { COLLECTIONS } from './extended-lookup.js';
import type { Aggregate, RowFilter, TableQuery } from './python-tasks.js';

/**
 * The Python the expert of `gymflow/tool-use-python-v0` writes: code that works on the text the tools returned
 * (a table observation pasted in as a string literal, looked-up dates and names), as an agent would. Every
 * function returns a program whose last line is the expression to answer with.
 */

/** A Python string literal of `text` (JSON's string syntax is a subset of Python's). */
export function pyString(text: string): string {
  return JSON.stringify(text);
}

/** Parses a `lookup` table observation (`Table of N cities:`, a header line, `|`-separated rows) into dicts. */
const TABLE_PARSER = [
  'def table(text):',
  '    lines = text.strip().splitlines()[1:]',
  "    header = [c.strip() for c in lines[0].split('|')]",
  "    return [dict(zip(header, (c.strip() for c in line.split('|')))) for line in lines[1:]]",
];

/** The columns the expert asks `lookup` for: the filter's (unless through a link), its link, the question's. */
export function tableColumns(q: TableQuery): string[] {
  const columns: string[] = [];
  const add = (c: string): void => {
    if (!columns.includes(c)) columns.push(c);
  };
  if (q.filter?.via !== undefined) add(q.filter.via);
  else if (q.filter !== undefined) add(q.filter.attribute);
  add(q.attribute);
  return columns;
}

/** The collection a filter's link leads to (`headquarters` and `birthplace` name cities). */
export function joinedCollection(f: RowFilter | undefined): string | undefined {
  return f?.via === undefined ? undefined : COLLECTIONS.city.name;
}

function condition(f: RowFilter): string {
  const cell = f.via === undefined ? `r[${pyString(f.attribute)}]` : `linked[r[${pyString(f.via)}]]`;
  if (f.op === 'eq') return `${cell} == ${pyString(String(f.value))}`;
  return `float(${cell}) ${f.op === 'lt' ? '<' : '>'} ${f.value}`;
}

const AGGREGATE: Readonly<Record<Aggregate, string>> = {
  sum: 'sum(values)',
  mean: 'round(statistics.mean(values), 2)',
  median: 'statistics.median(values)',
  range: 'max(values) - min(values)',
  count: 'len(rows)',
};

function tablePrelude(q: TableQuery, table: string, linked: string | undefined): string[] {
  const lines = ['import statistics', ...TABLE_PARSER, `rows = table(${pyString(table)})`];
  if (q.filter?.via !== undefined && linked !== undefined) {
    lines.push(`linked = {r['name']: r[${pyString(q.filter.attribute)}] for r in table(${pyString(linked)})}`);
  }
  if (q.filter !== undefined) lines.push(`rows = [r for r in rows if ${condition(q.filter)}]`);
  lines.push(`values = [float(r[${pyString(q.attribute)}]) for r in rows]`);
  return lines;
}

/** An aggregate over a table observation (and the linked table's, for a filter through a link). */
export function aggregateCode(q: TableQuery, agg: Aggregate, table: string, linked?: string): string {
  return [...tablePrelude(q, table, linked), AGGREGATE[agg]].join('\n');
}

/** The name of the row ranked `rank` (1-based) by the question's column. */
export function rankCode(q: TableQuery, rank: number, order: 'desc' | 'asc', table: string, linked?: string): string {
  const key = `key=lambda r: float(r[${pyString(q.attribute)}])`;
  return [...tablePrelude(q, table, linked), `sorted(rows, ${key}${order === 'desc' ? ', reverse=True' : ''})[${rank - 1}]['name']`].join('\n');
}

/** Days between two `YYYY-MM-DD` dates. */
export function dateDiffCode(a: string, b: string): string {
  return ['from datetime import date', `abs((date.fromisoformat(${pyString(a)}) - date.fromisoformat(${pyString(b)})).days)`].join('\n');
}

/** The weekday's English name of a `YYYY-MM-DD` date. */
export function weekdayCode(date: string): string {
  return ['from datetime import date', `date.fromisoformat(${pyString(date)}).strftime('%A')`].join('\n');
}

/** How often a letter occurs in `text` ignoring case, or (no letter) how many letters it has. */
export function countCode(text: string, letter?: string): string {
  return letter === undefined ? `sum(c.isalpha() for c in ${pyString(text)})` : `${pyString(text)}.lower().count(${pyString(letter)})`;
}

/** `text` spelled backwards. */
export function reverseCode(text: string): string {
  return `${pyString(text)}[::-1]`;
}
