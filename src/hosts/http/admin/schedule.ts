/**
 * Scheduled maintenance of the whole storage (valve `maintenance_interval_hours`, 0 = off): a run
 * is due one interval after the last run (by any instance on this storage base, by the schedule or
 * an admin's "run now"), or one interval after this server started when none is recorded. The last
 * run's time is kept in the storage base (`.fileshed-maintenance.json`), so a restart does not
 * bring the next run forward and instances sharing the base do not each run it. A timer (unref'd:
 * it never keeps the process alive) looks once a minute whether a run is due. Runs never overlap:
 * a run asked for while one is going reports that instead. The interval is read from the valves at
 * each look, so a saved change applies without restart.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { plural, serving, type StorageMaintenance } from '../../../index.js';
import type { ServerContext } from '../route.js';

export interface MaintenanceRun {
  at: string;
  trigger: 'schedule' | 'admin';
  report?: StorageMaintenance;
  error?: string;
}

export interface ScheduleTimes {
  /** How often the timer looks whether a run is due. */
  tickMs: number;
}

const RECORD = '.fileshed-maintenance.json';

export class MaintenanceSchedule {
  /** This process's last run, with its report (the page shows it). */
  last: MaintenanceRun | undefined;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();

  constructor(
    private readonly ctx: ServerContext,
    private readonly maintainAll: (valves: Record<string, unknown>) => Promise<StorageMaintenance>,
    private readonly times: ScheduleTimes = { tickMs: 60_000 },
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

  /** The last run on this storage base, by any instance (undefined when none is recorded). */
  lastRun(): Pick<MaintenanceRun, 'at' | 'trigger'> | undefined {
    try {
      const r = JSON.parse(serving.readText(this.recordFile())) as Partial<MaintenanceRun>;
      if (typeof r.at === 'string' && !Number.isNaN(Date.parse(r.at)) && (r.trigger === 'schedule' || r.trigger === 'admin')) return { at: r.at, trigger: r.trigger };
    } catch {
      // none yet, or unreadable: this process's own record (if any) stands
    }
    return this.last;
  }

  /** When the next scheduled run is due (ms since epoch), or undefined when the schedule is off. */
  nextAt(): number | undefined {
    const h = this.intervalHours();
    if (h === 0) return undefined;
    const last = this.lastRun();
    return (last !== undefined ? Date.parse(last.at) : this.startedAt) + h * 3600_000;
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
      const r = this.last.report!;
      if (trigger === 'schedule') this.ctx.log.info(`scheduled maintenance: ${plural(r.users, 'user')}, ${plural(r.groups, 'group')}, ${plural(r.total, 'item')} cleaned in ${r.ms} ms`);
    } catch (err) {
      this.last = { at, trigger, error: (err as Error).message };
      this.ctx.log.info(`maintenance failed: ${(err as Error).message}`);
    } finally {
      this.running = false;
    }
    this.record({ at, trigger });
    return this.last;
  }

  private recordFile(): string {
    return path.join(this.ctx.storageBase, RECORD);
  }

  /** temp + rename: another instance reads the old or the new time, never half of it. */
  private record(run: Pick<MaintenanceRun, 'at' | 'trigger'>): void {
    const file = this.recordFile();
    const tmp = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
    try {
      serving.writeBytes(tmp, JSON.stringify(run), { mode: 0o600, exclusive: true });
      fs.renameSync(tmp, file);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      this.ctx.log.info(`maintenance: the time of this run could not be recorded in the storage base (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): other instances do not see it`);
    }
  }
}
