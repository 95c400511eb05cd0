/** Maintenance: the schedule (interval, last and next run) and "run now" with its report. */
import { plural } from '../../../index.js';
import { csrfField, esc, timeText } from './page.js';
import type { MaintenanceRun, MaintenanceSchedule } from './schedule.js';

export function maintenancePage(schedule: MaintenanceSchedule, csrf: string, uploadsRetentionDays: unknown, justRan?: MaintenanceRun): string {
  const h = schedule.intervalHours();
  const next = schedule.nextAt();
  const last = justRan ?? schedule.lastRun();
  const info = `<div class="grid"><div class="card"><strong>Schedule</strong><p>${h === 0 ? 'off (valve maintenance_interval_hours = 0)' : `every ${h} h after the last run`}</p><p class="muted">Next run: ${next === undefined ? '—' : timeText(new Date(next).toISOString())}${schedule.isRunning() ? ' (running now)' : ''}</p></div>
<div class="card"><strong>Uploads retention</strong><p>${Number(uploadsRetentionDays) > 0 ? `${esc(uploadsRetentionDays)} days` : 'keep forever'}</p><p class="muted">Conversation upload folders untouched for longer are removed.</p></div>
<div class="card"><strong>Last run</strong><p>${last ? `${timeText(last.at)} (${esc(last.trigger)})` : 'not yet'}</p></div></div>`;
  const run = `<form method="post" action="/admin/maintenance">${csrfField(csrf)}<p><button type="submit" class="primary">Run now for all users</button> <span class="muted">Stale locks and working copies, temp files of interrupted writes, expired uploads.</span></p></form>`;
  const shown = justRan ?? schedule.last;
  return `${info}${run}${shown ? report(shown) : ''}`;
}

function report(run: MaintenanceRun): string {
  if (run.error) return `<p class="notice error">The run failed: ${esc(run.error)}</p>`;
  const r = run.report!;
  const items = Object.entries(r.cleaned)
    .map(([scope, rep]) => {
      const parts = Object.entries(rep)
        .filter(([, v]) => (Array.isArray(v) ? v.length > 0 : typeof v === 'number' && v > 0))
        .map(([k, v]) => `<li><strong>${esc(k)}</strong>: ${Array.isArray(v) ? v.map((x) => `<code>${esc(typeof x === 'string' ? x : JSON.stringify(x))}</code>`).join(', ') : esc(v)}</li>`)
        .join('');
      return `<li><strong>${esc(scope)}</strong><ul>${parts}</ul></li>`;
    })
    .join('');
  return `<h2>Report</h2><p id="maintenance-summary">${plural(r.users, 'user')} and ${plural(r.groups, 'group')} checked; ${plural(r.total, 'item')} cleaned in ${r.ms} ms.</p>${items ? `<ul class="report">${items}</ul>` : '<p class="muted">Nothing to clean.</p>'}`;
}
