import fs from 'node:fs/promises';

export interface Runner {
  uid: number;
  gid: number;
}

/** Whether `who` may run a file of this mode and owner: the owner's, group's or others' bit (root: any). */
export function executableBy(stat: { mode: number; uid: number; gid: number }, who: Runner): boolean {
  if ((stat.mode & 0o170000) !== 0o100000) return false;
  if (who.uid === 0) return (stat.mode & 0o111) !== 0;
  if (stat.uid === who.uid) return (stat.mode & 0o100) !== 0;
  if (stat.gid === who.gid) return (stat.mode & 0o010) !== 0;
  return (stat.mode & 0o001) !== 0;
}

/**
 * Why `file` cannot be run by this process (or by `who`, a user it runs the file as), or undefined
 * when it can. `label` names the file in the answer, e.g. "ffprobe /x/ffprobe (FFPROBE_PATH)".
 * A package whose install step did not run leaves its binary without the execute bit, or with
 * its owner's alone (`chmod u+x` as root), which no other user may run.
 */
export async function cannotRun(file: string, label: string, who?: Runner): Promise<string | undefined> {
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${label} does not exist` : `${label} cannot be read (${code ?? (e as Error).message})`;
  }
  if (!stat.isFile()) return `${label} is not a file`;
  const runs = who ? executableBy(stat, who) : await fs.access(file, fs.constants.X_OK).then(() => true, () => false);
  if (runs) return undefined;
  const user = who ? `the user it runs as (uid ${who.uid})` : `this user (uid ${process.getuid?.() ?? '?'})`;
  const mode = (stat.mode & 0o7777).toString(8).padStart(4, '0');
  return `${label} is not executable by ${user}: mode ${mode}, owner uid ${stat.uid}; make it executable with \`chmod a+x ${file}\``;
}
