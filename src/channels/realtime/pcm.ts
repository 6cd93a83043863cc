/**
 * The audio a voice session carries, and the WAV files `fermix talk` reads
 * and writes: 16-bit signed little-endian PCM, mono, at 24 kHz both ways
 * (what the provider's realtime API takes and gives, so nothing is
 * converted on the way). A recording at another rate or with more channels
 * is mixed down and resampled once, when it is read.
 *
 * WAV here is the plain RIFF layout (a `fmt ` chunk of PCM, a `data`
 * chunk); a `data` size larger than the file (what a program streaming its
 * WAV to stdout writes, not knowing the length yet) means "to the end".
 * Linear interpolation resamples: enough for speech going to a model.
 */

/** The one audio format of the companion protocol and the upstream session. */
export const SAMPLE_RATE = 24_000;
export const BYTES_PER_SAMPLE = 2;

/** PCM16 mono at SAMPLE_RATE: how many milliseconds `bytes` of it last. */
export function pcmMs(bytes: number): number {
  return Math.floor((bytes / BYTES_PER_SAMPLE / SAMPLE_RATE) * 1000);
}

/** PCM16 samples from little-endian bytes (an odd trailing byte is dropped). */
export function samplesOf(bytes: Uint8Array): Int16Array {
  const count = Math.floor(bytes.byteLength / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  const out = new Int16Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** Little-endian bytes of PCM16 samples. */
export function bytesOf(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i]!, true);
  return out;
}

/** `samples` at `fromRate` as samples at `toRate`, by linear interpolation. */
export function resample(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate || samples.length === 0) return samples.slice();
  const length = Math.max(1, Math.round((samples.length * toRate) / fromRate));
  const out = new Int16Array(length);
  const step = fromRate / toRate;
  for (let i = 0; i < length; i++) {
    const at = i * step;
    const left = Math.min(Math.floor(at), samples.length - 1);
    const right = Math.min(left + 1, samples.length - 1);
    const frac = at - left;
    out[i] = Math.round(samples[left]! * (1 - frac) + samples[right]! * frac);
  }
  return out;
}

/** The root-mean-square level of PCM16 samples, 0 (silence) to 1 (full scale). */
export function level(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length) / 32768;
}

export class WavError extends Error {
  override name = "WavError";
}

/** What a WAV file holds, as read. */
export interface Wav {
  rate: number;
  channels: number;
  /** Interleaved PCM16 samples. */
  samples: Int16Array;
}

const ascii = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));

/** Read a PCM16 WAV file; anything else (another encoding, another sample size) is a WavError saying what it is. */
export function readWav(bytes: Uint8Array): Wav {
  if (bytes.byteLength < 12 || ascii(bytes, 0) !== "RIFF" || ascii(bytes, 8) !== "WAVE") throw new WavError("not a WAV file (no RIFF/WAVE header)");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let format: { rate: number; channels: number } | undefined;
  let at = 12;
  while (at + 8 <= bytes.byteLength) {
    const id = ascii(bytes, at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === "fmt ") {
      if (size < 16 || body + 16 > bytes.byteLength) throw new WavError("the WAV file's format chunk is cut short");
      const encoding = view.getUint16(body, true);
      const channels = view.getUint16(body + 2, true);
      const rate = view.getUint32(body + 4, true);
      const bits = view.getUint16(body + 14, true);
      // 1 is PCM; 0xFFFE (extensible) carries its real encoding further on, PCM's GUID starting with 1.
      const pcm = encoding === 1 || (encoding === 0xfffe && size >= 26 && view.getUint16(body + 24, true) === 1);
      if (!pcm || bits !== 16) throw new WavError(`the WAV file holds ${pcm ? `${bits}-bit` : "compressed or floating-point"} audio; 16-bit PCM is needed`);
      if (channels < 1 || rate < 1000) throw new WavError("the WAV file's format chunk is not valid");
      format = { rate, channels };
    } else if (id === "data") {
      if (!format) throw new WavError("the WAV file's data comes before its format chunk");
      const end = Math.min(bytes.byteLength, body + size);
      return { ...format, samples: samplesOf(bytes.subarray(body, end)) };
    }
    at = body + size + (size % 2);
  }
  throw new WavError("the WAV file has no audio data");
}

/** A WAV file as PCM16 mono at SAMPLE_RATE: channels mixed down, resampled. */
export function wavToPcm(bytes: Uint8Array): Uint8Array {
  const wav = readWav(bytes);
  let mono = wav.samples;
  if (wav.channels > 1) {
    mono = new Int16Array(Math.floor(wav.samples.length / wav.channels));
    for (let i = 0; i < mono.length; i++) {
      let sum = 0;
      for (let c = 0; c < wav.channels; c++) sum += wav.samples[i * wav.channels + c]!;
      mono[i] = Math.round(sum / wav.channels);
    }
  }
  return bytesOf(resample(mono, wav.rate, SAMPLE_RATE));
}

/** A WAV file of PCM16 mono bytes at `rate` (default SAMPLE_RATE). */
export function pcmToWav(pcm: Uint8Array, rate = SAMPLE_RATE): Uint8Array {
  const data = pcm.subarray(0, pcm.byteLength - (pcm.byteLength % 2));
  const out = new Uint8Array(44 + data.byteLength);
  const view = new DataView(out.buffer);
  const text = (at: number, value: string) => {
    for (let i = 0; i < 4; i++) out[at + i] = value.charCodeAt(i);
  };
  text(0, "RIFF");
  view.setUint32(4, 36 + data.byteLength, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * BYTES_PER_SAMPLE, true);
  view.setUint16(32, BYTES_PER_SAMPLE, true);
  view.setUint16(34, 16, true);
  text(36, "data");
  view.setUint32(40, data.byteLength, true);
  out.set(data, 44);
  return out;
}
