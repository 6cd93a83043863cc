/**
 * Reading `when` for a scheduled job: ISO times (an offset, or the owner's
 * zone), relative times against the injected clock, cron expressions in the
 * owner's zone; everything else a clear WhenError, never another exception.
 */
import { describe, expect, test } from "bun:test";
import { formatLocal, fromNow, nextRun, parseWhen, WhenError } from "../../src/agent/jobs/when.ts";
import { rng } from "../helpers/rng.ts";

const NOW = Date.UTC(2026, 11, 1, 20, 0, 0); // Tue 2026-12-01 21:00 in Paris
const PARIS = { now: NOW, timezone: "Europe/Paris" };

describe("one-off times", () => {
  test("relative times are resolved against the clock", () => {
    expect(parseWhen("in 20 minutes", PARIS)).toEqual({ kind: "once", at: NOW + 20 * 60_000 });
    expect(parseWhen("in 2 seconds", PARIS)).toEqual({ kind: "once", at: NOW + 2000 });
    expect(parseWhen("In 1 hour and 30 minutes", PARIS)).toEqual({ kind: "once", at: NOW + 90 * 60_000 });
    expect(parseWhen("in 2h 15m", PARIS)).toEqual({ kind: "once", at: NOW + 135 * 60_000 });
    expect(parseWhen("3 days from now", PARIS)).toEqual({ kind: "once", at: NOW + 3 * 86_400_000 });
    expect(parseWhen("in 1 week, 1 day", PARIS)).toEqual({ kind: "once", at: NOW + 8 * 86_400_000 });
  });

  test("an ISO time without an offset is in the owner's zone; with one, as written", () => {
    expect(parseWhen("2026-12-02T09:00", PARIS)).toEqual({ kind: "once", at: Date.UTC(2026, 11, 2, 8) });
    expect(parseWhen("2026-12-02 09:00:30", { now: NOW, timezone: "America/New_York" })).toEqual({ kind: "once", at: Date.UTC(2026, 11, 2, 14, 0, 30) });
    expect(parseWhen("2026-12-02T09:00:00Z", PARIS)).toEqual({ kind: "once", at: Date.UTC(2026, 11, 2, 9) });
    expect(parseWhen("2026-12-02T09:00+0530", PARIS)).toEqual({ kind: "once", at: Date.UTC(2026, 11, 2, 3, 30) });
    // Summer time: the same wall-clock hour is an hour earlier in UTC.
    expect(parseWhen("2027-07-01T09:00", PARIS)).toEqual({ kind: "once", at: Date.UTC(2027, 6, 1, 7) });
  });

  test("a time in the past, a date without a time, an unknown unit or nonsense are refused, saying why", () => {
    expect(() => parseWhen("2026-12-01T20:59", PARIS)).toThrow("already passed");
    expect(() => parseWhen("2026-12-05", PARIS)).toThrow('has no time of day: add one, e.g. "2026-12-05T09:00"');
    expect(() => parseWhen("in 3 fortnights", PARIS)).toThrow('unknown unit "fortnights"');
    expect(() => parseWhen("tomorrow at teatime", PARIS)).toThrow("cannot read");
    expect(() => parseWhen("", PARIS)).toThrow("empty");
    expect(() => parseWhen("2026-13-45T25:61", PARIS)).toThrow(WhenError);
    expect(() => parseWhen("in 11000 days", PARIS)).toThrow("ten years");
  });
});

describe("repeating jobs", () => {
  test("a cron expression runs in the owner's zone, its first run after now", () => {
    expect(parseWhen("0 9 * * 1-5", PARIS)).toEqual({ kind: "repeat", schedule: "0 9 * * 1-5", next: Date.UTC(2026, 11, 2, 8) });
    expect(parseWhen("@daily", PARIS)).toEqual({ kind: "repeat", schedule: "@daily", next: Date.UTC(2026, 11, 1, 23) });
    expect(nextRun("0 9 * * 1-5", "Europe/Paris", Date.UTC(2026, 11, 4, 8))).toBe(Date.UTC(2026, 11, 7, 8)); // Fri → Mon
  });

  test("a schedule croner cannot read, that never runs, or that runs more than once a minute is refused", () => {
    expect(() => parseWhen("61 * * * *", PARIS)).toThrow("Invalid value for minute");
    expect(() => parseWhen("0 0 30 2 *", PARIS)).toThrow("never runs");
    expect(() => parseWhen("*/10 * * * * *", PARIS)).toThrow("at most once a minute");
  });
});

test("whatever is written, parseWhen answers a time or a WhenError", () => {
  const r = rng(7);
  const pieces = ["in", "2", "minutes", "*", "*/5", "@daily", "2026-12-02T09:00", "Z", "+05:00", "and", "from now", "-1", "1e9", "\u0000", "🙂", ":", "T"];
  for (let i = 0; i < 2000; i++) {
    const text = Array.from({ length: r.int(0, 7) }, () => (r.next() < 0.6 ? r.pick(pieces) : r.string(r.int(0, 5)))).join(r.pick([" ", ""]));
    try {
      const when = parseWhen(text, PARIS);
      const at = when.kind === "once" ? when.at : when.next;
      expect(Number.isFinite(at) && at >= NOW).toBe(true);
    } catch (error) {
      if (!(error instanceof WhenError)) throw new Error(`"${text}" threw ${String(error)}`);
    }
  }
});

test("times are shown as the owner reads them", () => {
  expect(formatLocal(Date.UTC(2026, 11, 3, 16), "Europe/Paris")).toBe("Thu 2026-12-03 17:00 (Europe/Paris)");
  expect(fromNow(NOW + 20 * 60_000, NOW)).toBe("in 20 minutes");
  expect(fromNow(NOW + 2000, NOW)).toBe("in 2 seconds");
  expect(fromNow(NOW + 86_400_000, NOW)).toBe("in 1 day");
  expect(fromNow(NOW - 5, NOW)).toBe("now");
});
