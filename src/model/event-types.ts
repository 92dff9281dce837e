/**
 * The event types: what webhooks announce and the change feed lists, every change to a plant. The one list:
 * the service's schemas, the CLI and (copied into `@plant-store/client` by scripts/client-sources.mjs) the
 * client package and the web console take it from here, so this file imports nothing.
 */
export const EVENT_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
