/**
 * Signal from OpenClaw (see OpenClawChannel in src/channels/openclaw.ts): the
 * bot's number and the signal-cli it runs. Both drive the same signal-cli
 * account, so the link OpenClaw made keeps working. OpenClaw can also talk
 * to a signal-cli daemon it did not start (`httpUrl`); Fermix always starts
 * its own. Allowlist entries are numbers or `uuid:<id>`; cron targets are a
 * number, `uuid:<id>` or `signal:group:<id>`, as
 * https://docs.openclaw.ai/channels/signal describes them.
 */
import { type OpenClawChannel, type OpenClawChannelImport, textAt } from "../openclaw.ts";
import { GROUP_PREFIX } from "./inbound.ts";

const PHONE = /^\+\d{6,15}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A number or a UUID, from OpenClaw's `signal:`/`uuid:` forms. */
function person(entry: string): string | undefined {
  const id = entry
    .trim()
    .replace(/^signal:/i, "")
    .replace(/^uuid:/i, "");
  return PHONE.test(id) || UUID.test(id) ? id : undefined;
}

export const signalOpenClaw: OpenClawChannel = {
  translate(section) {
    const result: OpenClawChannelImport = { values: {}, skipped: [], manual: [] };
    const account = textAt(section, "account");
    if (account) result.values.account = account;
    else {
      result.off = "OpenClaw's config names no Signal account number";
      result.manual.push("Give the bot's Signal number: fermix setup --yes --reconfigure --signal-account +<number> --signal-enabled true");
    }
    const cliPath = textAt(section, "cliPath");
    if (cliPath) result.values.cli_path = cliPath;
    const httpUrl = textAt(section, "httpUrl");
    if (httpUrl || section.autoStart === false) {
      result.skipped.push({
        what: `the external signal-cli daemon${httpUrl ? ` at ${httpUrl}` : ""}`,
        why: "Fermix starts signal-cli itself (jsonRpc); stop the external daemon before starting Fermix, since both would read the same account",
      });
    }
    return result;
  },
  senderId: person,
  chat(to) {
    const target = to.trim().replace(/^signal:/i, "");
    const group = /^group:(.+)$/i.exec(target);
    if (group) return { chatId: `${GROUP_PREFIX}${group[1]}` };
    return person(target) ? { chatId: person(target)! } : `"${to}" is not a Signal number, UUID or group`;
  },
  directChatIsSender: true,
};
