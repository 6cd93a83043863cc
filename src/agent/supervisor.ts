/**
 * Keeps the MainAgent alive: builds it from config (the primary provider and
 * the persona), and rebuilds it when a turn fails unexpectedly or on request
 * (SIGHUP). While it rebuilds, `current()` is null and the gateway answers
 * "restart in progress". The persona is read for every turn, so a changed
 * SOUL.md needs no restart.
 */
import type { Config, ProviderConfig } from "../config/schema.ts";
import { describeError } from "../kernel/errors.ts";
import type { Fault } from "../kernel/fault-line.ts";
import type { ProviderState } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import type { ConversationStore } from "../store/conversations.ts";
import { type AgentDeps, MainAgent } from "./agent.ts";
import { Compactor } from "./compaction.ts";
import { createProvider, type ProviderDeps } from "./providers/index.ts";
import type { Provider } from "./providers/types.ts";

/** Only the class and status of a fault are kept: a caller's object may carry more (a code, the attempts), none of it for a page. */
const pageFault = (fault: Fault): Fault => (fault.status === undefined ? { fault: fault.fault } : { fault: fault.fault, status: fault.status });

export interface PrimaryProvider {
  name: string;
  config: ProviderConfig;
}

/** The provider marked primary (config loading guarantees at most one, and marks the only one). */
export function primaryProvider(config: Config): PrimaryProvider | null {
  const entry = Object.entries(config.fermix_core.providers).find(([, p]) => p.primary);
  return entry ? { name: entry[0], config: entry[1] } : null;
}

/** The characters remembered facts may take in each turn's instructions: prompt_chars, or 0 when memory puts none there. */
function memoryPromptChars(config: Config): number {
  const { enabled, prompt_items, prompt_chars } = config.fermix_core.memory;
  return enabled && prompt_items > 0 ? prompt_chars : 0;
}

export interface AgentSupervisorDeps {
  config: Config;
  /** The persona, read for every turn: the /soul service's current SOUL.md (re-read from disk only when it changed). */
  soul: () => string;
  conversations: ConversationStore;
  log: Logger;
  providerDeps?: ProviderDeps;
  /** How long a rebuild takes at least; a restart is never instant, so tests can observe it. */
  restartDelayMs?: number;
  /** Sections the composition root adds to every turn's instructions (memories, skills…). */
  sections?: AgentDeps["sections"];
}

export class AgentSupervisor {
  private agent: MainAgent | null = null;
  private health: ProviderState = { status: "ready" };
  private restarting: Promise<void> | null = null;
  private built: { primary: PrimaryProvider | null; provider: Provider | null; compactor: Compactor | null } = {
    primary: null,
    provider: null,
    compactor: null,
  };

  constructor(private readonly deps: AgentSupervisorDeps) {
    this.reconfigure(deps.config);
  }

  get primary(): PrimaryProvider | null {
    return this.built.primary;
  }
  get provider(): Provider | null {
    return this.built.provider;
  }
  get compactor(): Compactor | null {
    return this.built.compactor;
  }

  /**
   * Build the provider, compactor and agent from `config` (the daemon's
   * reload: a new primary provider takes the next turn; a turn already
   * running finishes on the agent it started with).
   */
  reconfigure(config: Config): void {
    const primary = primaryProvider(config);
    const provider = primary ? createProvider(primary.name, primary.config, this.deps.providerDeps) : null;
    const compaction = config.fermix_core.compaction;
    const compactor =
      provider && primary
        ? new Compactor(provider, primary.config.model, this.deps.conversations, {
            enabled: compaction.enabled,
            threshold: compaction.threshold,
            contextWindow: primary.config.context_window,
            // Remembered facts in the instructions take room in the context window like history does (none when none go in).
            reservedChars: memoryPromptChars(config),
          })
        : null;
    this.built = { primary, provider, compactor };
    this.agent = this.build();
  }

  /** Whether any provider is configured at all. */
  get configured(): boolean {
    return this.provider !== null;
  }

  get providerName(): string | undefined {
    return this.primary?.name;
  }

  /** What health shows for the primary provider: degraded, with the fault's class and status, after a turn it failed; ready after one it answered. */
  providerState(): ProviderState {
    return this.health;
  }

  /**
   * A turn's provider outcome. A failure is recorded as its class and HTTP
   * status only: the provider's own words (which may echo what the user
   * wrote) are for the log line the turn writes, never for health or a page.
   */
  noteOutcome(ok: boolean, fault?: Fault): void {
    if (ok) {
      if (this.health.status === "degraded") this.deps.log.info("model provider answering again", { provider: this.primary?.name });
      this.health = { status: "ready" };
      return;
    }
    this.health = fault ? { status: "degraded", fault: pageFault(fault) } : { status: "degraded" };
  }

  /** The primary provider and its model, for requests outside a turn (a /soul review); null when none is configured. */
  primaryModel(): { provider: Provider; model: string } | null {
    return this.provider && this.primary ? { provider: this.provider, model: this.primary.config.model } : null;
  }

  current(): MainAgent | null {
    return this.agent;
  }

  /** Rebuild the agent; turns arriving meanwhile get "restart in progress". */
  restart(reason: string): Promise<void> {
    if (this.restarting) return this.restarting;
    this.deps.log.warn("restarting the agent", { reason });
    this.agent = null;
    this.restarting = (async () => {
      await Bun.sleep(this.deps.restartDelayMs ?? 250);
      try {
        this.agent = this.build();
        this.deps.log.info("agent restarted");
      } catch (error) {
        this.deps.log.error("agent restart failed; retrying", { error: describeError(error) });
        this.restarting = null;
        void this.restart("previous restart failed");
        return;
      }
      this.restarting = null;
    })();
    return this.restarting;
  }

  private build(): MainAgent | null {
    if (!this.provider || !this.primary) return null;
    return new MainAgent({
      provider: this.provider,
      model: this.primary.config.model,
      conversations: this.deps.conversations,
      soul: this.deps.soul,
      ...(this.deps.sections ? { sections: this.deps.sections } : {}),
    });
  }
}
