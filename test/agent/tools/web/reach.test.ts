/**
 * web_fetch's boundary (src/agent/tools/web/reach.ts, address.ts), tried as
 * an attacker would: every kind of address that only the daemon can reach —
 * loopback, private, link-local and cloud metadata, IPv6 and its mapped
 * forms, a name that resolves to loopback, a name with one private answer
 * among public ones, a public page that redirects to loopback — is refused
 * with a message saying why, and the transport that would connect is never
 * called for it. What is allowed connects to the address that was checked,
 * asking for the name in the Host header and TLS's server name, without a
 * second lookup.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { nonPublicKind } from "../../../../src/agent/tools/web/address.ts";
import { bunTransport, guardedFetch, reach, type Target, type Transport, WebRefused } from "../../../../src/agent/tools/web/reach.ts";
import { recordConnections } from "../../../fakes/web.ts";

const LIMITS = { maxBytes: 100_000, maxRedirects: 5, timeoutMs: 5000 };

/** A resolver from a table, counting lookups; a name it does not know does not exist. */
function resolver(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return found;
  };
  return { resolve, asked };
}

/** A transport that connects nowhere: it records each target and answers from `pages` by the URL asked for. */
function fakeTransport(pages: Record<string, () => Response>) {
  const targets: Target[] = [];
  const transport: Transport = async (target) => {
    targets.push(target);
    const page = pages[target.url.href];
    return page ? page() : new Response("not here", { status: 404 });
  };
  return { transport, targets };
}

