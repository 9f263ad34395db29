import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

const CHUNK = randomBytes(1024 * 1024);

/**
 * `size` bytes that sniff as an MP4 (an `ftyp` box, then one `mdat` box holding the rest), made
 * as they are read from one reused random megabyte: a result or an upload of any size with
 * nothing of that size held on the sending side. Not playable media: ffprobe finds no `moov`.
 */
export function generatedMp4(size: number): Readable {
  const box = (length: number, type: string) => {
    const b = Buffer.alloc(8);
    b.writeUInt32BE(length, 0);
    b.write(type, 4, 'latin1');
    return b;
  };
  // ftyp: major brand isom, minor version 0x200, compatible isom and iso2 (24 bytes).
  const ftypBox = Buffer.concat([box(24, 'ftyp'), Buffer.from('isom'), Buffer.from('00000200', 'hex'), Buffer.from('isomiso2')]);
  if (size - ftypBox.length > 0xffffffff || size < ftypBox.length + 8) throw new Error(`generatedMp4: ${size} bytes is outside what one 32-bit mdat box holds`);
  const head = Buffer.concat([ftypBox, box(size - ftypBox.length, 'mdat')]);
  let sent = 0;
  return new Readable({
    highWaterMark: 1024 * 1024,
    read() {
      if (sent === 0) {
        sent = head.length;
        this.push(head);
        return;
      }
      const n = Math.min(CHUNK.length, size - sent);
      if (n <= 0) return void this.push(null);
      sent += n;
      this.push(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n));
    },
  });
}
