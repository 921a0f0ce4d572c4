import { questions } from '../conversation-kit/scripted-user.js';
import { type Topic, TOPIC_NAMES, TOPICS } from './client.js';

/**
 * The advisor's brief, which the agent reads in its task instruction, and the tracker of what it asked.
 * The client reveals its constraints only when asked, so a recommendation made before asking about every
 * topic is a guess: the reward's `elicited` term holds only when, before `recommend`, the agent's messages
 * asked a question ({@link questions}: a sentence ending in `?`) about each of the seven topics
 * ({@link TOPICS}: where from, dates, travellers, budget, hotel, flights, activities).
 */

/** The brief, as the agent's task instruction states it. */
export const ADVISORY_POLICY = `# Travel advisory brief
You are a travel advisor. A client wants a trip recommended; each message you send with \`respond\` gets the client's reply as its result.
- The client reveals their wishes only when asked. Before recommending, ask about each of these: where they fly from, their dates (departure and nights), how many travel, their total budget, their hotel requirements (stars, amenities), their flight preferences (nonstop, arrival time) and the activities they want (how many, what kind).
- Search with search_flights, search_hotels and search_activities; price candidates with price_plan. Use only ids the searches returned.
- A plan is one outbound flight on the departure date, one return flight on the day the stay ends, one hotel with a room every night of the stay that sleeps the whole party, and exactly the number of activities the client wants.
- Cost: (outbound + return fare) × travellers + the hotel's price per night × nights (one room) + the activities' prices × travellers. It must not exceed the budget.
- Recommend the plan that meets every requirement of the client and has the highest value: nights × the hotel's review score + the sum of the activities' review scores.
- Recommend with recommend; it ends the conversation. One tool call per turn.`;

/** Which topics the agent asked about (see the module comment). */
export class ElicitationTracker {
  private readonly asked = new Set<Topic>();

  /** Records an agent message. */
  onAgentMessage(message: string): void {
    const q = questions(message).join(' ');
    if (q === '') return;
    for (const t of TOPIC_NAMES) if (TOPICS[t].test(q)) this.asked.add(t);
  }

  /** The topics not asked about yet, in order. */
  missing(): Topic[] {
    return TOPIC_NAMES.filter((t) => !this.asked.has(t));
  }
}
