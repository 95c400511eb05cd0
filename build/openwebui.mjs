// Generates dist/fileshed_openwebui.py, the Open WebUI tool file (SPEC 13.6), from the registry:
// one `async def shed_*` per function (typed parameters, registry defaults, reST docstring), Valves
// with every plugin valve as an optional override, UserValves mirrored. Each method forwards to
// `fileshed serve` (wire contract in docs/server.md). Nothing here lists a function, parameter or text:
// everything comes from the plugin module's exports. Deterministic: same registry, same bytes.
//
// Open WebUI traps checked here (host-conventions 1 and 9), each one a build failure with its reason:
// - its loader rewrites the literal texts `from utils|apps|main|config` anywhere in the file;
// - the tool description is the docstring before the first `:param`/`:return`, so a description may
//   not contain them; a parameter description is one `:param name: text` line, so no line breaks.

const RUNTIME_CODES = ['SERVER_UNAVAILABLE', 'SERVER_TIMEOUT', 'SERVER_AUTH_FAILED', 'SERVER_REFUSED', 'SERVER_ERROR'];
const FORBIDDEN = /from (utils|apps|main|config)/i;
const CLIENT_VALVES = ['server_url', 'api_key', 'timeout_seconds'];
// fileshed serve always keeps its own storage base (an override would choose which disk it serves).
const SERVER_OWNED_VALVES = ['storage_base_path'];
// The admin switches that add functions (FunctionDef.enabledBy): all on, for the file's full list.
export const SWITCHES_ON = { allow_python: true, allow_shell: true };

/** A Python literal for a JSON value (JSON string escapes are valid Python string escapes). */
function py(value) {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`openwebui: non-finite default ${value}`);
    return String(value);
  }
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(py).join(', ')}]`;
  return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${py(v)}`).join(', ')}}`;
}

const SCALAR = { string: 'str', integer: 'int', number: 'float', boolean: 'bool', null: 'None' };

/** The Python annotation of one JSON Schema property (the shapes zod produces for our parameters). */
function pyType(schema, where) {
  if (Array.isArray(schema.enum)) {
    if (!schema.enum.every((v) => typeof v === 'string')) throw new Error(`openwebui: ${where}: only string enums map to Literal`);
    return `Literal[${schema.enum.map(py).join(', ')}]`;
  }
  if (schema.type === 'array') {
    if (schema.items === undefined) throw new Error(`openwebui: ${where}: an array needs items`);
    return `list[${pyType(schema.items, `${where}[]`)}]`;
  }
  if (Array.isArray(schema.type)) {
    const parts = schema.type.map((t) => SCALAR[t] ?? fail(`${where}: type ${t}`));
    return `Union[${parts.join(', ')}]`;
  }
  return SCALAR[schema.type] ?? fail(`${where}: no Python type for ${JSON.stringify(schema)}`);
}

function fail(message) {
  throw new Error(`openwebui: ${message}`);
}

/**
 * Text inside a non-raw """ docstring: backslashes escaped, line breaks as \n escapes, and a double
 * quote escaped only when another follows it or it ends the text (so no """ can close the string early).
 */
function docText(text) {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '"' && (i === text.length - 1 || text[i + 1] === '"')) out += '\\"';
    else if (ch < ' ' && ch !== '\t') out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`; // NUL and other controls
    else out += ch;
  }
  return out;
}

function checkDescription(text, where, oneLine) {
  if (/:(param|return)/.test(text)) fail(`${where}: the text ":param"/":return" would cut Open WebUI's description there`);
  if (oneLine && /[\r\n]/.test(text)) fail(`${where}: a parameter description must be one line (Open WebUI reads one ":param" line)`);
  if (oneLine && text !== text.trim()) fail(`${where}: leading or trailing spaces are lost by Open WebUI's ":param" parser`);
}

