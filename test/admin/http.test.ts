/**
 * /admin over real HTTP against `fileshed serve` (child process): who gets in (API key by header
 * or sign-in form, Open WebUI admin session; a user-role session gets 403, nobody gets the
 * sign-in page), the session cookie's attributes, CSRF and origin refusals that change nothing,
 * field errors, the version check, a config file broken by hand, audit entries, usage records,
 * and "run now" with Uploads retention.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeOpenWebUI, serve, tempBase, type FakeOpenWebUI, type Served } from '../hosts/helpers.js';
import { auditLines, configValves, cookieOf, hiddenValue, post, signIn, type AdminSession } from './admin-helpers.js';
import { putAged } from '../helpers/aged.js';
import { makeShed } from '../helpers/shed.js';
import { sandboxPage } from '../../src/hosts/http/admin/sandbox.js';
import type { ServerContext } from '../../src/hosts/http/route.js';

const KEY = 'fs_test-admin-key-0123456789';
let srv: Served;
let owui: FakeOpenWebUI;
let s: AdminSession;
const user = (id: string) => ({ Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': id });

beforeAll(async () => {
  owui = await fakeOpenWebUI();
  owui.tokens.set('tok-admin', { id: 'boss', name: 'Boss', role: 'admin' });
  owui.tokens.set('tok-user', { id: 'joe', name: 'Joe', role: 'user' });
  srv = await serve(['--auth', 'api-key,openwebui-session', '--api-key', KEY, '--openwebui-url', owui.url, '--valve', 'sandbox=validated', '--allow-unconfined']);
  s = await signIn(srv.url, KEY);
});
afterAll(async () => {
  await srv.stop();
  await owui.close();
  fs.rmSync(srv.base, { recursive: true, force: true });
});

describe('who gets in', () => {
  it('no credential: the sign-in page (401), never the settings', async () => {
    const res = await fetch(`${srv.url}/admin`);
    expect(res.status).toBe(401);
    const html = await res.text();
    expect(html).toContain('action="/admin/login"');
    expect(html).not.toContain('name="quota_per_user_mb"');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('a wrong key or token: 401 and no cookie', async () => {
    const res = await fetch(`${srv.url}/admin`, { headers: { Authorization: 'Bearer nope' } });
    expect(res.status).toBe(401);
    const form = await post(srv.url, '/admin/login', {}, { key: 'fs_wrong' });
    expect(form.status).toBe(401);
    expect(cookieOf(form)).toBeUndefined();
  });

  it('the API key as a Bearer header opens the page', async () => {
    const res = await fetch(`${srv.url}/admin`, { headers: { Authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('name="quota_per_user_mb"');
  });

  it('sign-in sets an HttpOnly, SameSite=Strict session cookie; Secure behind https', async () => {
    const plain = await post(srv.url, '/admin/login', {}, { key: KEY });
    const c = plain.headers.getSetCookie().join(';');
    expect(c).toMatch(/fileshed_admin=[\w-]{40,}/);
    expect(c).toContain('HttpOnly');
    expect(c).toContain('SameSite=Strict');
    expect(c).not.toContain('Secure');
    const https = await post(srv.url, '/admin/login', {}, { key: KEY }, { 'X-Forwarded-Proto': 'https' });
    expect(https.headers.getSetCookie().join(';')).toContain('Secure');
    expect(cookieOf(https)).not.toBe(cookieOf(plain));
  });

  it('an Open WebUI session: admin role gets in, user role gets the 403 page', async () => {
    const ok = await fetch(`${srv.url}/admin`, { headers: { Authorization: 'Bearer tok-admin' } });
    expect(ok.status).toBe(200);
    const no = await fetch(`${srv.url}/admin`, { headers: { Authorization: 'Bearer tok-user' } });
    expect(no.status).toBe(403);
    expect(await no.text()).toContain('role is &#39;user&#39;');
    const form = await post(srv.url, '/admin/login', {}, { key: 'tok-user' });
    expect(form.status).toBe(403);
    expect(cookieOf(form)).toBeUndefined();
    // A non-admin POST changes nothing either.
    const before = fs.readFileSync(path.join(srv.base, 'fileshed.json'), 'utf8');
    const write = await post(srv.url, '/admin/valves', {}, { quota_per_user_mb: '1' }, { Authorization: 'Bearer tok-user' });
    expect(write.status).toBe(403);
    expect(fs.readFileSync(path.join(srv.base, 'fileshed.json'), 'utf8')).toBe(before);
  });
});

describe('state-changing requests', () => {
  const version = async () => hiddenValue(await (await fetch(`${srv.url}/admin`, { headers: { Cookie: s.cookie } })).text(), '_version');

  it('without the CSRF token, with a wrong one, from another origin or site: 403 and nothing saved', async () => {
    const file = path.join(srv.base, 'fileshed.json');
    const before = fs.readFileSync(file, 'utf8');
    const v = await version();
    const attempts = [
      await post(srv.url, '/admin/valves', s, { _version: v, quota_per_user_mb: '7' }),
      await post(srv.url, '/admin/valves', s, { _csrf: 'x'.repeat(43), _version: v, quota_per_user_mb: '7' }),
      await post(srv.url, '/admin/valves', s, { _csrf: s.csrf, _version: v, quota_per_user_mb: '7' }, { Origin: 'http://127.0.0.1:1' }),
      await post(srv.url, '/admin/valves', s, { _csrf: s.csrf, _version: v, quota_per_user_mb: '7' }, { 'Sec-Fetch-Site': 'cross-site' }),
      await post(srv.url, '/admin/groups', s, { _csrf: s.csrf, action: 'create', group: 'evil' }, { 'Sec-Fetch-Site': 'same-site' }),
      // The CSRF token of one session does not work with another session's cookie.
      await post(srv.url, '/admin/valves', { cookie: (await signIn(srv.url, KEY)).cookie }, { _csrf: s.csrf, _version: v, quota_per_user_mb: '7' }),
    ];
    expect(attempts.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403]);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    const groups = await (await fetch(`${srv.url}/admin/groups`, { headers: { Cookie: s.cookie } })).text();
    expect(groups).not.toContain('data-group="evil"');
    const refused = auditLines(srv.base).filter((e) => e.code === 'CSRF_REFUSED');
    expect(refused.length).toBeGreaterThanOrEqual(6);
    expect(refused.every((e) => e.flagged)).toBe(true);
  });

  it('the same request with the token and this origin works (the checks are what refused it)', async () => {
    const res = await post(srv.url, '/admin/valves', s, { _csrf: s.csrf, _version: await version(), quota_per_user_mb: '7' });
    expect(res.status).toBe(303);
    expect(configValves(srv.base).quota_per_user_mb).toBe(7);
  });

  it('an invalid value: its field shows the error, nothing saved', async () => {
    const before = configValves(srv.base);
    const res = await post(srv.url, '/admin/valves', s, { _csrf: s.csrf, _version: await version(), quota_per_user_mb: '-3', network_mode: 'everything', max_output_default: '12' });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toMatch(/data-valve="quota_per_user_mb">[\s\S]*?class="error" id="err-quota_per_user_mb">[^<]*got -3/);
    expect(html).toContain('id="err-network_mode"');
    expect(html).not.toContain('id="err-max_output_default"');
    expect(configValves(srv.base)).toEqual(before);
  });

  it('a concurrent edit is detected by the version and never overwritten', async () => {
    const stale = await version();
    expect((await post(srv.url, '/admin/valves', s, { _csrf: s.csrf, _version: stale, exec_timeout_default: '41' })).status).toBe(303);
    const second = await post(srv.url, '/admin/valves', s, { _csrf: s.csrf, _version: stale, exec_timeout_default: '42' });
    expect(second.status).toBe(409);
    expect(await second.text()).toContain('changed since this form was opened');
    expect(configValves(srv.base).exec_timeout_default).toBe(41);
  });

  it('reset to default removes the valve from the file; the file stays mode 0600', async () => {
    expect((await post(srv.url, '/admin/valves', s, { _csrf: s.csrf, _version: await version(), _reset: 'exec_timeout_default' })).status).toBe(303);
    expect(configValves(srv.base)).not.toHaveProperty('exec_timeout_default');
    expect(fs.statSync(path.join(srv.base, 'fileshed.json')).mode & 0o777).toBe(0o600);
  });

  it('a config file broken by hand: calls keep the last good valves, the page says what is wrong, saving is refused', async () => {
    const file = path.join(srv.base, 'fileshed.json');
    const good = fs.readFileSync(file, 'utf8');
    const v = await version();
    fs.writeFileSync(file, good.replace('"valves"', '"valves" oops'));
    try {
      const page = await (await fetch(`${srv.url}/admin`, { headers: { Cookie: s.cookie } })).text();
      expect(page).toContain('is not valid JSON');
      expect(page).toContain('keeps running with the last valid settings');
      const call = await (await srv.post('shed_parameters', {}, user('alice'))).json();
      expect(call.success).toBe(true);
      const save = await post(srv.url, '/admin/valves', s, { _csrf: s.csrf, _version: v, quota_per_user_mb: '9' });
      expect(save.status).toBe(409);
      expect(fs.readFileSync(file, 'utf8')).toContain('oops');
    } finally {
      fs.writeFileSync(file, good);
    }
  });
});

describe('records and maintenance', () => {
  it('calls are audited by default and refresh the usage record of the caller', async () => {
    await srv.post('shed_create_file', { zone: 'storage', path: 'n.txt', content: 'x'.repeat(5000) }, user('alice'));
    const escape = await (await srv.post('shed_read', { zone: 'storage', path: '../../bob/Storage/data/x' }, user('alice'))).json();
    expect(escape.success).toBe(false);
    const audit = auditLines(srv.base);
    expect(audit.some((e) => e.user === 'alice' && e.function === 'shed_create_file' && e.code === 'OK')).toBe(true);
    expect(audit.some((e) => e.user === 'alice' && e.function === 'shed_read' && e.flagged)).toBe(true);
    const page = await (await fetch(`${srv.url}/admin/audit?user=alice&flagged=1`, { headers: { Cookie: s.cookie } })).text();
    expect(page).toContain('shed_read');
    expect(page).not.toContain('shed_create_file');
    const usage = await (await fetch(`${srv.url}/admin/usage`, { headers: { Cookie: s.cookie } })).text();
    expect(usage).toMatch(/<td>alice<\/td><td class="num">4\.\d KiB/);
  });

  it('run now: retention removes old upload folders and nothing else, and the report says so', async () => {
    const home = path.join(srv.base, 'users', 'carol');
    const put = (rel: string, days: number) => putAged(home, rel, days);
    put('Uploads/old-chat/a.csv', 40);
    put('Uploads/new-chat/b.csv', 2);
    put('Storage/data/ancient.txt', 400);
    put('Documents/data/ancient.md', 400);
    const v = hiddenValue(await (await fetch(`${srv.url}/admin`, { headers: { Cookie: s.cookie } })).text(), '_version');
    expect((await post(srv.url, '/admin/valves', s, { _csrf: s.csrf, _version: v, uploads_retention_days: '30' })).status).toBe(303);
    const res = await post(srv.url, '/admin/maintenance', s, { _csrf: s.csrf });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<code>Uploads/old-chat</code>');
    expect(html).not.toContain('new-chat');
    expect(fs.existsSync(path.join(home, 'Uploads/old-chat'))).toBe(false);
    for (const kept of ['Uploads/new-chat/b.csv', 'Storage/data/ancient.txt', 'Documents/data/ancient.md']) expect(fs.existsSync(path.join(home, kept))).toBe(true);
    const schedule = await (await fetch(`${srv.url}/admin/maintenance`, { headers: { Cookie: s.cookie } })).text();
    expect(schedule).toContain('every 24 h after the last run');
    const last = /Last run<\/strong><p><time datetime="([^"]+)" title="\1">\d{1,2} \w{3} \d{4}, \d\d:\d\d [^<]+<\/time> \(admin\)/.exec(schedule)?.[1];
    expect(last).toBeDefined();
    // The next scheduled run is one interval after that run (not minutes after the server started).
    const next = /Next run: <time datetime="([^"]+)"/.exec(schedule)?.[1];
    expect(Date.parse(next!) - Date.parse(last!)).toBe(24 * 3600_000);
  });

  it('groups: create, add and remove a member, delete', async () => {
    const g = async (form: Record<string, string>) => (await post(srv.url, '/admin/groups', s, { _csrf: s.csrf, ...form })).status;
    expect(await g({ action: 'create', group: 'team-a', name: 'Team A' })).toBe(303);
    expect(await g({ action: 'add-member', group: 'team-a', user: 'alice' })).toBe(303);
    let page = await (await fetch(`${srv.url}/admin/groups`, { headers: { Cookie: s.cookie } })).text();
    expect(page).toMatch(/data-group="team-a"[\s\S]*alice/);
    const call = await (await srv.post('shed_group_list', {}, user('alice'))).json();
    expect(JSON.stringify(call.data)).toContain('team-a');
    expect(await g({ action: 'remove-member', group: 'team-a', user: 'alice' })).toBe(303);
    expect(await g({ action: 'delete', group: 'team-a' })).toBe(303);
    page = await (await fetch(`${srv.url}/admin/groups`, { headers: { Cookie: s.cookie } })).text();
    expect(page).not.toContain('data-group="team-a"');
    expect(await g({ action: 'create', group: '../x' })).toBe(303);
    page = await (await fetch(`${srv.url}/admin/groups?error=x`, { headers: { Cookie: s.cookie } })).text();
    expect(page).not.toContain('data-group="../x"');
  });

  it('the sandbox section lists the active mode and the commands per zone', async () => {
    const page = await (await fetch(`${srv.url}/admin/sandbox`, { headers: { Cookie: s.cookie } })).text();
    expect(page).toContain('validated');
    expect(page).toMatch(/<h2>Storage<\/h2><p>\d+ available: .*<code>ls<\/code>/);
  });

  it('the sandbox section shows the Landlock ABI in force in landlock mode (the page renders what shed_allowed_commands reports)', async () => {
    const shed = makeShed({ sandbox: 'landlock' });
    const report = await shed.call('shed_allowed_commands', {});
    shed.cleanup();
    const health = { healthz: () => ({ storage: { kind: 'local', type: 'ext4', shared: false } }), readyz: () => ({ ready: true }) };
    const ctx = { api: { call: async () => JSON.stringify(report) }, valves: () => ({}), health, settings: {} } as unknown as ServerContext;
    const page = await sandboxPage(ctx, 'admin');
    expect(page).toMatch(/landlock \(Landlock ABI \d+\) <small>\(valve sandbox = landlock\)<\/small>/);
  });
});

describe('usage with 1,000 users', () => {
  it('the usage page reads records, not trees: a view of 1,000 users stays fast', async () => {
    const dir = path.join(srv.base, 'users');
    for (let i = 0; i < 1000; i++) {
      const id = `user-${String(i).padStart(4, '0')}`;
      const zones = { Uploads: { bytes: i * 10, files: 1 }, Storage: { bytes: i * 1000, files: i % 50 }, Documents: { bytes: 0, files: 0 } };
      fs.mkdirSync(path.join(dir, id, 'Storage', 'locks'), { recursive: true });
      fs.writeFileSync(path.join(dir, id, 'Storage', 'locks', '.shed-usage.json'), JSON.stringify({ kind: 'user', id, zones, total_bytes: i * 1010, total_files: 1 + (i % 50), quota_bytes: 1000 * 1024 * 1024, last_activity: new Date(Date.now() - i * 60_000).toISOString(), measured_at: new Date().toISOString() }));
    }
    const times: number[] = [];
    let html = '';
    for (let n = 0; n < 3; n++) {
      const t = performance.now();
      html = await (await fetch(`${srv.url}/admin/usage?sort=files&dir=desc`, { headers: { Cookie: s.cookie } })).text();
      times.push(performance.now() - t);
    }
    const median = times.sort((a, b) => a - b)[1]!;
    console.log(`usage page with 1,000 users: median ${median.toFixed(1)} ms (${times.map((x) => x.toFixed(1)).join(', ')})`);
    expect((html.match(/<td>user-\d{4}<\/td>/g) ?? []).length).toBe(1000);
    // Sorted by file count, descending: the first rows have 50 files (i % 50 = 49).
    expect(/<td>(user-\d{4})<\/td>/.exec(html)![1]).toMatch(/user-\d\d(49|99)/);
    expect(median).toBeLessThan(1500);
  });
});

describe('numbers a person reads', () => {
  it("Documents files are the user's files, not the history's objects; counts are plural only when they should be", async () => {
    for (const name of ['one.md', 'two.md']) await srv.post('shed_create_file', { zone: 'documents', path: name, content: `# ${name}\n` }, user('dora'));
    await srv.post('shed_patch_text', { zone: 'documents', path: 'one.md', content: 'more', position: 'end' }, user('dora'));
    expect((await post(srv.url, '/admin/usage', s, { _csrf: s.csrf, what: 'all' })).status).toBe(303); // records are refreshed at most every 5 s: measure now
    const record = JSON.parse(fs.readFileSync(path.join(srv.base, 'users', 'dora', 'Storage', 'locks', '.shed-usage.json'), 'utf8'));
    expect(record.zones.Documents.files).toBe(2);
    expect(record.zones['Documents history'].bytes).toBeGreaterThan(1000); // the history still counts against the quota, as its own tree
    const stats = await (await srv.post('shed_stats', {}, user('dora'))).json();
    expect(stats.data.zones.Documents.files).toBe(2);
    const page = await (await fetch(`${srv.url}/admin/usage`, { headers: { Cookie: s.cookie } })).text();
    expect(page).toMatch(/<td>dora<\/td>.*?<small>0 files<\/small>.*?<small>0 files<\/small>.*?<small>2 files<\/small>/s);
    expect(page).not.toMatch(/\b1 (users|groups|files)\b/);
  });

  it('one size format: binary units with one decimal on the admin page, folder pages and messages', async () => {
    await srv.post('shed_create_file', { zone: 'storage', path: 'eight.bin', content: 'x'.repeat(8192) }, user('eve'));
    const typed = await (await srv.post('shed_file_type', { zone: 'storage', path: 'eight.bin' }, user('eve'))).json();
    expect(typed.data.size_human).toBe('8.0 KiB');
    const tree = await (await srv.post('shed_tree', { zone: 'storage' }, user('eve'))).json();
    expect(tree.data.tree).toContain('eight.bin (8.0 KiB)');
    await srv.post('shed_create_file', { zone: 'storage', path: 'sizes/eight.bin', content: 'x'.repeat(8192) }, user('eve'));
    const link = await (await srv.post('shed_link_create', { zone: 'storage', path: 'sizes' }, user('eve'))).json();
    const folder = await (await fetch(link.data.url.replace(/^https?:\/\/[^/]+/, srv.url))).text();
    expect(folder).toContain('8.0 KiB');
  });

  it('link times read as local text, the exact ISO time in the title', async () => {
    await srv.post('shed_create_file', { zone: 'storage', path: 'l.txt', content: 'l' }, user('fay'));
    const made = await (await srv.post('shed_link_create', { zone: 'storage', path: 'l.txt' }, user('fay'))).json();
    const page = await (await fetch(`${srv.url}/admin/links`, { headers: { Cookie: s.cookie } })).text();
    const expires = made.data.expires_at as string;
    expect(page).toMatch(new RegExp(`<time datetime="${expires}" title="${expires}">\\d{1,2} \\w{3} \\d{4}, \\d\\d:\\d\\d [^<]+</time>`));
    expect(page).not.toMatch(/<td>\d{4}-\d\d-\d\dT/);
  });

  it('the audit log names the conversation the host sent, and nothing when it sent none', async () => {
    await srv.post('shed_stats', {}, { ...user('gus'), 'X-OpenWebUI-Chat-Id': 'chat-42' });
    await srv.post('shed_stats', {}, user('gus'));
    const lines = auditLines(srv.base).filter((e) => e.user === 'gus');
    expect(lines.map((e) => e.conversation)).toEqual(['chat-42', '']);
    const page = await (await fetch(`${srv.url}/admin/audit?user=gus`, { headers: { Cookie: s.cookie } })).text();
    expect(page).toContain('<td>chat-42</td>');
    expect(page).not.toContain('<td>unknown</td>');
  });
});

describe('the maintenance schedule across restarts', () => {
  it('the next run is one interval after the last one, kept across a restart (not minutes after each start)', async () => {
    const base = tempBase();
    const first = await serve(['--access-log', 'off'], { base });
    const page = async (url: string) => (await fetch(`${url}/admin/maintenance`)).text();
    const started = Date.now();
    const opened = await fetch(`${first.url}/admin/maintenance`); // local mode: a GET opens the session forms need
    const html = await opened.text();
    const fresh = /Next run: <time datetime="([^"]+)"/.exec(html)![1]!;
    // Never run: one interval after this server's start.
    expect(Math.abs(Date.parse(fresh) - (started + 24 * 3600_000))).toBeLessThan(60_000);
    const ran = await post(first.url, '/admin/maintenance', { cookie: cookieOf(opened)! }, { _csrf: hiddenValue(html, '_csrf') });
    expect(ran.status).toBe(200);
    const at = /Last run<\/strong><p><time datetime="([^"]+)"/.exec(await ran.text())![1]!;
    await first.stop();
    const second = await serve(['--access-log', 'off'], { base });
    try {
      const html = await page(second.url);
      expect(/Last run<\/strong><p><time datetime="([^"]+)"/.exec(html)![1]).toBe(at);
      expect(Date.parse(/Next run: <time datetime="([^"]+)"/.exec(html)![1]!)).toBe(Date.parse(at) + 24 * 3600_000);
    } finally {
      await second.stop();
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
