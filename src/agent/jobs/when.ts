/**
 * When a scheduled job runs, from what the model (or the user, through it)
 * wrote: an ISO time ("2026-12-03T17:00", an offset or Z optional; without
 * one it is a time in the owner's zone), a relative time ("in 20 minutes",
 * "in 1 hour and 30 minutes", "in 2h"), resolved here against the daemon's
 * clock, or a cron expression for a repeating job ("0 9 * * 1-5",
 * "@daily"), read by `croner` in the owner's time zone. Pure: the clock
 * and the zone are arguments.
 */
import { Cron } from "croner";
import { describeError } from "../../kernel/errors.ts";

export type When = { kind: "once"; at: number } | { kind: "repeat"; schedule: string; next: number };

/** What was written cannot be read as a time; the message says what is accepted. */
export class WhenError extends Error {
  override name = "WhenError";
}

/** A repeating job may not run more often than this (ms): a schedule is for reminders and routines, not polling. */
export const MIN_REPEAT_MS = 60_000;

const UNIT_MS: Record<string, number> = {
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};
const AMOUNT = /(\d+(?:\.\d+)?)\s*([a-z]+)/g;
const RELATIVE = /^(?:in\s+)?((?:\d+(?:\.\d+)?\s*[a-z]+[\s,]*(?:and\s+)?)+?)(?:\s*from now)?$/;
const ISO = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}:?\d{2})?$/i;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** The longest a one-off job may wait: ten years. */
const MAX_AHEAD_MS = 10 * 365 * 86_400_000;

export const ACCEPTED =
  'an ISO time ("2026-12-03T17:00", in the owner\'s time zone unless it has an offset), a relative time ("in 20 minutes", "in 1 hour and 30 minutes") or a cron expression for a repeating job ("0 9 * * 1-5", "@daily")';

/** Read `text` as a time at or after `now` in `timezone`; throws WhenError saying why not. */
export function parseWhen(text: string, options: { now: number; timezone: string }): When {
  const raw = text.trim();
  if (raw === "") throw new WhenError(`"when" is empty: give ${ACCEPTED}`);
  const lower = raw.toLowerCase();

  const relative = RELATIVE.exec(lower);
  if (relative) return once(options.now + relativeMs(relative[1]!), options.now);

  if (DATE_ONLY.test(raw)) throw new WhenError(`"${raw}" has no time of day: add one, e.g. "${raw}T09:00"`);
  const iso = ISO.exec(raw);
  if (iso) return once(isoInstant(iso, options.timezone), options.now);

  if (raw.startsWith("@") || /^\S+(\s+\S+){4,6}$/.test(raw)) return repeat(raw, options);
  throw new WhenError(`cannot read "${raw}" as a time: give ${ACCEPTED}`);
}

/** The next run of a cron schedule strictly after `after` (epoch ms), or null when it never runs again. */
export function nextRun(schedule: string, timezone: string, after: number): number | null {
  return new Cron(schedule, { timezone, paused: true }).nextRun(new Date(after))?.getTime() ?? null;
}

/** One formatter per time zone: building an Intl.DateTimeFormat costs tens of microseconds, and every turn formats "now". */
const formatters = new Map<string, Intl.DateTimeFormat>();
const formatterFor = (timezone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-GB", {
      timeZone: timezone,
      weekday: "short",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
};

/** A time as the owner reads it: "Thu 2026-12-03 17:00 (Europe/Paris)". */
export function formatLocal(ms: number, timezone: string): string {
  const parts = Object.fromEntries(
    formatterFor(timezone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.weekday} ${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} (${timezone})`;
}

/** How far ahead a time is, in words: "in 20 minutes", "in 3 hours", "now". */
export function fromNow(ms: number, now: number): string {
  const ahead = ms - now;
  if (ahead < 1000) return "now";
  const steps: Array<[number, string]> = [
    [86_400_000, "day"],
    [3_600_000, "hour"],
    [60_000, "minute"],
    [1000, "second"],
  ];
  for (const [size, unit] of steps) {
    // Within a second of a whole unit counts as one: "in 1 hour", not "in 60 minutes", a moment after scheduling.
    if (ahead >= size - 1000) {
      const n = Math.round(ahead / size);
      return `in ${n} ${unit}${n === 1 ? "" : "s"}`;
    }
  }
  return "now";
}

function relativeMs(amounts: string): number {
  let total = 0;
  for (const [, n, unit] of amounts.matchAll(AMOUNT)) {
    const size = UNIT_MS[unit!];
    if (size === undefined) throw new WhenError(`unknown unit "${unit}": use seconds, minutes, hours, days or weeks`);
    total += Number(n) * size;
  }
  return Math.round(total);
}

function once(at: number, now: number): When {
  if (!Number.isFinite(at)) throw new WhenError(`that is not a real time: give ${ACCEPTED}`);
  if (at < now) throw new WhenError(`that time has already passed (it is now ${new Date(now).toISOString()})`);
  if (at - now > MAX_AHEAD_MS) throw new WhenError("that is more than ten years ahead");
  return { kind: "once", at };
}

/** An ISO time: with an offset as written, without one in the owner's zone (croner does the zone arithmetic). */
function isoInstant(match: RegExpExecArray, timezone: string): number {
  const [, date, time, offset] = match;
  const local = `${date}T${time!.replace(/\.\d+$/, "")}`;
  try {
    if (offset) return Date.parse(`${local}${offset.toUpperCase() === "Z" ? "Z" : offset.replace(/^([+-]\d{2})(\d{2})$/, "$1:$2")}`);
    return new Cron(local, { timezone, paused: true }).nextRun(new Date(0))?.getTime() ?? Number.NaN;
  } catch (error) {
    throw new WhenError(`"${match[0]}" is not a valid time: ${describeError(error)}`);
  }
}

function repeat(schedule: string, options: { now: number; timezone: string }): When {
  let cron: Cron;
  try {
    cron = new Cron(schedule, { timezone: options.timezone, paused: true });
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, "") : String(error);
    throw new WhenError(`"${schedule}" is not a cron expression croner can read (${why}); give ${ACCEPTED}`);
  }
  const [first, second] = cron.nextRuns(2, new Date(options.now));
  if (!first) throw new WhenError(`"${schedule}" never runs`);
  if (second && second.getTime() - first.getTime() < MIN_REPEAT_MS) {
    throw new WhenError(`"${schedule}" runs more than once a minute; a repeating job runs at most once a minute`);
  }
  return { kind: "repeat", schedule, next: first.getTime() };
}
