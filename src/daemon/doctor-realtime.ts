/**
 * Doctor's rows for realtime voice: off, or which provider, model and
 * endpoint a session would use — failing when that provider has no key a
 * session could start with — and, as a warning only, whether this machine
 * has the audio tools `fermix talk` uses for its microphone and speaker
 * (recordings with --input/--output, and the Talk page, need none).
 */
import { realtimeProfile } from "../channels/realtime/profile.ts";
import { realtimeProviderName, realtimeSettings } from "../config/realtime.ts";
import type { Config } from "../config/schema.ts";
import { providerHealth } from "./health.ts";

/** The row's name: realtime voice's own (its profile's), as health names its block. */
const CHECK = realtimeProfile.name;

export interface RealtimeDoctorRow {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

export function realtimeRows(config: Config, which: (name: string) => string | null = Bun.which): RealtimeDoctorRow[] {
  if (!config.fermix_core.realtime.enabled) return [{ check: CHECK, status: "ok", detail: "off ([fermix_core.realtime] enabled = false)" }];
  const name = realtimeProviderName(config);
  const provider = name === undefined ? undefined : config.fermix_core.providers[name];
  const settings = realtimeSettings(config);
  if (!name || !provider || !settings) return [{ check: CHECK, status: "fail", detail: "on, but no provider to talk to: run `fermix setup`" }];
  if (providerHealth(name, provider).status !== "ready") {
    return [{ check: CHECK, status: "fail", detail: `on, but provider ${name} has no api_key: the realtime API would refuse every session` }];
  }
  const rows: RealtimeDoctorRow[] = [
    {
      check: CHECK,
      status: "ok",
      detail: `on: provider ${name} at ${settings.url}, voice ${settings.voice}, sessions up to ${config.fermix_core.realtime.max_session_minutes} min; talk with \`fermix talk\` or the /talk page`,
    },
  ];
  const recorder = which("arecord") ?? which("rec");
  const player = which("aplay") ?? which("play");
  if (!recorder || !player) {
    rows.push({
      check: CHECK,
      status: "warn",
      detail: `no ${!recorder ? "microphone recorder (arecord or rec)" : "audio player (aplay or play)"} for \`fermix talk\`: install alsa-utils or sox (WAV files with --input/--output and the Talk page work without)`,
    });
  }
  return rows;
}
