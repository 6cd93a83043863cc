/**
 * Turning free text (a user's message, a model's query) into an SQLite FTS5
 * query that cannot fail to parse: only word tokens, each quoted, joined by
 * OR (any word: ranking sorts out relevance) or by AND (every word: what
 * forgetting by query needs). FTS5's own syntax (quotes, NEAR, column
 * filters, `*`) never reaches the engine from outside.
 */

/** Words too common to say anything about what a message is about (English; other languages rely on bm25's weighting). */
const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have he her here him his how i if in into is it its " +
    "me my myself no not of on or our ours please she so some than that the their them then there these they this those to too " +
    "us was we were what when where which who whom why will with would you your yours about again also am any just let more " +
    "most much now only other out over own same should such tell know think remember recall forget ok okay yes hi hello thanks"
  ).split(" "),
);

/** At most this many words go into one query: a long message is about its first few dozen words anyway. */
const MAX_TERMS = 24;

/** The distinct search words of a text, lower-cased, stopwords and single letters left out. */
export function searchTerms(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const terms: string[] = [];
  for (const word of words) {
    if (word.length < 2 && !/\p{N}/u.test(word)) continue;
    if (STOPWORDS.has(word) || terms.includes(word)) continue;
    terms.push(word);
    if (terms.length === MAX_TERMS) break;
  }
  return terms;
}

/** An FTS5 MATCH expression for the text's words, or null when it has none worth searching for. */
export function ftsQuery(text: string, mode: "any" | "all" = "any"): string | null {
  const terms = searchTerms(text);
  if (terms.length === 0) return null;
  return terms.map((t) => `"${t}"`).join(mode === "any" ? " OR " : " AND ");
}
