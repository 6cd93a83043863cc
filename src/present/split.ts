/**
 * The boundary ladder: a long reply is cut at a section heading, else a
 * paragraph, a line, a sentence end, whitespace, and only as a last resort
 * between two grapheme clusters — never inside a code fence. Length is the
 * rendered length as the platform counts it, tracked unit by unit, so each
 * part costs one pass over its own units.
 */
import { type Dialect, PartRenderer, type RenderState } from "./dialects/base.ts";
import { cutLevel, graphemeBoundaries } from "./text.ts";
import { HARD, HEADING, isSpace, type Level, SENTENCE, SPACE, sliceUnit, sourceAt, type Unit } from "./units.ts";

/** How to cut: the limit and how full a part must be before a lower rung is used. */
export interface SplitOptions {
  /** The most a part may measure. */
  limit: number;
  /** A cut on a rung is taken only when the part is at least this full; otherwise the ladder goes down. */
  minFill: number;
  /** The bar for a heading, usually lower, so sections start their own message. */
  headingMinFill?: number;
  /** The lowest rung allowed. */
  floor?: Level;
  /** Only cuts where the Markdown source can resume (streaming keeps the rest as source). */
  sourceOnly?: boolean;
  /** When no cut clears `minFill`, give up (return null) instead of taking the furthest cut. */
  strict?: boolean;
  /** The text is still growing: the end of the units is not a place to cut. */
  keepTail?: boolean;
}

/** A position in a unit list: a unit and a text offset inside it. */
export interface Cursor {
  unit: number;
  offset: number;
}

/** One message's worth of units, rendered and measured. */
export interface SplitPart {
  units: Unit[];
  text: string;
  measure: number;
  /** The rung the part was cut on; undefined for the last part. */
  level?: Level;
  /** Source offset where the rest resumes, when known. */
  resume?: number;
}

interface Candidate {
  at: Cursor;
  level: Level;
  fill: number;
  src?: number;
  /** The renderer with every unit before the cut. */
  state: RenderState;
  /** For a cut inside a unit: that unit (from the part's start) and the cut offset in it. */
  piece?: { unit: Unit; end: number };
}

/** Split units into parts within the limit, cutting on the ladder. */
export function splitUnits(units: readonly Unit[], dialect: Dialect, options: SplitOptions): SplitPart[] {
  const parts: SplitPart[] = [];
  let at: Cursor | null = units.length > 0 ? { unit: 0, offset: 0 } : null;
  while (at) {
    const step = nextPart(units, dialect, { ...options, strict: false }, at);
    if (!step) break;
    if (step.part.units.length > 0) parts.push(step.part);
    at = step.next;
  }
  return parts;
}

/**
 * The first part from `start` and where the rest begins (null at the end),
 * or null when the options allow no cut and the rest does not fit.
 */
export function nextPart(
  units: readonly Unit[],
  dialect: Dialect,
  options: SplitOptions,
  start: Cursor = { unit: 0, offset: 0 },
): { part: SplitPart; next: Cursor | null } | null {
  const renderer = new PartRenderer(dialect);
  const candidates: Candidate[] = [];
  for (let i = start.unit; i < units.length; i++) {
    const from = i === start.unit ? start.offset : 0;
    const unit = sliceUnit(units[i]!, from, Infinity);
    const before = renderer.snapshot();
    // Every dialect shows at least the text, so a unit longer than the room left is not rendered whole.
    const hopeless = renderer.measure + unit.text.length > options.limit;
    if (!hopeless) renderer.add(unit);
    if (!hopeless && renderer.measure <= options.limit) {
      const next = units[i + 1];
      if (!next && !options.keepTail) return { part: finish(renderer, units, start, null), next: null };
      if (!next) {
        // More text is coming: the end is no boundary, but a sentence inside the last line may be.
        renderer.restore(before);
        if (!unit.atomic && unit.kind !== "rule") {
          candidates.push(...inside(units[i]!, i, from, undefined, renderer, options.limit, options.sourceOnly === true));
        }
        break;
      }
      const state = renderer.snapshot();
      candidates.push({ at: { unit: i + 1, offset: 0 }, level: next.boundary, fill: renderer.measure, src: next.src, state });
      continue;
    }
    // When the whole unit was rendered, its length seeds the search for the furthest fitting prefix.
    const whole = hopeless ? undefined : { end: unit.text.length, measure: renderer.measure };
    renderer.restore(before);
    if (!unit.atomic && unit.kind !== "rule") {
      candidates.push(...inside(units[i]!, i, from, units[i + 1], renderer, options.limit, options.sourceOnly === true, whole));
    }
    break;
  }
  let pool = candidates.filter((c) => c.level >= (options.floor ?? HARD) && (!options.sourceOnly || c.src !== undefined));
  for (;;) {
    const chosen = choose(pool, options);
    if (!chosen) {
      if (options.strict || options.sourceOnly) return null;
      // Nothing fits at all (an oversized atomic unit): send it alone rather than loop.
      const alone = new PartRenderer(dialect);
      alone.add(sliceUnit(units[start.unit]!, start.offset, Infinity));
      const whole = { unit: start.unit + 1, offset: 0 };
      return { part: finish(alone, units, start, whole), next: skipSpace(units, whole) };
    }
    renderer.restore(chosen.state);
    if (chosen.piece) renderer.add(trimmedPiece(chosen.piece.unit, chosen.piece.end));
    const part = finish(renderer, units, start, chosen.at);
    part.level = chosen.level;
    if (chosen.src !== undefined) part.resume = chosen.src;
    // The renderer's running count is exact by construction; the check guards the contract anyway.
    if (part.measure <= options.limit || pool.length === 1) return { part, next: skipSpace(units, chosen.at) };
    pool = pool.filter((c) => c !== chosen);
  }
}

