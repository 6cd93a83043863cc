/** Where the adapter reads signal-cli's attachments from: the configured folder, else signal-cli's own default. */
import { expect, test } from "bun:test";
import { join, resolve } from "node:path";
import { signalAttachmentsDir } from "../../../src/channels/signal/files.ts";

test("attachments_dir wins; else $XDG_DATA_HOME/signal-cli/attachments; else ~/.local/share/signal-cli/attachments", () => {
  expect(signalAttachmentsDir("relative/store", { HOME: "/home/ada", XDG_DATA_HOME: "/data" })).toBe(resolve("relative/store"));
  expect(signalAttachmentsDir(undefined, { HOME: "/home/ada", XDG_DATA_HOME: "/data" })).toBe(join("/data", "signal-cli", "attachments"));
  expect(signalAttachmentsDir(undefined, { HOME: "/home/ada" })).toBe("/home/ada/.local/share/signal-cli/attachments");
  // An empty XDG_DATA_HOME is unset, as the XDG spec says.
  expect(signalAttachmentsDir(undefined, { HOME: "/home/ada", XDG_DATA_HOME: "" })).toBe("/home/ada/.local/share/signal-cli/attachments");
});
