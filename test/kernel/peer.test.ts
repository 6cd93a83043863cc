/** Whose a loopback connection is, as /proc/net/tcp{,6} lists it: on data, and on this machine's own kernel. */
import { describe, expect, test } from "bun:test";
import { loopbackPeerUid, procAddress, uidInTable } from "../../src/kernel/peer.ts";

const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:0FBE 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1148 1 0 100 0 0 10 0
   1: 0100007F:C350 0100007F:0FBE 01 00000000:00000000 00:00000000 00000000  1001        0 2222 1 0 20 4 30 10 -1
   2: 0100007F:0FBE 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 3333 1 0 20 4 30 10 -1
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:C351 00000000000000000000000001000000:0FBE 01 00000000:00000000 00:00000000 00000000  1002        0 4444 1 0 20 4 30 10 -1
   1: 0000000000000000FFFF00000100007F:C352 0000000000000000FFFF00000100007F:0FBE 01 00000000:00000000 00:00000000 00000000  1003        0 5555 1 0 20 4 30 10 -1
`;

describe("/proc/net addresses", () => {
  test("IPv4, IPv6 and IPv4-mapped IPv6, in a little-endian kernel's order", () => {
    expect(procAddress("0100007F:C350", true)).toEqual({ address: "127.0.0.1", port: 50_000 });
    expect(procAddress("00000000000000000000000001000000:0FBE", true)).toEqual({ address: "::1", port: 4030 });
    expect(procAddress("0000000000000000FFFF00000100007F:C352", true)).toEqual({ address: "127.0.0.1", port: 50_002 });
    expect(procAddress("B80D0120000000000000000001000000:0050", true)).toEqual({ address: "2001:db8::1", port: 80 });
    expect(procAddress("7F000001:0050", false)).toEqual({ address: "127.0.0.1", port: 80 });
    expect(procAddress("nonsense", true)).toBeUndefined();
  });
});

describe("the account behind a client's connection", () => {
  test("is the uid of the client's side: its address and port, connected to the server's port", () => {
    expect(uidInTable([TCP, TCP6], { address: "127.0.0.1", port: 50_000 }, 4030, true)).toBe(1001);
    expect(uidInTable([TCP, TCP6], { address: "::1", port: 50_001 }, 4030, true)).toBe(1002);
    expect(uidInTable([TCP, TCP6], { address: "::ffff:127.0.0.1", port: 50_002 }, 4030, true)).toBe(1003);
  });

  test("is unknown for a connection to another port, or one not listed", () => {
    expect(uidInTable([TCP], { address: "127.0.0.1", port: 50_000 }, 8080, true)).toBeUndefined();
    expect(uidInTable([TCP], { address: "127.0.0.1", port: 40_000 }, 4030, true)).toBeUndefined();
  });

  test("on this machine's kernel, a connection this process opens is this process's account", async () => {
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const client = await Bun.connect({ hostname: "127.0.0.1", port: server.port, socket: { data() {} } });
    try {
      expect(loopbackPeerUid({ address: "127.0.0.1", port: client.localPort }, server.port)).toBe(process.getuid!());
    } finally {
      client.end();
      server.stop(true);
    }
  });
});
