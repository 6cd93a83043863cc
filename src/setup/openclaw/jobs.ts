/**
 * OpenClaw's cron jobs (cron/jobs.json, https://docs.openclaw.ai/automation/cron-jobs)
 * as Fermix jobs, where the schedule and the target translate:
 * - `cron` schedules as they are (both read them with croner), in the
 *   job's zone or the owner's; `at` (one time, UTC unless it says) while it
 *   is still ahead; `every` when the interval is whole minutes that divide
 *   an hour, whole hours that divide a day, a day or a week — as a cron
 *   schedule on the clock, which may shift the first run within the
 *   interval. Other intervals are listed.
 * - The result goes to `delivery.channel`/`delivery.to` when that channel
 *   is served after the import and the target is one of its chats; with
 *   no target (or `last`), to the owner's own chat on the first channel
 *   where that chat is the owner's id. `none` and `webhook` deliveries have
 *   no Fermix equivalent: Fermix jobs always answer in a chat.
 * - The request is the job's message (agentTurn) or text (systemEvent); the
 *   job belongs to the owner of the channel it delivers to.
 * Pure: the clock, the zone and the config in force are arguments.
 */
import { MIN_REPEAT_MS, parseWhen, WhenError } from "../../agent/jobs/when.ts";
import type { Config } from "../../config/schema.ts";
import { conversationKey } from "../../message/index.ts";
import type { Job, NewJob } from "../../store/jobs.ts";
import type { ImportedChannel } from "./channels.ts";
import { objectOf } from "./json5.ts";
import { type ImportRow, row } from "./rows.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

export interface JobsInput {
  jobs: readonly unknown[];
  /** The channels the import brought (their OpenClaw rules for targets). */
  channels: readonly ImportedChannel[];
  /** The config as it will be after the import: who owns each channel, which are on. */
  config: Config;
  /** The owner's zone, for schedules that name none. */
  timezone: string;
  now: number;
  /** Jobs Fermix has now, so a second import adds none twice. */
  live: readonly Job[];
}

export interface JobsPlan {
  jobs: NewJob[];
  rows: ImportRow[];
}