/** One `async def shed_*` method. */
function method(spec, hostArgs) {
  const { name, description, parameters } = spec.function;
  checkDescription(description, name, false);
  const required = new Set(parameters.required ?? []);
  const sig = ['self', '*'];
  const doc = [];
  const forwarded = [];
  for (const [param, schema] of Object.entries(parameters.properties ?? {})) {
    if (param.startsWith('_')) fail(`${name}.${param}: parameter names may not start with _ (Open WebUI drops them)`);
    let type = pyType(schema, `${name}.${param}`);
    let def = '';
    if (schema.default !== undefined && schema.default !== null) def = ` = ${py(schema.default)}`;
    else if (!required.has(param)) {
      type = `Optional[${type}]`;
      def = ' = None';
    }
    sig.push(`${param}: ${type}${def}`);
    if (schema.description) {
      checkDescription(schema.description, `${name}.${param}`, true);
      doc.push(`:param ${param}: ${docText(schema.description)}`);
    }
    forwarded.push(`${JSON.stringify(param)}: ${param}`);
  }
  sig.push('__user__: Optional[dict[str, Any]] = None', '__metadata__: Optional[dict[str, Any]] = None');
  const files = hostArgs.includes('__files__');
  const events = hostArgs.includes('__event_emitter__');
  // Typed loosely on purpose: Open WebUI builds a pydantic model of the whole signature, and a Callable
  // annotation has no JSON Schema (today's pydantic skips __ fields; older ones might not).
  if (files) sig.push('__files__: Optional[list[Any]] = None');
  if (events) sig.push('__event_emitter__: Any = None');
  const docstring = doc.length > 0 ? `"""${docText(description)}\n\n        ${doc.join('\n        ')}\n        """` : `"""${docText(description)}"""`;
  return [
    `    async def ${name}(`,
    ...sig.map((s) => `        ${s},`),
    '    ) -> str:',
    `        ${docstring}`,
    `        return await _forward(`,
    `            self.valves,`,
    `            ${JSON.stringify(name)},`,
    `            {${forwarded.join(', ')}},`,
    `            __user__,`,
    `            __metadata__,`,
    `            ${files ? '__files__' : 'None'},`,
    `            ${events ? '__event_emitter__' : 'None'},`,
    '        )',
  ].join('\n');
}

/** One pydantic field of Valves/UserValves. `optional`: None means "the server's setting". */
function valveField(key, schema, optional) {
  let type = pyType(schema, `valve ${key}`);
  const args = [`default=${optional ? 'None' : py(schema.default)}`];
  if (schema.title) args.push(`title=${py(schema.title)}`);
  if (schema.description) args.push(`description=${py(schema.description)}`);
  if (typeof schema.minimum === 'number') args.push(`ge=${schema.minimum}`);
  if (typeof schema.maximum === 'number') args.push(`le=${schema.maximum}`);
  if (typeof schema.minLength === 'number') args.push(`min_length=${schema.minLength}`);
  if (schema.format === 'password') args.push('json_schema_extra={"input": {"type": "password"}}');
  // An optional enum is an anyOf in JSON Schema, which Open WebUI renders as free text: ask for a select.
  else if (optional && Array.isArray(schema.enum)) args.push(`json_schema_extra={"input": {"type": "select", "options": ${py(schema.enum)}}}`);
  if (optional) type = `Optional[${type}]`;
  return `        ${key}: ${type} = Field(${args.join(', ')})`;
}

/**
 * Every function a server can offer, in registry order: the default deployment's specs plus the
 * ones an admin switches on (code execution: allow_python, allow_shell). Open WebUI stores a tool's
 * specs when it is saved, so the file must hold them all; a call to one the server has off answers
 * FUNCTION_DISABLED naming the setting, and shed_help / shed_parameters list only what the server
 * offers, which is never more than this file has (SPEC 13.6).
 */
function offeredSpecs(mod) {
  if (typeof mod.specsFor !== 'function') return mod.toolSpecs;
  const given = new Map(mod.toolSpecs.map((s) => [s.function.name, s]));
  return mod.specsFor(SWITCHES_ON).map((s) => given.get(s.function.name) ?? s);
}

/**
 * @param {{ toolSpecs: any[], specsFor?: (valves: Record<string, unknown>) => any[], valvesSchema: any, hostArguments?: Record<string, string[]>, catalog: any, version: string }} mod
 * @param {{ description?: string, author?: string, license?: string }} pkg
 */
