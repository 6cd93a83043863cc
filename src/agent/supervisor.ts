/**
 * Keeps the MainAgent alive: builds it from config (the provider chain — the
 * primary, then `[fermix_core] fallback` in order — and the persona), and
 * rebuilds it when a turn fails unexpectedly or on request (SIGHUP). While it
 * rebuilds, `current()` is null and the gateway answers "restart in
 * progress". The persona is read for every turn, so a changed SOUL.md needs
 * no restart. What health shows of each provider is kept here, from the
 * outcome of every request the chain sends it.
 */
import type { Config, ProviderConfig } from "../config/schema.ts";
import { describeError } from "../kernel/errors.ts";
import type { Fault } from "../kernel/fault-line.ts";
import type { ProviderState } from "../kernel/health.ts";
import type { Logger } from "../kernel/log.ts";
import type { ConversationStore } from "../store/conversations.ts";
import { type AgentDeps, MainAgent } from "./agent.ts";
import { Compactor } from "./compaction.ts";
import { ProviderChain } from "./providers/chain.ts";
import { createProvider, type ProviderDeps } from "./providers/index.ts";
import type { Provider, ProviderError } from "./providers/types.ts";

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

/** The providers a request tries, in order: the primary, then `[fermix_core] fallback` (config loading checked each name). */
export function providerOrder(config: Config): PrimaryProvider[] {
  const primary = primaryProvider(config);
  if (!primary) return [];
  const { providers, fallback } = config.fermix_core;
  return [primary, ...fallback.flatMap((name) => (providers[name] ? [{ name, config: providers[name] }] : []))];
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
  /** A request moved on from a failing provider to the next one (for the log and the dashboard). */
  onFailover?: (from: string, to: string, error: ProviderError) => void;
}

export class AgentSupervisor {
  private agent: MainAgent | null = null;
  /** Each provider's state since its latest request: absent until it was asked (then ready or degraded). */
  private readonly health = new Map<string, ProviderState>();
  /** Each provider's config as last built, to tell a changed one at reload. */
  private configs = new Map<string, string>();
  private restarting: Promise<void> | null = null;
  private built: { primary: PrimaryProvider | null; provider: ProviderChain | null; compactor: Compactor | null } = {
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
  /** The provider chain every request goes through (the primary first), or null when none is configured. */
  get provider(): ProviderChain | null {
    return this.built.provider;
  }
  get compactor(): Compactor | null {
    return this.built.compactor;
  }

  /**
   * Build the provider chain, compactor and agent from `config` (the daemon's
   * reload: a new primary or fallback order takes the next turn; a turn
   * already running finishes on the agent it started with).
   */
  reconfigure(config: Config): void {
    const order = providerOrder(config);
    const primary = order[0] ?? null;
    const provider =
      order.length > 0
        ? new ProviderChain(
            order.map((p, i) => ({
              name: p.name,
              model: p.config.model,
              // Every provider but the last has one behind it: it hands a server it cannot reach to the next rather than retrying.
              provider: createProvider(p.name, p.config, { ...this.deps.providerDeps, ...(i < order.length - 1 ? { fallbackWaiting: true } : {}) }),
            })),
            {
              onOutcome: (name, error) => this.noteOutcome(name, error),
              ...(this.deps.onFailover ? { onFailover: this.deps.onFailover } : {}),
            },
          )
        : null;
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
    // What is known of a provider configured as before stays; one removed or changed (a new key, a new URL) is known afresh.
    const configs = new Map(Object.entries(config.fermix_core.providers).map(([name, p]) => [name, JSON.stringify(p)]));
    for (const name of [...this.health.keys()]) if (configs.get(name) !== this.configs.get(name)) this.health.delete(name);
    this.configs = configs;
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

  /** What health shows of each provider asked so far: degraded, with the fault's class and status, after a request it failed; ready after one it answered. */
  providerStates(): ReadonlyMap<string, ProviderState> {
    return this.health;
  }

  /**
   * One request's outcome at provider `name` (the chain reports each). A
   * failure is recorded as its class and HTTP status only: the provider's
   * own words (which may echo what the user wrote) are for the log line the
   * turn writes, never for health or a page.
   */
  noteOutcome(name: string, fault?: Fault): void {
    const was = this.health.get(name);
    if (!fault) {
      if (was?.status === "degraded") this.deps.log.info("model provider answering again", { provider: name });
      this.health.set(name, { status: "ready" });
      return;
    }
    this.health.set(name, { status: "degraded", fault: pageFault(fault) });
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
