/**
 * Signed Slack Events API deliveries for the load generators: a direct
 * message event, unique per index, signed with the app's signing secret as
 * Slack signs it (test/helpers/sign.ts). The same builder serves the wrk body
 * set (bench/generator.ts) and the Bun generator (bench/load.ts), so both
 * send the same requests.
 */
import { signSlack } from "../test/helpers/sign.ts";

/** A Slack user on no list: every event from them is verified, parsed and refused. */
export const STRANGER = "U0STRANGER1";

export interface SignedDelivery {
  body: string;
  /** x-slack-request-timestamp and x-slack-signature. */
  headers: Record<string, string>;
}

/**
 * The `index`-th direct message from `sender`, signed at `signedAt` (Unix
 * seconds). Its Slack `ts`, which Fermix de-duplicates on with the channel,
 * comes from `sentAt` (default: the signing time) and the index: a
 * redelivery keeps the `ts` of the first and is signed again, as Slack's are.
 */
export function signedDm(index: number, sender: string, secret: string, signedAt: number, sentAt = signedAt): SignedDelivery {
  const body = JSON.stringify({
    type: "event_callback",
    team_id: "T1",
    api_app_id: "A1",
    event_id: `EvBench${index}`,
    event_time: sentAt,
    event: {
      type: "message",
      channel: "D0BENCH",
      channel_type: "im",
      user: sender,
      text: `message ${index}`,
      // Slack's ts has six decimals: a million events a second, then the next second.
      ts: `${sentAt + Math.floor(index / 1_000_000)}.${String(index % 1_000_000).padStart(6, "0")}`,
    },
  });
  return { body, headers: signSlack(body, secret, signedAt) };
}
