/**
 * What the sign-in page says when an Open WebUI token could not be checked because Open WebUI did
 * not answer as Open WebUI (unreachable, a wrong address, another server): the address in use,
 * where it was set, and the ways back in that do not need this page, since the page that edits
 * openwebui_api_url is the one the admin is locked out of. Nothing here is secret: the address and
 * the config file's path are the server's own settings, shown on a page anyone can open, so the
 * API key is only named, never shown.
 */
import type { ServerContext } from '../route.js';
import { esc } from './page.js';
import { loadConfig } from './valves.js';

export function openwebuiDownHelp(ctx: ServerContext): string {
  const url = ctx.openwebuiUrl();
  const file = ctx.settings.configFile;
  const byFlag = Object.hasOwn(ctx.settings.flagValves, 'openwebui_api_url');
  const inFile = Object.hasOwn(loadConfig(file).config?.valves ?? {}, 'openwebui_api_url');
  const where = byFlag
    ? 'the flag <code>--valve openwebui_api_url=…</code>'
    : inFile
      ? `the valve <code>openwebui_api_url</code> in <code>${esc(file)}</code>`
      : '<code>--openwebui-url</code> (or <code>FILESHED_OPENWEBUI_URL</code>, or <code>server.openwebui_url</code> in the config file; default <code>http://localhost:8080</code>)';
  const fix = byFlag
    ? 'Restart the server with the right <code>--valve openwebui_api_url=URL</code> (the flag wins over the config file and this page).'
    : inFile
      ? `Edit <code>${esc(file)}</code>: set <code>"openwebui_api_url"</code> under <code>"valves"</code> to Open WebUI's address as this server reaches it (e.g. <code>http://open-webui:8080</code>), or remove it to fall back to <code>--openwebui-url</code>. The server reads the file again at the next request: no restart needed.`
      : 'Restart the server with <code>--openwebui-url URL</code> (or <code>FILESHED_OPENWEBUI_URL=URL</code>): Open WebUI\'s address as this server reaches it, e.g. <code>http://open-webui:8080</code> in Docker Compose.';
  const key =
    ctx.settings.apiKeys.length > 0
      ? "Or sign in with the server's API key instead (above): it does not need Open WebUI. It is <code>FILESHED_API_KEY</code> or <code>server.api_keys</code> in the config file."
      : `Or restart the server with <code>--auth api-key,openwebui-session</code>: an API key is generated into <code>server.api_keys</code> of <code>${esc(file)}</code>, and it signs in here without Open WebUI.`;
  return `<div class="notice warn" id="openwebui-help"><p><strong>Open WebUI tokens cannot be checked now.</strong> This server asks Open WebUI at <code>${esc(url)}</code> who a token belongs to (<code>GET /api/v1/auths/</code>); that address was set by ${where}.</p><p>${fix}</p><p>${key}</p></div>`;
}
