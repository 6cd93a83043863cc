/**
 * Loopback fakes of the three speech-to-text services Fermix can use, each
 * written from the service's documented request and response formats and
 * checking what it receives — field names, headers, the auth scheme, and for
 * xAI the absence of a model field:
 *
 *   OpenAiSttFake  POST /v1/audio/transcriptions  multipart file + model, Bearer key
 *   XaiSttFake     POST /v1/stt                    multipart file only, Bearer key
 *   DeepgramFake   POST /v1/listen?model=…         raw bytes, Content-Type, Token key
 *
 * Each records `fake.calls` (the request, the recording it carried, the
 * status and transcript answered) and takes scripted answers:
 *
 *   const dg = start.deepgram();                       // or startDeepgramFake()
 *   dg.reply(stt.rateLimited("1"), stt.heard("hi"));   // 429 then a transcript
 *   // base_url = dg.url  (ends in /v1), api_key = dg.key
 *   await dg.waitForCalls(2);
 *
 * Unscripted, a fake "hears" the words in a recording made with
 * `speech("words", "ogg")`.
 */
import { DeepgramFake } from "./transcription/deepgram.ts";
import { OpenAiSttFake, type OpenAiSttOptions } from "./transcription/openai.ts";
import { XaiSttFake } from "./transcription/xai.ts";

export { type SttCall, type SttReply, stt } from "./transcription/base.ts";
export { OPENAI_AUDIO_MODELS } from "./transcription/openai.ts";
export { type AdtsFrameOptions, adtsFrame, boxesTile, type Container, sniff, speech, wordsOf } from "./transcription/speech.ts";
export { DeepgramFake, OpenAiSttFake, XaiSttFake };

export const startOpenAiSttFake = (options?: OpenAiSttOptions): OpenAiSttFake => new OpenAiSttFake(options);
export const startXaiSttFake = (options?: { key?: string }): XaiSttFake => new XaiSttFake(options);
export const startDeepgramFake = (options?: { key?: string }): DeepgramFake => new DeepgramFake(options);
