/**
 * What kind of fact a question asks for, when its own words say so, and whether a sentence states
 * one: "how long…" asks for a length of time, "how many…" for an amount, "what is the default…" for
 * a default value. A passage often names the question's words in several sentences and states the
 * fact in one; the filler words that say what is asked ("how long", "how many") carry no weight in
 * the search, so without this the first sentence to name the topic wins over the one that answers
 * ("You have 30 days from the day you receive your order to register a return").
 */

/** Number words, from two: "one" is more often a pronoun ("one row for each database") than an amount. */
const NUMBER_WORDS =
  'two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred|thousand|million|billion|dozen|half';
/** A figure on its own, not a digit inside a name ("sqlite3_limit", "utf8"). */
const FIGURE = '(?<![\\p{L}_\\d])\\d';
const NUMBER = `(?:${FIGURE}[\\d.,]*|${NUMBER_WORDS})`;
const TIME_UNIT = '(?:milliseconds?|ms|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)';

/** A length of time: a number and a unit ("30 days", "two weeks", "60-minute", "within a day"). */
const DURATION = new RegExp(`(?:(?:\\b|(?=\\d))${NUMBER}\\s*-?\\s*${TIME_UNIT}\\b|\\b(?:a|an|one)\\s+${TIME_UNIT}\\b)`, 'iu');
/** An amount: a figure or a number word. */
const AMOUNT = new RegExp(`(?:${FIGURE}|\\b(?:${NUMBER_WORDS})\\b)`, 'iu');
/** A default value stated: the word and a value (a figure, a quoted or code value, on/off, true/false). */
const DEFAULT_VALUE = /\bdefaults?\b|\bby default\b/i;
const VALUE = /(?<![\p{L}_\d])\d|[\x60'"‘“]|\b(?:on|off|true|false|null|none|empty|disabled|enabled)\b/iu;

export type Fact = 'duration' | 'amount' | 'default';

/** The kind of fact the question asks for, or null when its words do not say. */
export function wantedFact(question: string): Fact | null {
  const q = question.toLowerCase();
  if (/\bhow\s+(?:long|soon|often|quickly)\b|\bhow much time\b|\bwhen will\b|\bby when\b/.test(q)) return 'duration';
  if (/\bdefaults?\b/.test(q)) return 'default';
  if (/\bhow\s+(?:many|much|big|large|small|far|high|low|old)\b|\b(?:maximum|minimum|max|min|limit|largest|smallest|biggest)\b/.test(q)) return 'amount';
  return null;
}

/** Whether a sentence states a fact of that kind. */
export function statesFact(fact: Fact, sentence: string): boolean {
  if (fact === 'duration') return DURATION.test(sentence);
  if (fact === 'amount') return AMOUNT.test(sentence);
  return DEFAULT_VALUE.test(sentence) && VALUE.test(sentence);
}
