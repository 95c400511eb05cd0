/**
 * Everything the chat platform provides reaches the core through this one interface (SPEC
 * section 2). The standalone implementation needs no platform at all; later issues add group
 * membership, download-link storage and attached files.
 */
export interface StatusEvent {
  type: 'status';
  data: { description: string; done: boolean };
}

export type EventEmitter = (event: StatusEvent) => Promise<void> | void;

export interface HostBridge {
  /** Name reported by shed_parameters. */
  readonly name: string;
}

export const standaloneHost: HostBridge = { name: 'standalone' };