/** A unit cut at `end`, without the whitespace the cut leaves at its end. */
function trimmedPiece(unit: Unit, end: number): Unit {
  let to = end;
  while (to > 0 && isSpace(unit.text[to - 1])) to--;
  return sliceUnit(unit, 0, to);
}

/**
 * Cut candidates inside the unit that overflows. The ladder only ever takes
 * the furthest cut on a rung, so only the last sentence end, the last
 * whitespace and the last grapheme boundary before the furthest fitting
 * prefix are offered.
 */
function inside(
  original: Unit,
  index: number,
  from: number,
  next: Unit | undefined,
  renderer: PartRenderer,
  limit: number,
  withSource: boolean,
  whole?: { end: number; measure: number },
): Candidate[] {
  const unit = sliceUnit(original, from, Infinity);
  const text = unit.text;
  const base = renderer.snapshot();
  const fillBefore = renderer.measure;
  let measured = fillBefore;
  const fits = (end: number) => {
    renderer.restore(base);
    renderer.add(sliceUnit(unit, 0, end));
    measured = renderer.measure;
    return measured <= limit;
  };
  const room = Math.min(text.length, Math.max(0, Math.floor(limit - fillBefore)));
  const { end, measure: fillAtEnd } = furthestFit(room, fillBefore, fits, () => measured, limit, whole);
  renderer.restore(base);
  if (end === 0) return [];
  let content = 0;
  while (content < end && isSpace(text[content])) content++;
  const out: Candidate[] = [];
  const offer = (pos: number, level: Level): boolean => {
    let src: number | undefined;
    if (withSource) {
      let resume = pos;
      while (resume < text.length && isSpace(text[resume])) resume++;
      src = resume >= text.length ? next?.src : sourceAt(unit, resume);
      if (src === undefined) return false;
    }
    const fill = fillBefore + ((fillAtEnd - fillBefore) * pos) / end;
    out.push({ at: { unit: index, offset: from + pos }, level, fill, src, state: base, piece: { unit, end: pos } });
    return true;
  };
  let space = false;
  for (let pos = end; pos > content; pos--) {
    if (!softBreak(text, pos)) continue;
    const level = cutLevel(text, pos);
    if (level === SENTENCE && offer(pos, level)) break;
    if (level === SPACE && !space) space = offer(pos, level);
  }
  const hard = lastBoundary(original, from + end, from + content);
  if (hard !== undefined) offer(hard - from, HARD);
  return out.sort((a, b) => a.at.offset - b.at.offset);
}

/** A cut after whitespace or a full-width stop, where the next character starts a new cluster. */
function softBreak(text: string, pos: number): boolean {
  const before = text[pos - 1]!;
  return (isSpace(before) || CJK_STOP.test(before)) && !CONTINUES.test(text.slice(pos, pos + 2));
}

const CJK_STOP = /[。！？｡]/;
/**
 * Code points that continue a grapheme cluster: nothing may be cut before them.
 * Marks (the emoji presentation selector U+FE0F among them), skin-tone modifiers, and the zero-width joiner.
 */
