/**
 * Self-test of the fake signal-cli, driven over raw stdio (not through our
 * client), against the exchanges signal-cli-jsonrpc(5) documents: so the
 * adapter tests rest on a fake that answers what the real one answers.
 */
import { afterEach, expect, test } from "bun:test";
import { type SignalFake, type SignalResult, startSignalFake } from "./signal.ts";

let fake: SignalFake | undefined;
afterEach(async () => {
  await fake?.stop();
});

/** A line the fake printed: a response (a result or an error) or a notification. */
interface RpcLine {
  jsonrpc: string;
  id?: number | string | null;
  result?: SignalResult;
  error?: { code: number; message: string; data?: unknown };
  method?: string;
  params?: unknown;
}

/** Start the fake's wrapper as a user would, and read its stdout as lines. */
function run(f: SignalFake, args: string[]) {
  const proc = Bun.spawn([f.cliPath, ...args], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const lines: string[] = [];
  void (async () => {
    let buffer = "";
    for await (const chunk of proc.stdout) {
      buffer += new TextDecoder().decode(chunk);
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      lines.push(...parts.filter(Boolean));
    }
  })();
  const next = async (n: number) => {
    const deadline = Date.now() + 5000;
    while (lines.length < n && Date.now() < deadline) await Bun.sleep(10);
    return JSON.parse(lines[n - 1]!) as RpcLine;
  };
  const send = (line: string) => {
    proc.stdin.write(`${line}\n`);
    proc.stdin.flush();
  };
  return { proc, next, send };
}

test("the man page's exchanges: send by recipient and by group, a request without a method, an unknown method", async () => {
  fake = startSignalFake();
  const { proc, next, send } = run(fake, ["-a", fake.account, "jsonRpc"]);
  send('{"jsonrpc":"2.0","method":"send","params":{"recipient":["+YYY"],"message":"MESSAGE"},"id":4}');
  expect(await next(1)).toEqual({ jsonrpc: "2.0", result: { timestamp: expect.any(Number), results: expect.any(Array) }, id: 4 });
  send('{"jsonrpc":"2.0","method":"send","params":{"groupId":"GROUP_ID_BASE64","message":"MESSAGE"},"id":"g"}');
  expect((await next(2)).result!.timestamp).toBeGreaterThan((await next(1)).result!.timestamp!);
  send('{"jsonrpc":"2.0"}');
  expect(await next(3)).toEqual({ jsonrpc: "2.0", error: { code: -32600, message: "method field must be set", data: null }, id: null });
  send('{"jsonrpc":"2.0","method":"listGroupz","id":7}');
  expect((await next(4)).error!.code).toBe(-32601);
  send('{"jsonrpc":"2.0","method":"send","params":{"recipient":"+YYY"},"id":8}');
  expect((await next(5)).error).toEqual({ code: -1, message: expect.stringContaining("Sending empty message is not allowed") });

  // A receive notification as the man page prints it, pushed through the control port.
  await fake.receive({ envelope: { source: "+33123456789", sourceNumber: "+33123456789", timestamp: 1631458508784, dataMessage: { message: "foobar" } } });
  expect(await next(6)).toEqual({
    jsonrpc: "2.0",
    method: "receive",
    params: { envelope: { source: "+33123456789", sourceNumber: "+33123456789", timestamp: 1631458508784, dataMessage: { message: "foobar" } } },
  });
  expect(fake.calls("send")).toHaveLength(3);
  // End of input ends jsonRpc, as with signal-cli.
  proc.stdin.end();
  expect(await proc.exited).toBe(0);
});

test("an account that is not the registered one, or no jsonRpc, exits 1 with the reason on stderr", async () => {
  fake = startSignalFake();
  const wrong = Bun.spawn([fake.cliPath, "-a", "+19999999999", "jsonRpc"], { stdin: "pipe", stderr: "pipe" });
  expect(await wrong.exited).toBe(1);
  expect(await new Response(wrong.stderr).text()).toContain("+19999999999 is not registered");
  const noCommand = Bun.spawn([fake.cliPath, "-a", fake.account, "receive"], { stdin: "pipe", stderr: "pipe" });
  expect(await noCommand.exited).toBe(1);
  expect(fake.starts()).toHaveLength(2);
});
