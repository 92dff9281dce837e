// `prepare`: npm runs it after `npm install` and `npm ci` in this checkout, where it builds everything (the
// service, the client package, the console, the tests' inputs), and also before `npm pack`. A pack needs
// the service's compiled JavaScript and the built console (which bundles the client), which the `prepack`
// script builds: the tests' inputs are not for a tarball.
// npm names the command it runs in npm_command.
import { spawnSync } from 'node:child_process';

if (process.env.npm_command !== 'pack') {
  const result = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (result.error) throw result.error;
  process.exit(result.status ?? 1);
}
