/*
 * The only place the `espeak-ng` npm package (eSpeak NG compiled to WASM, GPL-3.0-or-later) is
 * loaded. This script always runs as its own Node process, started by espeak.ts: the process
 * boundary keeps the GPL synthesizer apart from the (Apache-2.0) server, which never imports it.
 *
 * Protocol: stdin is one JSON request { text, voice, pitch, wpm }; on success the WAV
 * (16-bit mono, 22050 Hz) is written to stdout and the exit code is 0. Exit code 2 means the
 * voice does not exist; any other failure exits 1. Diagnostics go to stderr.
 */
import ESpeakNG from 'espeak-ng';

interface Request {
  text: string;
  voice: string;
  pitch: number;
  wpm: number;
}

const UNKNOWN_VOICE = 2;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<number> {
  const req = JSON.parse(await readStdin()) as Request;
  const errors: string[] = [];
  // The text goes in as a file in the module's memory filesystem, not as an argument: text that
  // starts with "-" would otherwise be read as an option. -b 1: the file is UTF-8.
  const espeak = await ESpeakNG({
    arguments: ['-b', '1', '-v', req.voice, '-p', String(req.pitch), '-s', String(req.wpm), '-w', '/out.wav', '-f', '/in.txt'],
    preRun: [(m) => m.FS.writeFile('/in.txt', req.text)],
    print: () => {},
    printErr: (line) => errors.push(line),
  });
  // main() has returned by now. The emscripten build does not report its exit status to us, so a
  // failure shows as a missing output file plus espeak's own message.
  if (errors.some((line) => line.includes('voice does not exist'))) {
    process.stderr.write(`unknown voice ${req.voice}\n`);
    return UNKNOWN_VOICE;
  }
  if (!espeak.FS.analyzePath('/out.wav').exists) {
    process.stderr.write(`espeak-ng wrote no audio: ${errors.join(' | ').slice(0, 500)}\n`);
    return 1;
  }
  const wav = espeak.FS.readFile('/out.wav');
  await new Promise<void>((resolve, reject) => process.stdout.write(wav, (err) => (err ? reject(err) : resolve())));
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`espeak-child failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
