// Types for the parts of the `espeak-ng` package (eSpeak NG compiled to WASM, GPL-3.0-or-later)
// that espeak-child.ts uses. Type declarations only: no GPL code is linked by this file.
declare module 'espeak-ng' {
  interface ESpeakFS {
    writeFile(path: string, data: string | Uint8Array): void;
    readFile(path: string): Uint8Array;
    analyzePath(path: string): { exists: boolean };
  }
  interface ESpeakModule {
    FS: ESpeakFS;
  }
  interface ESpeakOptions {
    /** The espeak-ng command line; main() runs as soon as the module is ready. */
    arguments: string[];
    preRun?: Array<(module: ESpeakModule) => void>;
    print?: (line: string) => void;
    printErr?: (line: string) => void;
  }
  export default function ESpeakNG(options: ESpeakOptions): Promise<ESpeakModule>;
}
