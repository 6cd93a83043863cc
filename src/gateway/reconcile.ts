/**
 * Squaring a replayed answer with what a crashed attempt already delivered:
 * the comparison ignores whitespace (block cuts and rendering move it), and
 * nothing else — a delivered text that the new answer does not begin with
 * word for word is not "the same content".
 */

/**
 * What of `answer` follows the text `delivered`, when the answer begins with
 * it (whitespace aside); undefined when it does not.
 */
export function remainderAfter(answer: string, delivered: string): string | undefined {
  let a = 0;
  for (let d = 0; d < delivered.length; d++) {
    if (/\s/.test(delivered[d]!)) continue;
    while (a < answer.length && /\s/.test(answer[a]!)) a++;
    if (answer[a] !== delivered[d]) return undefined;
    a++;
  }
  return answer.slice(a).replace(/^\s+/, "");
}