describe("addresses", () => {
  test("each range that only the daemon can reach is named, IPv6 and mapped forms included", () => {
    const kinds = Object.fromEntries(
      [
        "127.0.0.1",
        "127.8.9.10",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.20",
        "100.64.0.1",
        "169.254.169.254",
        "169.254.10.1",
        "0.0.0.0",
        "224.0.0.251",
        "255.255.255.255",
        "::1",
        "::",
        "::ffff:127.0.0.1",
        "::ffff:7f00:1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "fd00:ec2::254",
        "fd12:3456::1",
        "fe80::1",
        "ff02::1",
        "64:ff9b::a00:1",
        "2002:a00:1::",
      ].map((a) => [a, nonPublicKind(a)]),
    );
    expect(kinds).toEqual({
      "127.0.0.1": "loopback",
      "127.8.9.10": "loopback",
      "10.0.0.1": "private",
      "172.16.5.4": "private",
      "192.168.1.20": "private",
      "100.64.0.1": "private",
      "169.254.169.254": "metadata",
      "169.254.10.1": "link-local",
      "0.0.0.0": "unspecified",
      "224.0.0.251": "multicast",
      "255.255.255.255": "reserved",
      "::1": "loopback",
      "::": "unspecified",
      "::ffff:127.0.0.1": "loopback",
      "::ffff:7f00:1": "loopback",
      "::ffff:10.0.0.1": "private",
      "::ffff:169.254.169.254": "metadata",
      "fd00:ec2::254": "metadata",
      "fd12:3456::1": "private",
      "fe80::1": "link-local",
      "ff02::1": "multicast",
      "64:ff9b::a00:1": "tunnelled",
      "2002:a00:1::": "tunnelled",
    });
  });

  test("public addresses pass, IPv4 and IPv6", () => {
    for (const address of ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:93.184.216.34"]) expect(nonPublicKind(address)).toBeNull();
  });
});

describe("what is refused, before any connection", () => {
  const refused = async (url: string, table: Record<string, string[]> = {}) => {
    const { transport, targets } = fakeTransport({});
    const error = await guardedFetch(new URL(url), LIMITS, { allowHosts: [], resolve: resolver(table).resolve, transport }).catch((e: unknown) => e);
    expect(targets).toEqual([]);
    expect(error).toBeInstanceOf(WebRefused);
    return (error as Error).message;
  };

  test("addresses written in the URL", async () => {
    expect(await refused("http://127.0.0.1/")).toStartWith("127.0.0.1 is a loopback address: web_fetch reaches only public addresses");
    expect(await refused("http://10.0.0.1/admin")).toStartWith("10.0.0.1 is a private address");
    expect(await refused("http://169.254.169.254/latest/meta-data/")).toStartWith("169.254.169.254 is a cloud metadata address");
    expect(await refused("http://[::1]:8080/")).toStartWith("::1 is a loopback address");
    expect(await refused("http://[::ffff:127.0.0.1]/")).toStartWith("::ffff:7f00:1 is a loopback address");
    // The URL parser's other spellings of loopback are the same address.
    expect(await refused("http://2130706433/")).toStartWith("127.0.0.1 is a loopback address");
    expect(await refused("http://0x7f.1/")).toStartWith("127.0.0.1 is a loopback address");
    expect(await refused("http://0/")).toStartWith("0.0.0.0 is the unspecified address");
  });

  test("a name that resolves to loopback, or has one private answer among public ones", async () => {
    expect(await refused("http://rebind.example/", { "rebind.example": ["127.0.0.1"] })).toStartWith(
      "rebind.example resolves to 127.0.0.1, a loopback address",
    );
    expect(await refused("https://mixed.example/", { "mixed.example": ["93.184.216.34", "10.1.2.3"] })).toStartWith(
      "mixed.example resolves to 10.1.2.3, a private address",
    );
    expect(await refused("http://v6.example/", { "v6.example": ["fe80::1"] })).toStartWith("v6.example resolves to fe80::1, a link-local address");
  });

  test("other schemes and credentials in the URL", async () => {
    expect(await refused("file:///etc/passwd")).toBe("only http and https URLs are fetched, not file:");
    expect(await refused("ftp://files.example/x")).toBe("only http and https URLs are fetched, not ftp:");
    expect(await refused("http://user:secret@93.184.216.34/")).toBe("a URL with a user name or password in it is not fetched");
  });

  test("a public page that redirects to loopback: the first hop is fetched, the redirect is not followed", async () => {
    const { resolve } = resolver({ "news.example": ["93.184.216.34"] });
    const { transport, targets } = fakeTransport({
      "http://news.example/story": () => new Response(null, { status: 302, headers: { location: "http://127.0.0.1:9/private" } }),
    });
    const error = await guardedFetch(new URL("http://news.example/story"), LIMITS, { allowHosts: [], resolve, transport }).catch((e: unknown) => e);
    expect((error as Error).message).toStartWith("127.0.0.1 is a loopback address");
    expect(targets.map((t) => t.address)).toEqual(["93.184.216.34"]);
  });

  test("a name that does not resolve is a plain error, not a refusal", async () => {
    const error = await reach(new URL("http://nowhere.example/"), { allowHosts: [], resolve: resolver({}).resolve }).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(WebRefused);
    expect((error as Error).message).toStartWith("nowhere.example could not be resolved");
  });
});

describe("what is allowed", () => {
  test("a public name connects to the address checked, asking for the name (Host, TLS server name); one lookup per hop", async () => {
    const { resolve, asked } = resolver({ "news.example": ["93.184.216.34"], "cdn.example": ["2606:4700::6810:84e5"] });
    const { transport, targets } = fakeTransport({
      "https://news.example/a": () => new Response(null, { status: 301, headers: { location: "https://cdn.example:8443/b" } }),
      "https://cdn.example:8443/b": () => new Response("hello", { headers: { "content-type": "text/plain" } }),
    });
    const fetched = await guardedFetch(new URL("https://news.example/a"), LIMITS, { allowHosts: [], resolve, transport });
    expect(new TextDecoder().decode(fetched.body)).toBe("hello");
    expect(fetched.finalUrl.href).toBe("https://cdn.example:8443/b");
    expect(targets.map((t) => ({ connect: t.connectUrl.href, host: t.host, serverName: t.serverName }))).toEqual([
      { connect: "https://93.184.216.34/a", host: "news.example", serverName: "news.example" },
      { connect: "https://[2606:4700::6810:84e5]:8443/b", host: "cdn.example:8443", serverName: "cdn.example" },
    ]);
    expect(asked).toEqual(["news.example", "cdn.example"]);
  });

  test("allow_hosts lets a private host through, by name or by address, and nothing else", async () => {
    const { resolve } = resolver({ "nas.home": ["192.168.1.20"] });
    const policy = { allowHosts: ["nas.home", "::1"], resolve };
    expect((await reach(new URL("http://nas.home:5000/"), policy)).address).toBe("192.168.1.20");
    expect((await reach(new URL("http://[::1]:80/"), policy)).address).toBe("::1");
    expect(await reach(new URL("http://192.168.1.20/"), policy).catch((e: Error) => e.message)).toStartWith("192.168.1.20 is a private address");
  });

  test("redirects stop at the limit", async () => {
    const { resolve } = resolver({ "loop.example": ["93.184.216.34"] });
    const { transport, targets } = fakeTransport({ "http://loop.example/": () => new Response(null, { status: 302, headers: { location: "/" } }) });
    const error = (await guardedFetch(new URL("http://loop.example/"), LIMITS, { allowHosts: [], resolve, transport }).catch((e: Error) => e)) as Error;
    expect(error.message).toBe("http://loop.example/ redirected more than 5 times; stopped at http://loop.example/");
    expect(targets).toHaveLength(6);
  });

  test("the body is read up to the limit and no further", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1000).fill(65));
      },
    });
    const { resolve } = resolver({ "big.example": ["93.184.216.34"] });
    const transport: Transport = async () => new Response(endless, { headers: { "content-type": "text/plain" } });
    const fetched = await guardedFetch(new URL("http://big.example/"), { ...LIMITS, maxBytes: 4500 }, { allowHosts: [], resolve, transport });
    expect(fetched.body.length).toBe(4500);
    expect(fetched.cut).toBe(true);
    // The stream was pulled for what was kept (and the read-ahead of one chunk), not forever.
    expect(pulled).toBeLessThan(10);
  });
});

