/** An output played inline from its signed link: a video plays, an image shows, audio plays. */
export function Media({ url, label }: { url: string; label: string }) {
  const path = new URL(url, location.href).pathname.toLowerCase();
  if (/\.(mp4|webm|mov)$/.test(path)) return <video src={url} controls muted playsInline preload="metadata" aria-label={label} />;
  if (/\.(mp3|wav|m4a|ogg)$/.test(path)) return <audio src={url} controls preload="none" aria-label={label} />;
  return <img src={url} alt={label} loading="lazy" />;
}
