/**
 * The ACP adapter in this process: the real core (gateway, agent, queue)
 * against the fake model server, the adapter listening on a temporary
 * home's acp.sock, started with the context the daemon would give it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AcpAdapter } from "../../../src/channels/acp/index.ts";
import { buildCore, type Core } from "../../../src/daemon/core.ts";
import { createLogger } from "../../../src/kernel/log.ts";
import { type FakeModel, startFakeModel } from "../../fakes/model-server.ts";
import { loadedFrom } from "../../helpers/loaded.ts";

export interface AcpHarness {
  core: Core;
  fake: FakeModel;
  adapter: AcpAdapter;
  home: string;
  socket: string;
  close(): Promise<void>;
}

/** Start core + adapter; `provider` adds lines to the fake provider's table (e.g. `vision = false`). */
export async function startAcp(options: { provider?: string } = {}): Promise<AcpHarness> {
  const fake = await startFakeModel();
  const root = mkdtempSync(join(tmpdir(), "fermix-acp-"));
  const home = join(root, ".fermix");
  const loaded = loadedFrom(
    `
[fermix_core.providers.fake]
api = "responses"
base_url = "${fake.url}"
model = "fake-model"
${options.provider ?? ""}

[fermix_channels.telegram]
enabled = false
`,
    {},
    home,
  );
  const log = createLogger({ FERMIX_LOG_LEVEL: "error" });
  // No retries: a scripted failure is the answer at once.
  const core = buildCore({ loaded, log, providerDeps: { limits: { maxRetries: 0 } } });
  const adapter = new AcpAdapter(loaded.config);
  core.channels.set("acp", {
    port: (target) => adapter.replyPort(target),
    fetchMedia: (media) => adapter.fetchMedia(media),
    inboundMediaCap: adapter.inboundMediaCap,
  });
  await adapter.start({
    config: loaded.config,
    paths: loaded.paths,
    db: core.db,
    log,
    telemetry: core.telemetry,
    submit: async () => {
      throw new Error("ACP runs prompts through ingest, never the inbox");
    },
    ingest: (message, opts) => core.gateway.ingest(message, opts),
    stopConversation: (key) => void core.queue.stop(key),
  });
  return {
    core,
    fake,
    adapter,
    home,
    socket: loaded.paths.acpSocket,
    async close() {
      await adapter.stop();
      await core.close(50);
      await fake.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
