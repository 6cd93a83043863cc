/** What counts as one emoji, for reactions (the react tool and the channels that take any single emoji). */

let cached: Intl.Segmenter | undefined;
/** Made on first use: building one loads ICU's break rules, which an idle daemon never needs. */
const segmenter = () => (cached ??= new Intl.Segmenter(undefined, { granularity: "grapheme" }));

/** Whether a string is exactly one emoji (flags, ZWJ sequences and skin tones included). */
export function isSingleEmoji(text: string): boolean {
  const graphemes = [...segmenter().segment(text)];
  return graphemes.length === 1 && /\p{Extended_Pictographic}|\p{Regional_Indicator}/u.test(text);
}
