import type { Readable } from 'node:stream';
import { DownloadError, openDownload } from '../../net/download.ts';
import type { ProviderRequest } from '../upstream-http.ts';
import { UpstreamError } from '../engine-contract.ts';

/*
 * A Veo result is read from its file URI (`.../v1beta/files/{id}:download?alt=media`) with the
 * key, and Google answers that with a redirect to where the bytes are: Google's REST samples
 * download it with `curl -L` ("follow redirects"; ai.google.dev/gemini-api/docs/video and
 * google-gemini/cookbook quickstarts/Get_started_Veo_REST.ipynb, `curl --location`), and
 * BerriAI/litellm#13686 saw the 302. The key goes only to the API's own origin; a redirect
 * elsewhere (a signed storage link) is read without it, through the SSRF-safe downloader.
 */

/** Redirects followed in all, on the API's origin and after it. */
export const MAX_VIDEO_HOPS = 5;

export interface VideoFileRead {
  call: ProviderRequest;
  /** The API's origin: the only one the key is sent to. */
  apiOrigin: string;
  maxBytes: number;
  allowPrivate: boolean;
  timeoutMs: number;
}

/** The video as it arrives: its stream fails with a DownloadError when cut (the generation asks Google again). */
export async function openVideoFile(uri: string, r: VideoFileRead, signal: AbortSignal): Promise<Readable> {
  let url = new URL(uri);
  for (let hops = 0; ; hops++) {
    // Anything not on the API's origin is read like a public link, without the key.
    if (url.origin !== r.apiOrigin) {
      return (await openDownload(url.href, { maxBytes: r.maxBytes, allowPrivate: r.allowPrivate, timeoutMs: r.timeoutMs, maxRedirects: MAX_VIDEO_HOPS - hops })).body;
    }
    if (hops >= MAX_VIDEO_HOPS) throw new DownloadError('too_many_redirects', `the Gemini video file redirects more than ${MAX_VIDEO_HOPS} times`);
    const answer = await withKey(r, url.href, signal);
    if (answer.redirect === undefined) return answer.body!;
    url = new URL(answer.redirect, url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DownloadError('invalid_url', 'the Gemini video file redirects to a link that is not http(s)');
  }
}

/**
 * A read with the key. A passing failure (5xx, 429, a cut answer) is a failed download, not the
 * provider's refusal: the generation asks Google again for the link rather than failing a video
 * that was already made and billed.
 */
async function withKey(r: VideoFileRead, url: string, signal: AbortSignal) {
  try {
    return await r.call('GET', url, undefined, signal, { binary: true, stream: true, handBackRedirect: true });
  } catch (e) {
    if (e instanceof UpstreamError && (e.failure === 'transient' || e.failure === 'rate_limited')) throw new DownloadError('network', e.message);
    throw e;
  }
}
