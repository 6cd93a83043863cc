/**
 * A real core (SQLite in a temp home, gateway, inbox, dispatcher) behind the
 * webhook routes, for in-process integration tests: the model is the loopback
 * fake; channel I/O is a recording port registered in place of an adapter.
 */
import { loadConfig } from "../../src/config/index.ts";
import { buildCore, type Core } from "../../src/daemon/core.ts";
import { webhookRoutes } from "../../src/http/webhooks/index.ts";
import { Logger, Redactor } from "../../src/kernel/log.ts";
import type { FetchedMedia, InboundMedia, OutboundMedia, ReplyTarget } from "../../src/message/index.ts";
import { NO_REACTIONS, RecordingChannel } from "./gateway.ts";
import { makeHome, type TestHome } from "./home.ts";

export interface Sent {
  target: ReplyTarget;
  text?: string;
  media?: OutboundMedia;
}

export interface WebhookCore {
  core: Core;
  home: TestHome;
  sent: Sent[];
  post(path: string, body: string, headers: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

export async function webhookCore(toml: string, options: { handoffCapacity?: number; media?: (m: InboundMedia) => FetchedMedia } = {}): Promise<WebhookCore> {
  const home = makeHome();
  home.writeConfig(toml);
  const loaded = await loadConfig(home.env);
  const log = new Logger({ write() {} }, "error", new Redactor());
  const core = buildCore({ loaded, log, ...(options.handoffCapacity !== undefined ? { handoffCapacity: options.handoffCapacity } : {}) });
  // The gateway tests' recording channel stands in for the platforms; its capabilities here are plain.
  const recorder = new RecordingChannel(NO_REACTIONS);
  for (const channel of ["slack", "whatsapp"] as const) {
    core.channels.set(channel, {
      port: (target) => recorder.port(target),
      inboundMediaCap: 25 * 1024 * 1024,
      fetchMedia: async (media) => {
        if (!options.media) throw new Error("no media in this test");
        return options.media(media);
      },
    });
  }
  const app = webhookRoutes({ config: loaded.config, log, submit: (channel, items) => core.dispatcher.submit(channel, items) });
  return {
    core,
    home,
    get sent(): Sent[] {
      return recorder.actions.flatMap((a): Sent[] =>
        a.kind === "text" ? [{ target: a.target, text: a.text }] : a.kind === "media" ? [{ target: a.target, media: a.media }] : [],
      );
    },
    post: (path, body, headers) =>
      app.handle(new Request(`http://fermix.test${path}`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } })),
    async close() {
      await core.close(100);
      home.cleanup();
    },
  };
}
