/**
 * Discord's REST rate limits as one client keeps them (Discord's developer
 * docs, "Rate Limits"): per-route buckets learnt from the `X-RateLimit-*`
 * headers, keyed by the bucket hash and the route's major parameter (the
 * channel), a 429's `retry_after` applied to its bucket or, when `global` is
 * set, to every request. Pure bookkeeping with an injected clock: the client
 * asks how long to wait and reports what it was told.
 */

/** One request's route, as the limiter files it. */
export interface RouteKey {
  /** `POST /channels/123/messages`, `PATCH /channels/123/messages/:id`, …: ids other than the major one are placeholders. */
  route: string;
  /** The major parameter (the channel id), or "" for routes without one. */
  major: string;
}

interface BucketState {
  remaining: number;
  resetAt: number;
}

/**
 * The route key of a REST path: the channel id (an interaction's id, for its
 * callback) is kept as the major parameter; other ids, the emoji and an
 * interaction's token become placeholders.
 */
export function routeKey(method: string, path: string): RouteKey {
  const parts = path.split("/");
  let major = "";
  const route = parts
    .map((part, i) => {
      const previous = parts[i - 1];
      if (previous === "reactions") return ":emoji";
      // An interaction's token is a credential: it never names a route (nor reaches a log line through one).
      if (parts[i - 2] === "interactions" && i === 3) return ":token";
      if (!/^\d{5,}$/.test(part)) return part;
      // An interaction's callback is limited per interaction: its id is the major parameter there.
      if (!major && (previous === "channels" || previous === "guilds" || previous === "webhooks" || previous === "interactions")) {
        major = part;
        return part;
      }
      return ":id";
    })
    .join("/");
  return { route: `${method.toUpperCase()} ${route}`, major };
}

/** A 429's body: `{message, retry_after (seconds, fractional), global, code?}`. */
export interface RateLimitBody {
  retry_after?: unknown;
  global?: unknown;
}

/** Buckets kept before the refilled ones are forgotten. */
const MAX_BUCKETS = 1000;

/** The shortest wait after a 429, so a `retry_after` of 0 can never spin a loop. */
export const MIN_RETRY_WAIT_MS = 250;

export class RateLimits {
  /** Route → the bucket hash Discord named for it. */
  private readonly hashes = new Map<string, string>();
  private readonly buckets = new Map<string, BucketState>();
  private globalUntil = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** How long a request on `key` must wait before it may go, in ms (0: now); reserves its place in the bucket. */
  take(key: RouteKey): number {
    const now = this.now();
    const global = Math.max(0, this.globalUntil - now);
    const bucket = this.buckets.get(this.bucketId(key));
    if (!bucket || bucket.resetAt <= now) return global;
    if (bucket.remaining > 0) {
      bucket.remaining--;
      return global;
    }
    return Math.max(global, bucket.resetAt - now);
  }

  /** Learn from a response's headers (any status): the bucket hash, what is left, and when it refills. */
  update(key: RouteKey, headers: Headers): void {
    const hash = headers.get("x-ratelimit-bucket");
    if (hash) this.hashes.set(key.route, hash);
    const remaining = Number(headers.get("x-ratelimit-remaining") ?? Number.NaN);
    const resetAfter = Number(headers.get("x-ratelimit-reset-after") ?? Number.NaN);
    if (!Number.isFinite(remaining) || !Number.isFinite(resetAfter)) return;
    if (this.buckets.size >= MAX_BUCKETS) this.prune();
    this.buckets.set(this.bucketId(key), { remaining: Math.max(0, Math.floor(remaining)), resetAt: this.now() + Math.max(0, resetAfter) * 1000 });
  }

  /**
   * Record a 429: its `retry_after` closes the route's bucket, or every route
   * when it is global. Returns the wait in ms and whether it was global.
   */
  limited(key: RouteKey, headers: Headers, body: RateLimitBody): { waitMs: number; global: boolean } {
    this.update(key, headers);
    const fromBody = typeof body.retry_after === "number" && Number.isFinite(body.retry_after) ? body.retry_after * 1000 : Number.NaN;
    const fromHeader = Number(headers.get("retry-after") ?? Number.NaN) * 1000;
    const waitMs = Math.max(MIN_RETRY_WAIT_MS, Number.isFinite(fromBody) ? fromBody : Number.isFinite(fromHeader) ? fromHeader : 1000);
    const global = body.global === true || headers.get("x-ratelimit-global")?.toLowerCase() === "true";
    const until = this.now() + waitMs;
    if (global) this.globalUntil = Math.max(this.globalUntil, until);
    else this.buckets.set(this.bucketId(key), { remaining: 0, resetAt: until });
    return { waitMs: Math.ceil(waitMs), global };
  }

  /** Forget buckets that have refilled: one per channel and per interaction would otherwise only grow. */
  private prune(): void {
    const now = this.now();
    for (const [id, bucket] of this.buckets) if (bucket.resetAt <= now) this.buckets.delete(id);
  }

  private bucketId(key: RouteKey): string {
    const hash = this.hashes.get(key.route);
    return hash ? `${hash}:${key.major}` : `${key.route}:${key.major}`;
  }
}
