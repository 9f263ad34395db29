import { describe, it, expect } from 'vitest';
import { crc32, deflateSync } from 'node:zlib';
import { sniffImage } from '../../src/adapters/media/sniff.ts';

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** A complete, decodable 1x1 RGBA PNG. */
function tinyPng(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0); // width
  ihdr.writeUInt32BE(1, 4); // height
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type RGBA
  const scanline = Buffer.from([0, 255, 0, 0, 255]); // filter byte + one red pixel
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(scanline)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** SOI + JFIF APP0 segment + EOI. */
const tinyJpeg = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
  0x00, 0xff, 0xd9,
]);

/** A 1x1 GIF89a: header, screen descriptor, 2-colour table, image descriptor, LZW data, trailer. */
const tinyGif = Buffer.concat([
  Buffer.from('GIF89a', 'latin1'),
  Buffer.from([0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00]),
  Buffer.from([0xff, 0xff, 0xff, 0x00, 0x00, 0x00]),
  Buffer.from([0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
  Buffer.from([0x02, 0x02, 0x44, 0x01, 0x00]),
  Buffer.from([0x3b]),
]);

/** A 1x1 lossless WebP (RIFF container with a VP8L chunk). */
const tinyWebp = Buffer.from([
  0x52, 0x49, 0x46, 0x46, 0x1a, 0x00, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x4c, 0x0d, 0x00, 0x00,
  0x00, 0x2f, 0x00, 0x00, 0x00, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07, 0x00,
]);

function isoFtyp(brand: string): Buffer {
  const box = Buffer.alloc(24);
  box.writeUInt32BE(24, 0);
  box.write('ftyp', 4, 'latin1');
  box.write(brand, 8, 'latin1');
  box.write('mif1', 16, 'latin1');
  box.write('miaf', 20, 'latin1');
  return box;
}

describe('sniffImage', () => {
  it.each([
    ['PNG', tinyPng(), 'image/png', 'png'],
    ['JPEG', tinyJpeg, 'image/jpeg', 'jpg'],
    ['GIF', tinyGif, 'image/gif', 'gif'],
    ['WebP', tinyWebp, 'image/webp', 'webp'],
    ['AVIF', isoFtyp('avif'), 'image/avif', 'avif'],
  ])('accepts %s', async (_name, bytes, mime, ext) => {
    expect(await sniffImage(bytes)).toEqual({ mime, ext });
  });

  it('refuses a text file whatever it is called', async () => {
    // What a user would upload as "logo.png": only the bytes reach the sniffer.
    expect(await sniffImage(Buffer.from('this is not an image, despite the .png name\n'))).toBeNull();
  });

  it.each([
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1"/></svg>')],
    ['PDF', Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n')],
    ['HTML', Buffer.from('<!doctype html><html><body>hi</body></html>')],
    ['BMP', Buffer.concat([Buffer.from('BM', 'latin1'), Buffer.alloc(60)])],
    ['TIFF', Buffer.concat([Buffer.from([0x49, 0x49, 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00]), Buffer.alloc(16)])],
    ['HEIC', isoFtyp('heic')],
    ['ZIP', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(40)])],
    ['empty input', Buffer.alloc(0)],
    ['a truncated PNG signature', tinyPng().subarray(0, 4)],
  ])('refuses %s', async (_name, bytes) => {
    expect(await sniffImage(bytes)).toBeNull();
  });
});