describe("against real listeners on loopback", () => {
  const stops: Array<() => void> = [];
  afterEach(() => {
    while (stops.length > 0) stops.pop()!();
  });

  test("with no allow-list, loopback in every spelling gets no connection", async () => {
    const recorder = recordConnections();
    stops.push(() => recorder.stop());
    const port = recorder.port;
    for (const url of [`http://127.0.0.1:${port}/`, `http://[::1]:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://localhost:${port}/`]) {
      const error = await guardedFetch(new URL(url), LIMITS, { allowHosts: [] }).catch((e: unknown) => e);
      expect({ url, refused: error instanceof WebRefused }).toEqual({ url, refused: true });
    }
    expect(recorder.connections).toEqual([]);
  });

  test("an allowed name is asked for by name at the address it resolved to: a DNS answer cannot change between check and connection", async () => {
    const seen: string[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) => {
        seen.push(req.headers.get("host") ?? "");
        return new Response("pinned", { headers: { "content-type": "text/plain" } });
      },
    });
    stops.push(() => server.stop(true));
    // The first answer is the checked one; a second lookup would get a public address that nobody listens on.
    const answers = [["127.0.0.1"], ["93.184.216.34"]];
    let lookups = 0;
    const resolve = async () => answers[lookups++]!;
    const fetched = await guardedFetch(new URL(`http://pinned.test:${server.port}/x`), LIMITS, { allowHosts: ["pinned.test"], resolve });
    expect(new TextDecoder().decode(fetched.body)).toBe("pinned");
    expect(seen).toEqual([`pinned.test:${server.port}`]);
    expect(lookups).toBe(1);
  });

  test("https to a checked address verifies the certificate against the name asked for, not the address", async () => {
    const tls = join(import.meta.dir, "../../../fakes/tls");
    const cert = readFileSync(join(tls, "secure-test.crt"), "utf8");
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert, key: readFileSync(join(tls, "secure-test.key"), "utf8") },
      fetch: (req) => new Response(`over tls for ${req.headers.get("host")}`, { headers: { "content-type": "text/plain" } }),
    });
    stops.push(() => server.stop(true));
    // secure.test's certificate, at 127.0.0.1: verified against the name, so it is accepted.
    const resolve = async (host: string) => (host === "secure.test" || host === "other.test" ? ["127.0.0.1"] : []);
    const policy = { allowHosts: ["secure.test", "other.test"], resolve, transport: bunTransport({ ca: cert }) };
    const fetched = await guardedFetch(new URL(`https://secure.test:${server.port}/`), LIMITS, policy);
    expect(new TextDecoder().decode(fetched.body)).toBe(`over tls for secure.test:${server.port}`);
    // Another name served by the same address and certificate is refused by TLS: the name, not the address, is checked.
    const other = await guardedFetch(new URL(`https://other.test:${server.port}/`), LIMITS, policy).catch((e: Error) => e);
    expect((other as Error).message).toContain("could not fetch https://other.test");
    expect((other as Error).message).toContain("CERT_ALTNAME_INVALID");
  });
});
