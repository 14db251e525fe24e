import { test } from "node:test";
import assert from "node:assert/strict";
import {
  resolveInterpreter,
  expandSettingPath,
  findOnPath,
  missingDenpexMessage,
  pipInstallArgs,
} from "../../src/core/interpreter";

const exe = (files: string[]) => (f: string) => files.includes(f);

test("the setting wins over the Python extension and PATH", () => {
  const r = resolveInterpreter({
    setting: "/opt/py/bin/python",
    pythonExtension: "/venv/bin/python",
    pathEnv: "/usr/bin",
    isExecutable: exe(["/opt/py/bin/python", "/venv/bin/python", "/usr/bin/python3"]),
  });
  assert.deepEqual(r, {
    ok: true,
    interpreter: { command: "/opt/py/bin/python", source: "setting" },
  });
});

test("a setting that is not executable is an error, not a silent fallback", () => {
  const r = resolveInterpreter({
    setting: "/nope/python",
    pathEnv: "/usr/bin",
    isExecutable: exe(["/usr/bin/python3"]),
  });
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.message : "", /denpex\.python\.interpreter is set to "\/nope\/python"/);
});

test("a bare command name in the setting is looked up on PATH", () => {
  const r = resolveInterpreter({
    setting: "python3.11",
    pathEnv: "/a:/b",
    isExecutable: exe(["/b/python3.11"]),
  });
  assert.deepEqual(r, { ok: true, interpreter: { command: "/b/python3.11", source: "setting" } });
});

test("the Python extension's interpreter comes before PATH", () => {
  const r = resolveInterpreter({
    setting: "",
    pythonExtension: "/venv/bin/python",
    pathEnv: "/usr/bin",
    isExecutable: exe(["/venv/bin/python", "/usr/bin/python3"]),
  });
  assert.deepEqual(r, {
    ok: true,
    interpreter: { command: "/venv/bin/python", source: "python-extension" },
  });
});

test("a stale Python extension interpreter falls through to PATH", () => {
  const r = resolveInterpreter({
    pythonExtension: "/deleted/bin/python",
    pathEnv: "/x:/usr/bin",
    isExecutable: exe(["/usr/bin/python3"]),
  });
  assert.deepEqual(r, { ok: true, interpreter: { command: "/usr/bin/python3", source: "path" } });
});

test("nothing found gives one actionable line", () => {
  const r = resolveInterpreter({ pathEnv: "/x", isExecutable: exe([]) });
  assert.equal(r.ok, false);
  assert.match(
    !r.ok ? r.message : "",
    /No Python interpreter found: set denpex\.python\.interpreter/,
  );
});

test("~ and ${workspaceFolder} expand in the setting", () => {
  assert.equal(expandSettingPath("~/venv/bin/python", "/home/ann"), "/home/ann/venv/bin/python");
  assert.equal(
    expandSettingPath("${workspaceFolder}/.venv/bin/python", undefined, "/ws"),
    "/ws/.venv/bin/python",
  );
  assert.equal(expandSettingPath("/abs/~x", "/home/ann"), "/abs/~x");
});

test("findOnPath skips empty PATH entries and honours order", () => {
  assert.equal(
    findOnPath("python3", "::/first:/second", exe(["/second/python3", "/first/python3"])),
    "/first/python3",
  );
  assert.equal(findOnPath("python3", undefined, exe([])), undefined);
});

test("the missing-denpex message names the interpreter, its origin and the last error line", () => {
  const msg = missingDenpexMessage(
    { command: "/usr/bin/python3", source: "path" },
    "Traceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'denpex'\n",
  );
  assert.equal(
    msg,
    "Denpex is not installed in /usr/bin/python3 (found on PATH): ModuleNotFoundError: No module named 'denpex'",
  );
  assert.deepEqual(pipInstallArgs("/x/denpex-0.1.0-py3-none-any.whl"), [
    "-m",
    "pip",
    "install",
    "--disable-pip-version-check",
    "/x/denpex-0.1.0-py3-none-any.whl",
  ]);
});
