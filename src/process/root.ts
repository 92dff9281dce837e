/**
 * A server started as root: anything that went wrong in it (a flaw of its own or of a dependency) could
 * then do anything on the machine, and the files it makes (the store, backups) belong to root. It still
 * starts (a container may run everything as root, and know why), but says so once, at start.
 */

/** The warning for a process of effective user id `euid` (undefined where there are none: Windows), or undefined. */
export function rootWarning(euid: number | undefined): string | undefined {
  if (euid !== 0) return undefined;
  return (
    'running as root: a flaw in this service or in one of its dependencies would hand over the whole machine, ' +
    'and the files it makes belong to root; run it as a user of its own, as the systemd unit in docs/production.md does (User=plant-store)'
  );
}
