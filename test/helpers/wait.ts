/**
 * Waiting in tests for something to happen, never for a fixed time: poll a
 * condition until it holds, and fail naming what did not happen. For the
 * other case, proving that something does NOT happen, a test keeps a
 * bounded window of its own, named and explained where it is used.
 */

/** Poll `check` until it holds; fails naming `what` after `timeoutMs` (the code under test may run in another process). */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/** Poll `probe` until it gives a value (not undefined, not false); that value, or a failure naming `what` after `timeoutMs`. */
export async function untilValue<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  let value: T | undefined | false;
  const given = async () => {
    value = await probe();
    return value !== undefined && value !== false;
  };
  await until(what, given, timeoutMs);
  return value as T;
}

/** The promise, or a rejection naming `what` after the timeout: a failing wait fails fast and says why. */
export function within<T>(promise: Promise<T>, what: string, timeoutMs = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