const CONTINUES = /^[\p{M}\p{Emoji_Modifier}\u200d]/u;

const boundaries = new WeakMap<Unit, number[]>();

/** The last grapheme boundary of a unit's text in (after, at]; each unit is segmented once. */
function lastBoundary(unit: Unit, at: number, after: number): number | undefined {
  let list = boundaries.get(unit);
  if (!list) {
    list = graphemeBoundaries(unit.text);
    boundaries.set(unit, list);
  }
  let lo = 0;
  let hi = list.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (list[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  const found = list[lo];
  return found !== undefined && found <= at && found > after ? found : undefined;
}

/**
 * A prefix length in [0, hi] that fits, within a small tolerance of the
 * largest (a cut a few characters earlier costs nothing visible). Every
 * dialect shows at least the text itself, so `hi` (the room left) bounds it.
 * Rendered length grows almost linearly with the prefix, so interpolation
 * usually lands in two or three probes; alternating with bisection keeps the
 * worst case logarithmic.
 */
function furthestFit(
  hi: number,
  fillBefore: number,
  fits: (end: number) => boolean,
  last: () => number,
  limit: number,
  known?: { end: number; measure: number },
): { end: number; measure: number } {
  if (hi <= 0) return { end: 0, measure: fillBefore };
  let atHi: number;
  if (known && known.end >= hi && known.measure > limit) {
    // A longer prefix already measured too long: interpolate from it instead of probing `hi`.
    atHi = fillBefore + ((known.measure - fillBefore) * hi) / known.end;
    if (atHi <= limit && fits(hi)) return { end: hi, measure: last() };
    if (atHi <= limit) atHi = last();
  } else {
    if (fits(hi)) return { end: hi, measure: last() };
    atHi = last();
  }
  const tolerance = Math.max(1, Math.floor(limit / 64));
  let lo = 0;
  let atLo = fillBefore;
  for (let step = 0; hi - lo > tolerance; step++) {
    // Aim a little under the limit: a near miss below is accepted, one above costs a probe.
    const target = limit - tolerance / 2;
    const guess = step % 2 === 0 && atHi > atLo ? lo + Math.floor(((hi - lo) * (target - atLo)) / (atHi - atLo)) : (lo + hi) >> 1;
    const probe = Math.min(hi - 1, Math.max(lo + 1, guess));
    if (fits(probe)) {
      lo = probe;
      atLo = last();
    } else {
      hi = probe;
      atHi = last();
    }
  }
  return { end: lo, measure: atLo };
}

/** The best candidate: the furthest on the highest rung whose part is full enough. */
function choose(candidates: readonly Candidate[], options: SplitOptions): Candidate | undefined {
  for (let level = HEADING; level >= (options.floor ?? HARD); level--) {
    let best: Candidate | undefined;
    for (const c of candidates) if (c.level >= level) best = c;
    const bar = level === HEADING ? (options.headingMinFill ?? options.minFill) : options.minFill;
    if (best && best.fill >= bar) return best;
  }
  return options.strict ? undefined : candidates.at(-1);
}

/** The part the renderer holds: its text, its measure, and the units from `start` up to `end` (null: the end). */
function finish(renderer: PartRenderer, units: readonly Unit[], start: Cursor, end: Cursor | null): SplitPart {
  const out: Unit[] = [];
  const stop = end ? (end.offset > 0 ? end.unit : end.unit - 1) : units.length - 1;
  for (let i = start.unit; i <= stop && i < units.length; i++) {
    const unit = units[i]!;
    const from = i === start.unit ? start.offset : 0;
    let to = end && i === end.unit ? end.offset : unit.text.length;
    if (to < unit.text.length) while (to > from && isSpace(unit.text[to - 1])) to--;
    if ((from > 0 || to < unit.text.length) && unit.text.slice(from, to).trim() === "") continue;
    out.push(sliceUnit(unit, from, to));
  }
  return { units: out, text: renderer.text(), measure: renderer.measure };
}

/** Skip the whitespace a cut leaves at the start of the rest; null at the end. */
function skipSpace(units: readonly Unit[], at: Cursor): Cursor | null {
  let { unit, offset } = at;
  const current = units[unit];
  if (current && offset > 0) {
    while (offset < current.text.length && isSpace(current.text[offset])) offset++;
    if (offset >= current.text.length) {
      unit++;
      offset = 0;
    }
  }
  return unit < units.length ? { unit, offset } : null;
}