export function planJobs(input: JobsInput): JobsPlan {
  const plan: JobsPlan = { jobs: [], rows: [] };
  for (const raw of input.jobs) {
    const job = objectOf(raw);
    if (!job) continue;
    const label = `job ${typeof job.name === "string" && job.name.trim() ? `"${job.name.trim()}"` : String(job.id ?? "?")}`;
    const skip = (why: string) => plan.rows.push(row("skipped", label, why));
    if (job.enabled === false) {
      skip("turned off in OpenClaw");
      continue;
    }
    const payload = objectOf(job.payload);
    const request = (typeof payload?.message === "string" ? payload.message : typeof payload?.text === "string" ? payload.text : "").trim();
    if (request === "") {
      skip("it has no message to run");
      continue;
    }
    const when = schedule(objectOf(job.schedule), input);
    if (typeof when === "string") {
      skip(when);
      continue;
    }
    const delivery = objectOf(job.delivery) ?? {};
    const mode = typeof delivery.mode === "string" ? delivery.mode : payload?.deliver === false ? "none" : "announce";
    if (mode === "none") {
      skip("it delivers nowhere in OpenClaw (delivery none); a Fermix job always answers in a chat");
      continue;
    }
    if (mode === "webhook") {
      skip("it posts to a webhook; Fermix jobs answer in a chat");
      continue;
    }
    const channelName = (typeof delivery.channel === "string" ? delivery.channel : typeof payload?.channel === "string" ? payload.channel : "last").trim();
    const to = typeof delivery.to === "string" ? delivery.to : typeof payload?.to === "string" ? payload.to : undefined;
    const target = targetFor(channelName, to, input);
    if (typeof target === "string") {
      skip(target);
      continue;
    }
    const newJob: NewJob = {
      request,
      schedule: when.schedule,
      timezone: when.timezone,
      dueAt: when.dueAt,
      origin: {
        channel: target.channel.name,
        conversation: conversationKey({ channel: target.channel.name, chatId: target.chatId, threadId: target.threadId }),
        senderId: target.owner,
        role: "operator",
      },
      target: { channel: target.channel.name, chatId: target.chatId, ...(target.threadId ? { threadId: target.threadId } : {}) },
    };
    const where = `${target.channel.title} chat ${target.chatId}${target.threadId ? ` (topic ${target.threadId})` : ""}`;
    const detail = `${when.schedule ? `repeats \`${when.schedule}\` (${when.timezone})` : `once, ${new Date(when.dueAt).toISOString()}`} → ${where}${when.note ? `; ${when.note}` : ""}`;
    if (input.live.some((j) => sameJob(j, newJob))) {
      plan.rows.push(row("unchanged", label, `already a Fermix job: ${detail}`));
      continue;
    }
    plan.jobs.push(newJob);
    plan.rows.push(row("imported", label, detail));
  }
  return plan;
}

interface Schedule {
  schedule: string | null;
  timezone: string;
  dueAt: number;
  note?: string;
}

function schedule(spec: Record<string, unknown> | undefined, input: JobsInput): Schedule | string {
  const zone = typeof spec?.tz === "string" && spec.tz.trim() ? spec.tz.trim() : input.timezone;
  switch (spec?.kind) {
    case "cron":
      return typeof spec.expr === "string" ? repeating(spec.expr.trim(), zone, input.now) : "its cron schedule has no expression";
    case "at": {
      if (typeof spec.at !== "string") return "its one-time schedule has no time";
      const at = Date.parse(/(?:Z|[+-]\d{2}:?\d{2})$/i.test(spec.at.trim()) ? spec.at.trim() : `${spec.at.trim()}Z`);
      if (!Number.isFinite(at)) return `"${spec.at}" is not a time`;
      if (at <= input.now) return `its time (${spec.at}) has passed`;
      return { schedule: null, timezone: zone, dueAt: at };
    }
    case "every":
      return every(Number(spec.everyMs), typeof spec.anchorMs === "number" ? spec.anchorMs : undefined, zone, input.now);
    default:
      return "its schedule is not one OpenClaw documents (at, every, cron)";
  }
}

function repeating(expr: string, timezone: string, now: number, note?: string): Schedule | string {
  try {
    const when = parseWhen(expr, { now, timezone });
    if (when.kind !== "repeat") return `"${expr}" is not a cron schedule`;
    return { schedule: when.schedule, timezone, dueAt: when.next, ...(note ? { note } : {}) };
  } catch (error) {
    if (error instanceof WhenError) return error.message;
    throw error;
  }
}

/** An interval as a cron schedule on the clock, when it is one; the anchor picks the minute (and hour, day) it falls on. */
function every(ms: number, anchor: number | undefined, timezone: string, now: number): Schedule | string {
  if (!Number.isFinite(ms) || ms < MIN_REPEAT_MS) return `it repeats every ${ms} ms; a Fermix job repeats at most once a minute`;
  const parts = anchor === undefined ? undefined : zonedParts(anchor, timezone);
  const minute = parts?.minute ?? 0;
  const hour = parts?.hour ?? 9;
  const note = "its interval now runs on the clock";
  if (ms % MINUTE === 0 && ms < HOUR && 60 % (ms / MINUTE) === 0) return repeating(`${stepped(minute, ms / MINUTE, 59)} * * * *`, timezone, now, note);
  if (ms % HOUR === 0 && ms < DAY && 24 % (ms / HOUR) === 0) return repeating(`${minute} ${stepped(hour, ms / HOUR, 23)} * * *`, timezone, now, note);
  if (ms === DAY) return repeating(`${minute} ${hour} * * *`, timezone, now, note);
  if (ms === WEEK) return repeating(`${minute} ${hour} * * ${parts?.weekday ?? 1}`, timezone, now, note);
  return `it repeats every ${describeMs(ms)}, which no cron schedule on the clock matches; schedule it again in Fermix`;
}

/** A cron field that fires every `step` units from `start`'s place in the cycle: any, every 15th, or 5 to 59 by 15. */
function stepped(start: number, step: number, max: number): string {
  if (step === 1) return "*";
  const offset = start % step;
  return offset === 0 ? `*/${step}` : `${offset}-${max}/${step}`;
}

function zonedParts(ms: number, timezone: string): { minute: number; hour: number; weekday: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone: timezone, hour: "numeric", minute: "numeric", weekday: "short", hourCycle: "h23" })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return { minute: Number(parts.minute), hour: Number(parts.hour) % 24, weekday: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(parts.weekday!) };
}

function describeMs(ms: number): string {
  if (ms % HOUR === 0) return `${ms / HOUR} hours`;
  if (ms % MINUTE === 0) return `${ms / MINUTE} minutes`;
  return `${ms / 1000} seconds`;
}

interface Target {
  channel: ImportedChannel;
  chatId: string;
  threadId?: string;
  owner: string;
}

function targetFor(channelName: string, to: string | undefined, input: JobsInput): Target | string {
  const ownerOf = (c: ImportedChannel) => (input.config.fermix_channels[c.name] as { owner_user_id?: string; enabled: boolean }).owner_user_id;
  const served = (c: ImportedChannel) => (input.config.fermix_channels[c.name] as { enabled: boolean }).enabled;
  if (channelName === "last" || channelName === "") {
    if (to !== undefined && to.trim() !== "") return `its target "${to}" names no channel`;
    const home = input.channels.find((c) => served(c) && c.openclaw.directChatIsSender && ownerOf(c));
    if (!home) return "it answers in the last chat OpenClaw used, and no imported channel has an owner's chat to send it to instead";
    return { channel: home, chatId: ownerOf(home)!, owner: ownerOf(home)! };
  }
  const channel = input.channels.find((c) => c.name === channelName);
  if (!channel) return `it answers on ${channelName}, which this import does not bring`;
  if (!served(channel)) return `it answers on ${channel.title}, which is off after the import`;
  const owner = ownerOf(channel);
  if (!owner) return `${channel.title} has no owner in Fermix, and a job runs as its owner`;
  if (to === undefined || to.trim() === "") {
    if (!channel.openclaw.directChatIsSender) return `it names no ${channel.title} chat`;
    return { channel, chatId: owner, owner };
  }
  const chat = channel.openclaw.chat(to);
  if (typeof chat === "string") return chat;
  return { channel, chatId: chat.chatId, ...(chat.threadId ? { threadId: chat.threadId } : {}), owner };
}

/** The same job: what it asks, when, and where its result goes. */
function sameJob(job: Job, candidate: NewJob): boolean {
  return (
    job.request === candidate.request &&
    job.schedule === candidate.schedule &&
    (job.schedule !== null || job.dueAt === candidate.dueAt) &&
    job.target.channel === candidate.target.channel &&
    job.target.chatId === candidate.target.chatId &&
    (job.target.threadId ?? "") === (candidate.target.threadId ?? "")
  );
}
