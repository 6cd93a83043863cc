/** Doctor's realtime rows, on data: off, on and usable, a provider with no key, and the audio tools `fermix talk` wants. */
import { describe, expect, test } from "bun:test";
import { realtimeRows } from "../../src/daemon/doctor-realtime.ts";
import { loadedFrom } from "../helpers/loaded.ts";

const KEYED = '[fermix_core.providers.openai]\nmodel = "gpt-5.1"\napi_key = "sk-doctor-realtime-000"\n';
const KEYLESS = '[fermix_core.providers.openai]\nmodel = "gpt-5.1"\n';
const ON = "\n[fermix_core.realtime]\nenabled = true\n";
const everything = (name: string) => `/usr/bin/${name}`;
const nothing = () => null;

describe("doctor's realtime rows", () => {
  test("off is fine and says how it is turned on", () => {
    expect(realtimeRows(loadedFrom(KEYED).config, everything)).toEqual([
      { check: "realtime", status: "ok", detail: "off ([fermix_core.realtime] enabled = false)" },
    ]);
  });

  test("on: the provider, its endpoint and voice; no warning where the audio tools exist", () => {
    expect(realtimeRows(loadedFrom(KEYED + ON).config, everything)).toEqual([
      {
        check: "realtime",
        status: "ok",
        detail:
          "on: provider openai at wss://api.openai.com/v1/realtime?model=gpt-realtime, voice marin, sessions up to 30 min; talk with `fermix talk` or the /talk page",
      },
    ]);
  });

  test("a provider with no key fails the row: every session would be refused", () => {
    expect(realtimeRows(loadedFrom(KEYLESS + ON).config, everything)).toEqual([
      { check: "realtime", status: "fail", detail: "on, but provider openai has no api_key: the realtime API would refuse every session" },
    ]);
  });

  test("no recorder or player is a warning only, naming what to install", () => {
    const rows = realtimeRows(loadedFrom(KEYED + ON).config, nothing);
    expect(rows[1]).toEqual({
      check: "realtime",
      status: "warn",
      detail:
        "no microphone recorder (arecord or rec) for `fermix talk`: install alsa-utils or sox (WAV files with --input/--output and the Talk page work without)",
    });
    const noPlayer = realtimeRows(loadedFrom(KEYED + ON).config, (name) => (name === "rec" ? "/usr/bin/rec" : null));
    expect(noPlayer[1]!.detail).toStartWith("no audio player (aplay or play)");
  });
});