export function generateOpenWebUITool(mod, pkg) {
  for (const code of RUNTIME_CODES) if (!(code in mod.catalog.errorCodes)) fail(`error code ${code} is not in the catalog (src/core/base/errors.ts)`);
  for (const key of SERVER_OWNED_VALVES) if (!(key in mod.valvesSchema.properties)) fail(`valve ${key} (kept by the server) is gone: update SERVER_OWNED_VALVES`);
  const valves = Object.fromEntries(Object.entries(mod.valvesSchema.properties).filter(([k]) => !SERVER_OWNED_VALVES.includes(k)));
  const userValves = mod.valvesSchema.$defs?.UserValves?.properties ?? {};
  for (const key of CLIENT_VALVES) if (key in valves) fail(`plugin valve ${key} collides with the tool file's own valve`);
  const maxFileMb = valves.max_file_size_mb?.default ?? fail('valve max_file_size_mb is needed for the attachment cap');
  const summary = (pkg.description ?? 'Persistent per-user file workspace for LLMs').split(':')[0].replace(/\.$/, '');

  const lines = [
    '"""',
    'title: Fileshed',
    `author: ${pkg.author ?? 'Fileshed contributors'}`,
    `version: ${mod.version}`,
    `license: ${pkg.license ?? 'MIT'}`,
    `description: ${summary}. This tool file forwards every call to a fileshed serve server (valves server_url and api_key).`,
    'required_open_webui_version: 0.6.0',
    '"""',
    '',
    '# Generated by build.mjs from the Fileshed registry: do not edit, regenerate.',
    '# Setup: run `fileshed serve --auth api-key --api-key KEY` where Open WebUI can reach it, paste this',
    '# file in Workspace > Tools > +, then set the valves server_url and api_key. The other valves',
    '# override the server\'s settings for calls from this Open WebUI (None = the server\'s setting).',
    '# Enable native function calling for the models that use these tools.',
    '',
    'import asyncio',
    'import base64',
    'import io',
    'import json',
    'import os',
    'import re',
    'from typing import Any, Literal, Optional, Union',
    'from urllib.parse import quote',
    '',
    'import aiohttp',
    'from pydantic import BaseModel, Field',
    '',
    '',
    'class Tools:',
    '    class Valves(BaseModel):',
    '        server_url: str = Field(default="http://localhost:8765", title="Fileshed server URL", description="Base URL of fileshed serve, e.g. http://fileshed:8765 (no trailing path).")',
    '        api_key: str = Field(default="", title="API key", description="One of the keys given to fileshed serve --auth api-key --api-key KEY.", json_schema_extra={"input": {"type": "password"}})',
    '        timeout_seconds: int = Field(default=600, ge=1, title="Timeout (s)", description="Longest wait for one call; keep it above the server\'s exec_timeout_max.")',
    ...Object.entries(valves).map(([k, s]) => valveField(k, s, true)),
    '',
    '    class UserValves(BaseModel):',
    ...(Object.keys(userValves).length > 0 ? Object.entries(userValves).map(([k, s]) => valveField(k, s, false)) : ['        pass']),
    '',
    '    def __init__(self) -> None:',
    '        self.valves = self.Valves()',
    '',
    offeredSpecs(mod).map((spec) => method(spec, mod.hostArguments?.[spec.function.name] ?? [])).join('\n\n'),
    '',
    '',
    `_SERVER_VALVES = (${Object.keys(valves).map(py).join(', ')},)`,
    `_DEFAULT_MAX_FILE_MB = ${py(maxFileMb)}`,
    RUNTIME.trim(),
    '',
  ];
  const text = lines.join('\n');
  const hit = FORBIDDEN.exec(text);
  if (hit) fail(`the generated file contains "${hit[0]}", which Open WebUI's loader rewrites: reword the registry text that holds it`);
  return text;
}

