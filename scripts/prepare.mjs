// `prepare`: npm runs it after `npm install` and `npm ci` in this checkout, where it builds everything (the
// service, the client package, the tests' inputs), and also before `npm pack`. A pack needs only the
// service's compiled JavaScript, which the `prepack` script builds (and nothing else): the whole build
// would generate the client's types and compile the client for a tarball that holds neither.
// npm names the command it runs in npm_command.
import { spawnSync } from 'node:child_process';

if (process.env.npm_command !== 'pack') {
  const result = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (result.error) throw result.error;
  process.exit(result.status ?? 1);
}
