"""build/openwebui.mjs: deterministic output, and a build failure for registry texts Open WebUI would mangle."""

from __future__ import annotations

import json
import subprocess

import owui_emulation as owui

SCRIPT = r'''
import fs from 'node:fs';
const mod = await import('./dist/fileshed.mjs');
const { generateOpenWebUITool } = await import('./build/openwebui.mjs');
const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const clone = () => ({ ...mod, toolSpecs: structuredClone(mod.toolSpecs) });
const outcome = (change) => {
  const m = clone();
  change(m);
  try { generateOpenWebUITool(m, pkg); return 'built'; } catch (err) { return err.message; }
};
const first = (m) => m.toolSpecs.find((s) => Object.keys(s.function.parameters.properties ?? {}).length > 0).function;
const param = (m) => Object.values(first(m).parameters.properties)[0];
console.log(JSON.stringify({
  same: generateOpenWebUITool(mod, pkg) === fs.readFileSync('dist/fileshed_openwebui.py', 'utf8'),
  fromMain: outcome((m) => { first(m).description += ' Copy it from main memory.'; }),
  fromConfig: outcome((m) => { param(m).description = 'Read it From Config.'; }),
  paramInDescription: outcome((m) => { first(m).description += ' See :param zone.'; }),
  newlineInParam: outcome((m) => { param(m).description = 'two\nlines'; }),
  quotesAndBackslashes: outcome((m) => { first(m).description += ' A """quoted""" C:\\path\\n and a final quote"'; }),
}));
'''


def run() -> dict[str, object]:
    done = subprocess.run(["node", "--input-type=module", "-e", SCRIPT], cwd=owui.ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_generator_is_deterministic_and_refuses_mangled_texts() -> None:
    got = run()
    assert got["same"] is True  # dist/fileshed_openwebui.py is what the registry generates now
    assert "from main" in str(got["fromMain"]) and "rewrites" in str(got["fromMain"])
    assert "rewrites" in str(got["fromConfig"])
    assert ":param" in str(got["paramInDescription"])
    assert "one line" in str(got["newlineInParam"])
    assert got["quotesAndBackslashes"] == "built"


def test_escaped_texts_reach_the_docstring_unchanged() -> None:
    # A description with quotes, backslashes and line breaks survives as the docstring Open WebUI reads.
    script = SCRIPT.split("console.log")[0] + r'''
const m = clone();
const fn = first(m);
fn.description = '"Say """hi""" to C:\\temp\\new\nthen\u0000 "stop"';
process.stdout.write(JSON.stringify({ name: fn.name, text: generateOpenWebUITool(m, pkg) }));
'''
    done = subprocess.run(["node", "--input-type=module", "-e", script], cwd=owui.ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    module = owui.load_tool_module(out["text"], "fileshed_escapes")
    func = getattr(module.Tools(), out["name"])
    assert owui.chat_spec(func)["description"].rstrip() == '"Say """hi""" to C:\\temp\\new\nthen\x00 "stop"'
