/**
 * The facts of a hidden-profile discussion and the decision rule that pools them.
 *
 * **The rule** (the task instruction states it): every fact in an option's favour counts +1 and every fact
 * against it −1, summed over the briefing (the shared facts) and the facts the participants state as known;
 * opinions and hearsay ("I heard that …") do not count. The right choice is the option with the highest
 * total; the generator makes it unique when every participant's facts are pooled, and only then.
 */

/** One fact about an option. */
export interface Fact {
  /** Unique within its task (`f3`). */
  id: string;
  option: string;
  /** The topic's name. */
  topic: string;
  /** +1: in the option's favour; −1: against it. */
  sign: 1 | -1;
  /** What the fact says after the option's name; a rationale quotes it to cite the fact. Unique within its task. */
  cue: string;
}

/** The fact as a sentence without its final stop: `{option} {cue}`. */
export function factText(fact: Fact): string {
  return `${fact.option} ${fact.cue}`;
}

/** The totals of the rule over `facts`, for each of `options` (in their order). */
export function tally(facts: readonly Fact[], options: readonly string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(options.map((o) => [o, 0]));
  for (const f of facts) if (f.option in out) out[f.option] = (out[f.option] as number) + f.sign;
  return out;
}

/** The option with the highest total over `facts`, or undefined when two or more share it (the facts decide nothing). */
export function ruleChoice(facts: readonly Fact[], options: readonly string[]): string | undefined {
  const totals = tally(facts, options);
  const best = Math.max(...Object.values(totals));
  const top = options.filter((o) => totals[o] === best);
  return top.length === 1 ? top[0] : undefined;
}
