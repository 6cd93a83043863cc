/** Slack Events API payloads for tests: the documented samples, and builders for message events. */

/** The signing example of Slack's documentation (via python-slack-sdk's tests). */
export const DOC_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
export const DOC_TIMESTAMP = "1531420618";
export const DOC_BODY =
  "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
export const DOC_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

/** The url_verification sample used by code citing api.slack.com/events/url_verification. */
export const URL_VERIFICATION = {
  token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
  challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
  type: "url_verification",
};

export const BOT = "U0BOT00001";
export const USER = "U2CERLKJA";

/** An event_callback envelope around one event. */
export function envelope(event: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
    team_id: "T1DC2JH3J",
    api_app_id: "A0APP00001",
    event,
    type: "event_callback",
    event_id: "Ev0MESSAGE01",
    event_time: 1_700_000_000,
    ...extra,
  };
}

/** A user's message event; override any field. */
export function messageEvent(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "message",
    channel: "C0CHANNEL1",
    user: USER,
    text: "hello",
    ts: "1700000000.000100",
    event_ts: "1700000000.000100",
    channel_type: "channel",
    client_msg_id: "5f3a1c2e-0000-4000-8000-000000000001",
    ...fields,
  };
}

/** A direct message to the bot. */
export const dmEvent = (fields: Record<string, unknown> = {}) => messageEvent({ channel: "D0442US94JD", channel_type: "im", ...fields });

/** Shaped after the golden file_share example (hackage slack-web message_file_share.json). */
export function fileShareEvent(): Record<string, unknown> {
  return dmEvent({
    subtype: "file_share",
    upload: true,
    ts: "1670631527.874149",
    text: "",
    files: [
      {
        id: "F04EEHX1EES",
        name: "namenamename.txt",
        title: "namenamename.txt",
        mimetype: "text/plain",
        filetype: "text",
        size: 12,
        mode: "hosted",
        url_private: "https://files.slack.com/files-pri/T043DB835ML-F04EEHX1EES/namenamename.txt",
      },
    ],
  });
}
