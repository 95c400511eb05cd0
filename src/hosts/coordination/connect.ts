/**
 * `--coordination URL` / FILESHED_COORDINATION: connects to the coordination service and routes
 * every lock of the storage base through it (the plugin's serving.useCoordination). Refuses to
 * start when the service does not answer: instances that silently fell back to lock files would
 * not exclude the instances that use the service.
 */
import { serving } from '../../index.js';
import { RedisCoordinator } from './redis.js';
import { redact } from './resp.js';

export async function connectCoordination(url: string, base: string): Promise<RedisCoordinator> {
  const coordinator = new RedisCoordinator(url);
  try {
    await coordinator.ping();
  } catch (err) {
    coordinator.close();
    throw new Error(`the coordination service ${redact(url)} does not answer (${(err as Error).message}); start it, or run without --coordination on a single host`);
  }
  serving.useCoordination(coordinator, base);
  return coordinator;
}
