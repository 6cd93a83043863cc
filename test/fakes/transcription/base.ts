/**
 * What the three speech-to-text fakes share: a loopback server whose API root
 * ends in `/v1`, a record of every call as the service would have read it,
 * and a script of answers (a transcript, an HTTP error with an optional
 * Retry-After, or a hang until the client gives up). With nothing scripted, a
 * fake "hears" the words in the recording (see speech.ts).
 */
import { LoopbackServer, parseRequest, type RecordedFile, type RecordedRequest, waitFor } from "../recorder.ts";
import { type Container, sniff, wordsOf } from "./speech.ts";

export type SttReply = { kind: "heard"; text: string } | { kind: "status"; status: number; message: string; retryAfter?: string } | { kind: "hang" };

/** Scripted answers for `fake.reply(…)`. */
export const stt = {
  /** Answer this transcript, whatever the recording says. */
  heard: (text: string): SttReply => ({ kind: "heard", text }),
  /** An HTTP error in the service's own error shape; `retryAfter` sets the Retry-After header. */
  status: (status: number, message = "The server had an error while processing your request.", retryAfter?: string): SttReply =>
    retryAfter === undefined ? { kind: "status", status, message } : { kind: "status", status, message, retryAfter },
  /** 429, with Retry-After in seconds. */
  rateLimited: (retryAfter = "0"): SttReply => ({ kind: "status", status: 429, message: "Rate limit reached for requests", retryAfter }),
  /** No answer at all until the client closes the connection. */
  hang: (): SttReply => ({ kind: "hang" }),
};

/** One request as the service read it. */
export interface SttCall {
  request: RecordedRequest;
  /** The recording: the `file` part (multipart services) or the raw body (Deepgram). */
  audio?: { bytes: Uint8Array; filename?: string; type: string; container?: Container };
  /** The HTTP status answered. */
  status?: number;
  /** The transcript answered, when one was. */
  transcript?: string;
}

export abstract class SttFake {
  readonly calls: SttCall[] = [];
  protected readonly http: LoopbackServer;
  private readonly script: SttReply[] = [];

  constructor(
    /** The key the service accepts; null for a server that needs none (a local whisper server). */
    readonly key: string | null,
  ) {
    this.http = new LoopbackServer((req) => this.serve(req));
  }

  /** The API root to configure as `base_url`: `http://127.0.0.1:<port>/v1`. */
  get url(): string {
    return `${this.http.url}/v1`;
  }

  /** Every HTTP request received, parsed. */
  get requests(): RecordedRequest[] {
    return this.http.requests;
  }

  /** Queue answers for the next calls, in order. */
  reply(...replies: SttReply[]): void {
    this.script.push(...replies);
  }

  /** Wait until `count` calls have been answered. */
  waitForCalls(count: number, timeoutMs = 5000): Promise<SttCall[]> {
    return waitFor(() => (this.calls.filter((c) => c.status !== undefined).length >= count ? this.calls : undefined), {
      timeoutMs,
      what: `${count} transcription call(s)`,
    });
  }

  stop(): Promise<void> {
    return this.http.stop();
  }

  /** The service's checks of a request: a refusal, or the recording it carries. */
  protected abstract check(call: SttCall, raw: Uint8Array): Response | SttCall["audio"];
  /** The service's success body for a transcript. */
  protected abstract success(text: string, call: SttCall): unknown;
  /** The service's error body. */
  protected abstract errorBody(status: number, message: string): unknown;

  /** An error answer in the service's shape, recorded on the call. */
  protected fail(call: SttCall, status: number, message: string, headers: Record<string, string> = {}): Response {
    call.status = status;
    const body = this.errorBody(status, message);
    call.request.status = status;
    call.request.response = body;
    return Response.json(body, { status, headers });
  }

  private async serve(req: Request): Promise<Response> {
    const raw = new Uint8Array(await req.clone().arrayBuffer());
    const request = await parseRequest(req, "transcribe");
    this.http.requests.push(request);
    const call: SttCall = { request };
    this.calls.push(call);
    const checked = this.check(call, raw);
    if (checked instanceof Response) return checked;
    if (checked) call.audio = { ...checked, container: sniff(checked.bytes) };

    const next = this.script.shift() ?? { kind: "heard", text: wordsOf(call.audio?.bytes ?? new Uint8Array()) };
    if (next.kind === "hang") {
      await new Promise<void>((resolve) => {
        if (req.signal.aborted) resolve();
        req.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      call.status = 499;
      return new Response(null, { status: 499 });
    }
    if (next.kind === "status") return this.fail(call, next.status, next.message, next.retryAfter === undefined ? {} : { "retry-after": next.retryAfter });
    call.status = 200;
    call.transcript = next.text;
    const body = this.success(next.text, call);
    request.status = 200;
    request.response = body;
    return Response.json(body);
  }
}

/** The `file` part of a multipart request, if there is exactly that. */
export function filePart(request: RecordedRequest): RecordedFile | undefined {
  return request.files.find((f) => f.field === "file");
}
