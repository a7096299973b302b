// Copies non-TypeScript assets (Lua scripts, SQL migrations) next to the compiled code.
import { chmodSync, cpSync, existsSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import { join, dirname, extname } from 'node:path';

const ASSET_EXTENSIONS = new Set(['.lua', '.sql']);

function copyAssets(from, to) {
  for (const name of readdirSync(from)) {
    const source = join(from, name);
    const target = join(to, name);
    if (statSync(source).isDirectory()) copyAssets(source, target);
    else if (ASSET_EXTENSIONS.has(extname(name))) {
      mkdirSync(dirname(target), { recursive: true });
      cpSync(source, target);
    }
  }
}

if (existsSync('src')) copyAssets('src', 'dist');

// The CLI runs as a program (`./dist/cli/main.js`, and through `npm link`'s `taskline`).
if (existsSync('dist/cli/main.js')) chmodSync('dist/cli/main.js', 0o755);
