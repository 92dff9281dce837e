import { pathToFileURL } from 'node:url';
import { installedPackage } from '../version.js';

/**
 * Why a reload cannot run the release installed now, or undefined when it can. A reload forks a worker
 * from the code on disk, which must speak the supervisor's protocol (say when it is ready, hand over when
 * told): 1.0.0 does not, so a rollback to it in place (the same install, the release before) would serve
 * beside the workers it was to replace until RELOAD_TIMEOUT_MS, then be killed under its clients. Releases
 * that speak it say so in their package.json (`"plantStore": { "reloadable": true }`). A package.json that
 * cannot be read is left to the fork, whose failure the reload reports.
 */
export function reloadRefusal(entry: string | undefined = process.argv[1]): string | undefined {
  if (entry === undefined) return undefined;
  const installed = installedPackage(new URL('./', pathToFileURL(entry)));
  if (installed === undefined || installed.plantStore?.reloadable === true) return undefined;
  return (
    `reload refused: the release installed now (version ${installed.version}) cannot be reloaded into, as it does ` +
    `not take part in reloads; restart the service to run it (systemctl restart plant-store): the workers serving keep serving`
  );
}