// The forwarding code, after the class so nothing in it is reachable as a tool. Plain Python
// (pydantic, aiohttp, standard library: what Open WebUI ships).
const RUNTIME = String.raw`
_NDJSON = "application/x-ndjson"


async def _forward(
    valves: "Tools.Valves",
    name: str,
    arguments: dict[str, Any],
    user: Optional[dict[str, Any]],
    metadata: Optional[dict[str, Any]],
    files: Optional[list[Any]],
    emitter: Any,
) -> str:
    """Posts one call to fileshed serve; every failure becomes an error envelope (never raises)."""
    opened: list[Any] = []
    try:
        url = str(valves.server_url or "").strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            return _error("SERVER_UNAVAILABLE", f"The server_url valve is not an http(s) URL: {url!r}.", "An admin must set the valve server_url to the address of fileshed serve, e.g. http://localhost:8765.")
        body = {k: v for k, v in arguments.items() if v is not None}
        headers = _headers(valves, user, metadata)
        data: Any = json.dumps(body, ensure_ascii=False)
        not_sent: list[dict[str, Any]] = []
        text_only: list[dict[str, Any]] = []
        if files is None and isinstance(metadata, dict) and isinstance(metadata.get("files"), list):
            files = metadata["files"]
        if files:
            cap = (valves.max_file_size_mb or _DEFAULT_MAX_FILE_MB) * 1024 * 1024
            parts, not_sent, text_only = _attachments(files, body, cap)
            if parts:
                form = aiohttp.FormData(quote_fields=False)
                form.add_field("arguments", json.dumps(body, ensure_ascii=False))
                for filename, handle in parts:
                    opened.append(handle)
                    form.add_field("files", handle, filename=_part_filename(filename), content_type="application/octet-stream")
                data = form
            elif not_sent:
                first = not_sent[0]
                return _error(first["code"], "Nothing was imported: " + "; ".join(f"{f['name']}: {f['reason']}" for f in not_sent) + ".", "An admin can raise the max_file_size_mb valve; otherwise ask the user for a smaller file.", {"errors": not_sent})
        if not isinstance(data, aiohttp.FormData):
            headers["Content-Type"] = "application/json"
        # A server that does not even accept the connection is unavailable, not slow: connecting gets
        # at most 10 s (half the budget when that is shorter), the whole call timeout_seconds.
        timeout = aiohttp.ClientTimeout(total=float(valves.timeout_seconds), sock_connect=min(10.0, valves.timeout_seconds / 2))
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.post(f"{url}/{name}", data=data, headers=headers, allow_redirects=False) as response:
                if response.status != 200:
                    return _http_error(response.status, await _detail(response), name)
                if response.headers.get("Content-Type", "").startswith(_NDJSON):
                    result = await _relay(response, emitter)
                else:
                    result = await _envelope(response)
        if result is None:
            return _error("SERVER_ERROR", "The Fileshed server's answer is not a Fileshed result.", "Check that the valve server_url points at fileshed serve (not at Open WebUI or a proxy page).")
        if not_sent:
            _report_not_sent(result, not_sent)
        if text_only:
            _report_text_only(result, text_only)
        image = _image_of(result)
        if image is not None:
            return image
        return json.dumps(result, ensure_ascii=False, indent=2)
    except asyncio.TimeoutError as err:
        if type(err).__name__ == "ConnectionTimeoutError":  # aiohttp >= 3.10: the connection never opened
            return _error("SERVER_UNAVAILABLE", "The Fileshed server did not accept a connection.", "An admin must check that fileshed serve is running and that the valve server_url is its address as seen from Open WebUI.")
        return _error("SERVER_TIMEOUT", f"The Fileshed server did not answer {name} within {valves.timeout_seconds} s.", "An admin can raise the valve timeout_seconds; for commands, pass a smaller timeout.")
    except (aiohttp.ClientConnectionError, OSError) as err:
        return _error("SERVER_UNAVAILABLE", f"The Fileshed server cannot be reached ({type(err).__name__}).", "An admin must check that fileshed serve is running and that the valve server_url is its address as seen from Open WebUI.")
    except Exception as err:  # the tool file never raises into Open WebUI
        return _error("SERVER_ERROR", f"The call to the Fileshed server failed ({type(err).__name__}: {err}).", "Check the valves server_url and api_key; retry once.")
    finally:
        for handle in opened:
            handle.close()


def _image_of(result: dict[str, Any]) -> Optional[str]:
    """The image a call shows the model (shed_read of a picture), as one data URI.

    Open WebUI's process_tool_result turns a tool result that is exactly a data:image/ URI into an
    image file of the result, which its tool loop hands to the model as an input_image part (a
    result holding text and an image in a JSON object reaches the model as base64 text instead).
    """
    data = result.get("data") if result.get("success") is True else None
    image = data.get("image") if isinstance(data, dict) else None
    uri = image.get("data_uri") if isinstance(image, dict) else None
    return uri if isinstance(uri, str) and uri.startswith("data:image/") else None


def _error(code: str, message: str, hint: str, details: Optional[dict[str, Any]] = None) -> str:
    return json.dumps({"success": False, "error": {"code": code, "message": message, "details": details or {}, "hint": hint}}, ensure_ascii=False, indent=2)


def _one_line(value: Any) -> Optional[str]:
    """A header value: visible one-line text, or None."""
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    if not text or "\r" in text or "\n" in text:
        return None
    return text


def _b64_json(value: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(value, ensure_ascii=False).encode("utf-8")).decode("ascii")


def _headers(valves: "Tools.Valves", user: Optional[dict[str, Any]], metadata: Optional[dict[str, Any]]) -> dict[str, str]:
    headers = {"Accept": _NDJSON}
    if valves.api_key:
        headers["Authorization"] = f"Bearer {valves.api_key}"
    user = user if isinstance(user, dict) else {}
    for key, header in (("id", "X-OpenWebUI-User-Id"), ("email", "X-OpenWebUI-User-Email"), ("role", "X-OpenWebUI-User-Role")):
        value = _one_line(user.get(key))
        if value is not None:
            headers[header] = value
    name = _one_line(user.get("name"))
    if name is not None:
        headers["X-OpenWebUI-User-Name"] = quote(name, safe=" ")
    metadata = metadata if isinstance(metadata, dict) else {}
    for key, header in (("chat_id", "X-OpenWebUI-Chat-Id"), ("message_id", "X-OpenWebUI-Message-Id")):
        value = _one_line(metadata.get(key))
        if value is not None:
            headers[header] = value
    overrides = {key: getattr(valves, key) for key in _SERVER_VALVES if getattr(valves, key, None) is not None}
    if overrides:
        headers["X-Fileshed-Valves"] = _b64_json(overrides)
    user_valves: Any = user.get("valves")
    if hasattr(user_valves, "model_dump"):
        user_valves = user_valves.model_dump()
    if isinstance(user_valves, dict):
        headers["X-Fileshed-User-Valves"] = _b64_json(user_valves)
    return headers


def _attachments(files: list[Any], body: dict[str, Any], cap: int) -> tuple[list[tuple[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Open WebUI file items -> (name, binary handle) parts, the ones that cannot be sent, and the ones sent as text only."""
    items: list[tuple[str, Optional[str], Optional[str]]] = []
    for entry in files[:1000]:
        if isinstance(entry, str):
            items.append((os.path.basename(entry), entry, None))
            continue
        if not isinstance(entry, dict):
            continue
        file: dict[str, Any] = entry["file"] if isinstance(entry.get("file"), dict) else {}
        meta: dict[str, Any] = file["meta"] if isinstance(file.get("meta"), dict) else {}
        data: dict[str, Any] = file["data"] if isinstance(file.get("data"), dict) else entry["data"] if isinstance(entry.get("data"), dict) else {}
        name = entry.get("name") or entry.get("filename") or file.get("filename") or meta.get("name") or file.get("id") or entry.get("id") or "file"
        path = file.get("path") or entry.get("path")
        content = data.get("content")
        items.append((str(name), path if isinstance(path, str) else None, content if isinstance(content, str) else None))
    wanted = body.get("filename")
    if wanted and not body.get("import_all"):
        chosen = [item for item in items if item[0] == wanted or os.path.basename(item[0]) == wanted]
        items = chosen or items
    parts: list[tuple[str, Any]] = []
    not_sent: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    budget = cap  # the server refuses bodies over max_file_size_mb + 1 MiB: one request carries at most cap bytes
    for name, path, content in items:
        raw: Optional[bytes] = None
        if path is not None and os.path.isfile(path):
            size = os.path.getsize(path)
        elif content is not None:
            raw = content.encode("utf-8")
            size = len(raw)
            if not _TEXT_NAME.search(name):
                # Only Open WebUI's extracted text is here (the upload is not a file on this disk, e.g.
                # object storage): it is saved as text under a .txt name, never as a fake report.pdf.
                notes.append({"name": name, "imported_as": f"{name}.txt", "reason": "only the text Open WebUI extracted from it was available (the file itself is not on this server's disk, e.g. object storage)"})
                if body.get("filename") == name:
                    body["filename"] = f"{name}.txt"
                name = f"{name}.txt"
        else:
            not_sent.append({"name": name, "code": "FILE_NOT_FOUND", "reason": "the tool file cannot read this upload (no local file and no text content)"})
            continue
        if size > cap:
            not_sent.append({"name": name, "code": "FILE_TOO_LARGE", "reason": f"{size} bytes, over the limit of {cap} bytes (valve max_file_size_mb)"})
            continue
        if size > budget:
            not_sent.append({"name": name, "code": "FILE_TOO_LARGE", "reason": f"too large together with the other attachments: import it alone with filename={json.dumps(name, ensure_ascii=False)}"})
            continue
        budget -= size
        parts.append((name, io.BytesIO(raw) if raw is not None else open(path or "", "rb")))
    return parts, not_sent, notes


# Names whose file is its text: Open WebUI's extracted content is the file itself.
_TEXT_NAME = re.compile(r"\.(txt|text|md|markdown|csv|tsv|json|jsonl|xml|html?|ya?ml|toml|ini|cfg|conf|log|sql|py|js|ts|sh|r|tex|rst)$", re.IGNORECASE)


def _part_filename(name: str) -> str:
    """A multipart file name as browsers write it (what the server's WHATWG parser reads back)."""
    return name.replace("\\", "_").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def _report_not_sent(result: dict[str, Any], not_sent: list[dict[str, Any]]) -> None:
    names = ", ".join(f"{f['name']} ({f['reason']})" for f in not_sent)
    if result.get("success") and isinstance(result.get("data"), dict):
        result["data"].setdefault("errors", []).extend(not_sent)
        result["message"] = f"{result.get('message', '')} Not sent to the server: {names}.".strip()
    elif isinstance(result.get("error"), dict):
        details = result["error"].setdefault("details", {})
        if isinstance(details, dict):
            details["not_sent"] = not_sent


def _report_text_only(result: dict[str, Any], notes: list[dict[str, Any]]) -> None:
    """Says which attachments arrived as their extracted text only, and under which name."""
    said = "; ".join(f"{n['name']} was imported as {n['imported_as']}: {n['reason']}" for n in notes)
    if result.get("success") and isinstance(result.get("data"), dict):
        result["data"]["text_only"] = notes
        result["message"] = f"{result.get('message', '')} Note: {said}.".strip()


async def _detail(response: aiohttp.ClientResponse) -> str:
    text = (await response.text(errors="replace"))[:1000]
    try:
        parsed = json.loads(text)
    except ValueError:
        return text.strip()
    if isinstance(parsed, dict) and "detail" in parsed:
        return str(parsed["detail"])
    return text.strip()


def _http_error(status: int, detail: str, name: str) -> str:
    details = {"http_status": status, "server_detail": detail}
    said = f" The server said: {detail}" if detail else ""
    if status == 401:
        return _error("SERVER_AUTH_FAILED", f"The Fileshed server refused the API key (HTTP 401).{said}", "An admin must set the valve api_key to a key of fileshed serve --auth api-key --api-key KEY.", details)
    if status == 403:
        return _error("SERVER_REFUSED", f"The Fileshed server refused the call (HTTP 403).{said}", "Valve overrides (the valves below timeout_seconds) need a server in api-key mode: an admin must set them back to Default or run fileshed serve --auth api-key. A server bound to a loopback address also refuses other host names in server_url.", details)
    if status == 404:
        hint = f"The server has no function {name}: the valve server_url must point at fileshed serve, and this tool file must come from the same Fileshed version as the server."
    elif status == 413:
        hint = "The request is over the server's size limit (derived from max_file_size_mb): send smaller attachments."
    elif status == 400:
        hint = "The request was rejected: check that Open WebUI passes the user to tools and that this tool file matches the server's version."
    else:
        hint = "Check the Fileshed server's log; the valve server_url must point at fileshed serve."
    return _error("SERVER_ERROR", f"The Fileshed server answered HTTP {status} to {name}.{said}", hint, details)


async def _envelope(response: aiohttp.ClientResponse) -> Optional[dict[str, Any]]:
    try:
        parsed = json.loads(await response.text())
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) and "success" in parsed else None


async def _relay(response: aiohttp.ClientResponse, emitter: Any) -> Optional[dict[str, Any]]:
    """Reads the NDJSON stream: status lines go to the chat as they come, the result line is returned."""
    result: Optional[dict[str, Any]] = None
    buffer = bytearray()

    async def line(raw: bytes) -> None:
        nonlocal result
        if not raw.strip():
            return
        try:
            item = json.loads(raw)
        except ValueError:
            return
        if not isinstance(item, dict):
            return
        if item.get("type") == "status" and emitter is not None and isinstance(item.get("data"), dict):
            try:
                await emitter({"type": "status", "data": item["data"]})
            except Exception:
                pass  # a chat that cannot show progress must not fail the call
        elif item.get("type") == "result" and isinstance(item.get("data"), dict):
            result = item["data"]

    async for chunk in response.content.iter_any():
        buffer.extend(chunk)
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                break
            await line(bytes(buffer[:end]))
            del buffer[: end + 1]
    await line(bytes(buffer))
    return result
`;
