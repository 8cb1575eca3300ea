#!/usr/bin/env node
// The package's command. The TypeScript is compiled to dist/ by `npm ci` (the prepare script).
import('../dist/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    process.stderr.write('assistant-bridge is not built yet: run `npm run build` first.\n');
    process.exit(1);
  }
  throw err;
});
