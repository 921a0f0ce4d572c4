import { describe, expect, it } from 'vitest';
import { EXPERT_QUESTIONS } from './expert.js';
import { ElicitationTracker } from './policy.js';
import { TOPIC_NAMES, TOPICS } from './client.js';

describe('ElicitationTracker', () => {
  it('counts a topic as asked only in a question', () => {
    const t = new ElicitationTracker();
    t.onAgentMessage('I will stay within your budget and book a nonstop flight.');
    expect(t.missing()).toEqual(TOPIC_NAMES);
    t.onAgentMessage('Great. What is your budget? Also, which city are you flying from?');
    expect(t.missing()).toEqual(['dates', 'travellers', 'hotel', 'flights', 'activities']);
  });

  it('hears each of the expert\'s questions as asking about its topic, and only that one', () => {
    for (const topic of TOPIC_NAMES) {
      const hits = TOPIC_NAMES.filter((t) => TOPICS[t].test(EXPERT_QUESTIONS[topic]));
      expect(hits, topic).toEqual([topic]);
    }
  });
});
