import sharp from 'sharp';
import type { PlatformAvatarSeed } from '../../domain/catalogue/platform-avatars.ts';

/** A flat illustrated head-and-shoulders portrait, enough for a catalogue thumbnail and the local engine. */
export function portraitSvg(look: PlatformAvatarSeed['look'], size = 512): string {
  const hairBack = look.longHair
    ? `<path d="M150 210 Q150 90 256 90 Q362 90 362 210 L372 380 Q256 410 140 380 Z" fill="${look.hair}"/>`
    : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 512 512">
  <rect width="512" height="512" fill="${look.backdrop}"/>
  ${hairBack}
  <path d="M96 512 Q96 380 256 370 Q416 380 416 512 Z" fill="${look.outfit}"/>
  <rect x="226" y="300" width="60" height="80" rx="20" fill="${look.skin}"/>
  <ellipse cx="256" cy="220" rx="92" ry="110" fill="${look.skin}"/>
  <path d="M164 200 Q168 110 256 108 Q344 110 348 200 Q320 150 256 150 Q192 150 164 200 Z" fill="${look.hair}"/>
  <ellipse cx="222" cy="225" rx="9" ry="11" fill="#1f1f1f"/>
  <ellipse cx="290" cy="225" rx="9" ry="11" fill="#1f1f1f"/>
  <path d="M226 282 Q256 302 286 282" stroke="#7a3b2e" stroke-width="7" fill="none" stroke-linecap="round"/>
</svg>`;
}

export function renderPortraitPng(look: PlatformAvatarSeed['look'], size = 512): Promise<Buffer> {
  return sharp(Buffer.from(portraitSvg(look, size))).png().toBuffer();
}
