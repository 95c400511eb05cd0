/**
 * Scheduled maintenance of the whole storage (valve `maintenance_interval_hours`, 0 = off): a
 * timer (unref'd: it never keeps the process alive) checks once a minute whether a run is due;
 * the first run comes shortly after start, then one per interval. Runs never overlap: a run
 * asked for while one is going (by the timer or "run now") reports that instead.
 * The interval is read from the valves at each check, so a saved change applies without restart.
 */
import type { StorageMaintenance } from '../../../index.js';
import type { ServerContext } from '../route.js';

export interface MaintenanceRun {
  at: string;
  trigger: 'schedule' | 'admin';
  report?: StorageMaintenance;
  error?: string;
}

export interface ScheduleTimes {
  /** Delay of the first scheduled run after start. */
  firstDelayMs: number;
  /** How often the timer looks whether a run is due. */
  tickMs: number;
}

export class MaintenanceSchedule {
  last: MaintenanceRun | undefined;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();

  constructor(
    private readonly ctx: ServerContext,
    private readonly maintainAll: (valves: Record<string, unknown>) => Promise<StorageMaintenance>,
    private readonly times: ScheduleTimes = { firstDelayMs: 5 * 60_000, tickMs: 60_000 },
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      const due = this.nextAt();
      if (due !== undefined && due <= Date.now()) void this.run('schedule');
    }, this.times.tickMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  intervalHours(): number {
    const h = Number(this.ctx.valves().maintenance_interval_hours ?? 24);
    return Number.isFinite(h) && h > 0 ? h : 0;
  }

  /** When the next scheduled run is due (ms since epoch), or undefined when the schedule is off. */
  nextAt(): number | undefined {
    const h = this.intervalHours();
    if (h === 0) return undefined;
    const lastScheduled = this.last ? Date.parse(this.last.at) : undefined;
    return lastScheduled !== undefined ? lastScheduled + h * 3600_000 : this.startedAt + this.times.firstDelayMs;
  }

  isRunning(): boolean {
    return this.running;
  }

  /** One run now; undefined when another run is in progress. */
  async run(trigger: MaintenanceRun['trigger']): Promise<MaintenanceRun | undefined> {
    if (this.running) return undefined;
    this.running = true;
    const at = new Date().toISOString();
    try {
      this.last = { at, trigger, report: await this.maintainAll(this.ctx.valves()) };
      if (trigger === 'schedule') this.ctx.log.info(`scheduled maintenance: ${this.last.report!.users} users, ${this.last.report!.groups} groups, ${this.last.report!.total} items cleaned in ${this.last.report!.ms} ms`);
    } catch (err) {
      this.last = { at, trigger, error: (err as Error).message };
      this.ctx.log.info(`maintenance failed: ${(err as Error).message}`);
    } finally {
      this.running = false;
    }
    return this.last;
  }
}
