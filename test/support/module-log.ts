// Loaded with `node --import`: when the process exits, writes every module it loaded (one URL a
// line) to the file $ADFORGE_MODULE_LOG names. Tests read it to see what a command's start costs.
import fs from 'node:fs';
import module from 'node:module';

const loaded: string[] = [];
module.registerHooks({
  load(url, context, next) {
    loaded.push(url);
    return next(url, context);
  },
});
process.on('exit', () => fs.writeFileSync(process.env.ADFORGE_MODULE_LOG!, `${loaded.join('\n')}\n`));
