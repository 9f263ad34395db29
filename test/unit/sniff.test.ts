import { describe, it, expect } from 'vitest';
import { crc32, deflateSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { sniffImage, sniffMedia, sniffMediaStream } from '../../src/adapters/media/sniff.ts';

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

function isoBrand(brand: string): Buffer {
  return Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from(`ftyp${brand}`, 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from(`${brand}isom`, 'latin1')]);
}

/** An EBML header naming its DocType (webm or matroska), then nothing. */
function ebml(docType: string): Buffer {
  const body = Buffer.concat([
    Buffer.from([0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81, 0x01, 0x42, 0xf2, 0x81, 0x04, 0x42, 0xf3, 0x81, 0x08]),
    Buffer.from([0x42, 0x82, 0x80 | docType.length]),
    Buffer.from(docType, 'latin1'),
    Buffer.from([0x42, 0x87, 0x81, 0x04, 0x42, 0x85, 0x81, 0x02]),
  ]);
  return Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x80 | body.length]), body]);
}

function wav(): Buffer {
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0); // PCM
  fmt.writeUInt16LE(1, 2); // mono
  fmt.writeUInt32LE(8000, 4);
  fmt.writeUInt32LE(16000, 8);
  fmt.writeUInt16LE(2, 12);
  fmt.writeUInt16LE(16, 14);
  const data = Buffer.alloc(16);
  const chunks = Buffer.concat([Buffer.from('WAVEfmt ', 'latin1'), Buffer.from([16, 0, 0, 0]), fmt, Buffer.from('data', 'latin1'), Buffer.from([16, 0, 0, 0]), data]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(chunks.length);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), size, chunks]);
}

const id3Mp3 = Buffer.concat([Buffer.from('ID3', 'latin1'), Buffer.from([4, 0, 0, 0, 0, 0, 0]), Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(64)]);
const flac = Buffer.concat([Buffer.from('fLaC', 'latin1'), Buffer.from([0x80, 0, 0, 0x22]), Buffer.alloc(34)]);
const hlsPlaylist = Buffer.from('#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nhttp://10.0.0.1/internal.ts\n#EXT-X-ENDLIST\n');
/** Start of a raw H.264 stream: an access unit delimiter and a sequence parameter set. */
const rawH264 = Buffer.from([0, 0, 0, 1, 0x09, 0xf0, 0, 0, 0, 1, 0x67, 0x64, 0, 0x0a, 0xac, 0xd9, 0x41, 0x41, 0xfb, 0x01, 0x10, 0, 0, 3, 0, 0x10, 0, 0, 3, 0x03, 0x20]);
const mpegTs = Buffer.concat(Array.from({ length: 4 }, () => Buffer.concat([Buffer.from([0x47, 0x40, 0x00, 0x10]), Buffer.alloc(184, 0xff)])));

describe('sniffMedia', () => {
  it.each([
    ['MP4', isoBrand('isom'), 'video/mp4', 'mp4', 'mov'],
    ['MOV', isoBrand('qt  '), 'video/quicktime', 'mov', 'mov'],
    ['WebM', ebml('webm'), 'video/webm', 'webm', 'matroska'],
    ['Matroska', ebml('matroska'), 'video/matroska', 'mkv', 'matroska'],
  ])('takes %s as video, opened with its demuxer', async (_name, bytes, mime, ext, demuxer) => {
    expect(await sniffMedia(bytes, 'video')).toEqual({ mime, ext, demuxer });
    expect(await sniffMedia(bytes, 'audio')).toEqual({ mime, ext, demuxer }); // a video's sound track
  });

  it.each([
    ['MP3', id3Mp3, 'mp3'],
    ['WAV', wav(), 'wav'],
    ['FLAC', flac, 'flac'],
    ['M4A', isoBrand('M4A '), 'mov'],
  ])('takes %s as audio only', async (_name, bytes, demuxer) => {
    expect((await sniffMedia(bytes, 'audio'))?.demuxer).toBe(demuxer);
    expect(await sniffMedia(bytes, 'video')).toBeNull();
  });

  it.each([
    ['an HLS playlist', hlsPlaylist],
    ['an HLS playlist followed by raw H.264 (a polyglot)', Buffer.concat([hlsPlaylist, rawH264])],
    ['a raw H.264 stream', rawH264],
    ['an MPEG transport stream', mpegTs],
    ['a PNG', tinyPng()],
    ['text', Buffer.from('just some words, not media at all\n'.repeat(10))],
    ['an empty file', Buffer.alloc(0)],
  ])('refuses %s as video and as audio', async (_name, bytes) => {
    expect(await sniffMedia(bytes, 'video')).toBeNull();
    expect(await sniffMedia(bytes, 'audio')).toBeNull();
  });
});

describe('sniffMediaStream', () => {
  /** `bytes` arriving in chunks of `size`, as from a socket or a file read. */
  const chunked = (bytes: Buffer, size: number) => Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)));
  const large = Buffer.concat([isoBrand('isom'), Buffer.alloc(200_000, 7)]);

  it.each([1, 7, 4096, 65_536])('sniffs from the first bytes in chunks of %i and hands on every byte, the first ones included', async (size) => {
    const sniffed = await sniffMediaStream(chunked(large, size), 'video');
    expect(sniffed.type).toEqual({ mime: 'video/mp4', ext: 'mp4', demuxer: 'mov' });
    expect((await buffer(sniffed.stream)).equals(large)).toBe(true);
  });

  it('answers as sniffMedia does, for what it takes and what it refuses', async () => {
    for (const [bytes, kind] of [[id3Mp3, 'audio'], [id3Mp3, 'video'], [ebml('webm'), 'video'], [hlsPlaylist, 'video'], [Buffer.alloc(0), 'audio']] as const) {
      expect((await sniffMediaStream(chunked(bytes, 100), kind)).type).toEqual(await sniffMedia(bytes, kind));
    }
  });

  it('lets the source go when its stream is dropped unread (a refused container)', async () => {
    const source = chunked(Buffer.concat([hlsPlaylist, Buffer.alloc(100_000)]), 1000);
    const sniffed = await sniffMediaStream(source, 'video');
    expect(sniffed.type).toBeNull();
    sniffed.stream.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    expect(source.destroyed).toBe(true);
  });

  it('reads no more of the source than the sample until the rest is asked for', async () => {
    let pulled = 0;
    const source = Readable.from((function* () {
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield i === 0 ? isoBrand('isom') : Buffer.alloc(1000);
      }
    })());
    const sniffed = await sniffMediaStream(source, 'video');
    expect(sniffed.type?.demuxer).toBe('mov');
    expect(pulled).toBeLessThan(50);
    sniffed.stream.destroy();
  });
});
