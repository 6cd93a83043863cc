/**
 * Failover between providers: the primary, then `[fermix_core] fallback` in
 * order, behind the one Provider interface, so every kind of request —
 * a turn's steps, compaction, `/ultra`, a `/soul review`, a scheduled job —
 * follows the same rule. A request that fails in a transient class before the
 * provider sent anything of its answer runs again on the next provider, once
 * each; a failure after the answer started is final (what was shown cannot be
 * taken back, and sending it again would show it twice). Each provider's
 * outcome is reported as it happens, so health marks a failing primary while
 * a fallback keeps answering.
 *
 * A turn takes its own view (`forTurn`): once a provider answered one of the
 * turn's requests, its later steps go to that provider first, so a primary
 * that is down costs a turn one failover, not one per tool step. The next
 * turn starts from the primary again.
 */
import { type ModelRequest, type Provider, ProviderError, type ProviderEvent, type TurnProvider } from "./types.ts";

/** One provider of the chain, and the model it is asked for. */
export interface ChainLink {
  name: string;
  provider: Provider;
  model: string;
}

export interface ChainHooks {
  /** Each request's outcome at each provider it reached: answered, or failed with this error. */
  onOutcome?(name: string, error?: ProviderError): void;
  /** A request moves on from `from` to `to` after this error. */
  onFailover?(from: string, to: string, error: ProviderError): void;
}

/** Codes of a stream that broke before any of its answer came: the connection, not the answer. */
const BROKEN_BEFORE_ANSWER = new Set(["dropped", "truncated"]);

/**
 * Whether a failure is worth another provider: it could not be reached, failed
 * on its side (5xx, overloaded) after its retries, rate-limited us past what
 * it was worth waiting for, or never started answering. A refused key, a spent
 * quota or a refused request is the owner's to fix, and is said so.
 */
export function failsOver(error: ProviderError): boolean {
  switch (error.fault) {
    case "unreachable":
    case "server":
    case "rate_limited":
    case "timeout":
      return true;
    case "cut_off":
      return error.code !== undefined && BROKEN_BEFORE_ANSWER.has(error.code);
    default:
      return false;
  }
}

export class ProviderChain implements Provider {
  readonly name: string;

  constructor(
    private readonly links: readonly ChainLink[],
    private readonly hooks: ChainHooks = {},
  ) {
    if (links.length === 0) throw new Error("a provider chain needs at least one provider");
    this.name = links[0]!.name;
  }

  stream(request: ModelRequest): AsyncIterable<ProviderEvent> {
    return this.run(request, 0, () => {});
  }

  forTurn(): TurnProvider {
    let from = 0;
    let latest: string | undefined;
    return {
      name: this.name,
      get answeredBy() {
        return latest;
      },
      stream: (request) =>
        this.run(request, from, (index) => {
          from = index;
          latest = this.links[index]!.name;
        }),
    };
  }

  /** Try the providers from `from` on; `took(index)` is told which one the request ended with (answered, or failed last). */
  private async *run(request: ModelRequest, from: number, took: (index: number) => void): AsyncGenerator<ProviderEvent> {
    for (let index = from; index < this.links.length; index++) {
      const link = this.links[index]!;
      let started = false;
      try {
        for await (const event of link.provider.stream({ ...request, model: link.model })) {
          if (!started) {
            started = true;
            took(index);
          }
          yield event;
        }
        if (!started) took(index);
        this.hooks.onOutcome?.(link.name);
        return;
      } catch (error) {
        // A cancelled request (an AbortError) says nothing about the provider.
        if (!(error instanceof ProviderError)) throw error;
        this.hooks.onOutcome?.(link.name, error);
        const next = this.links[index + 1];
        if (started || !next || !failsOver(error)) {
          if (!started) took(index);
          throw error;
        }
        this.hooks.onFailover?.(link.name, next.name, error);
      }
    }
  }
}
