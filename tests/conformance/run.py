#!/usr/bin/env python3
"""Runs the conformance cases in every language and compares the transcripts.

    .venv/bin/python tests/conformance/run.py [--cases DIR] [--lang L]... [-k SUBSTR] [-v] [--async]

Starts the provider emulator once, then for each case and language: loads the case's scenario
into the emulator, runs the language's driver (`<driver> CASE_JSON BASE_URL`, CASE_JSON being
a copy of the case's case.json with $CASE_DIR resolved in its config), compares its
stdout line by line (as JSON objects) with the case's expected.jsonl and checks the requests
the emulator received against the case's `expect_requests`. Cases about the network (`tls`,
`proxy`, `no_proxy`) run against a second emulator that speaks HTTPS with the test
certificates of tests/net/make_certs.sh, and through the loopback proxy of
tests/net/connect_proxy.py; the drivers get them through the environment (SSL_CERT_FILE,
HTTPS_PROXY, ...), which is otherwise cleared of those variables. A turn may be a step object
(steps.py: export, import, truncate, compact, sessions, ...); export lines are compared parsed
and byte for byte across languages; $SESSION_DIR is a fresh folder per cell. Prints a diff per failing cell,
then `N passed, N failed`, and writes build/conformance.json and every request the emulator
received to build/conformance-requests.jsonl (checked by tests/python/test_request_fidelity.py
against the official SDKs' request types). See README.md in this folder.

Python 3.11 standard library only (the proxy, tests/net/connect_proxy.py, too), except for the
cases with media: generating their test media (media.py) and the `$image` matcher need Pillow.
"""
from __future__ import annotations

import argparse
import atexit
import base64
import binascii
import difflib
import hashlib
import io
import json
import os
import queue
import select
import shutil
import socket
import signal
import subprocess
import sys
import threading
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CASES_DIR = Path(__file__).resolve().parent / "cases"
LANGUAGES = ["c", "python", "go", "lua"]
# The languages whose driver has an --async mode: every read through the binding's stepped,
# non-blocking path (README, "The async mode").
ASYNC_LANGUAGES = ["c", "python", "lua"]
DRIVER_TIMEOUT_S = 30.0
BUILD_TIMEOUT_S = 300.0
EMULATOR_START_TIMEOUT_S = 15.0
LIB = REPO / "zig-out" / "lib" / "libpanto.so"
LUA_MODULE = REPO / "zig-out" / "lib" / "lua" / "panto.so"
NET_DIR = REPO / "tests" / "net"
TLS_DIR = REPO / "build" / "tls"  # written by tests/net/make_certs.sh
CA_FILES = {"test": TLS_DIR / "ca.pem", "wrong": TLS_DIR / "other-ca.pem"}
# The resolv.conf naming the runner's nameserver (`dns` cases), and the host they look up.
RESOLV_CONF = REPO / "build" / "conformance" / "resolv.conf"
DNS_HOST = "api.panto.test"

sys.path.insert(0, str(NET_DIR))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from connect_proxy import MODES as PROXY_MODES, Proxy  # noqa: E402  (standard library only)
from dns_server import Nameserver  # noqa: E402  (standard library only)
import media as test_media  # noqa: E402  (imports Pillow only when it generates)
import steps  # noqa: E402  (standard library only)
import conversation_shape  # noqa: E402  (standard library only)


# ---- Drivers -----------------------------------------------------------------------------


@dataclass
class Driver:
    lang: str
    argv: list[str] | None = None  # None: unavailable, see `problem`
    problem: str = ""


# The environment that decides where a request goes and whom it trusts. A driver gets none of
# these from the outer environment (a developer's proxy must not change a case), only what
# its case asks for (see network_env).
NETWORK_VARIABLES = (
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
    "NO_PROXY", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "PANTO_RESOLV_CONF",
)


def driver_env(network: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a build (network None: the outer one's network variables are kept,
    a build may need a proxy) or of a driver run (network: exactly these network
    variables)."""
    env = dict(os.environ)
    # A driver must never reach a real provider with a real key, nor another endpoint than
    # its case's (a case may set one: "env").
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL",
                "AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
                "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_ENDPOINT_URL_BEDROCK", "AWS_ENDPOINT_URL", "GEMINI_API_KEY",
                "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "AWS_PROFILE"):
        env.pop(key, None)
    # Nor the developer's AWS profile files (~/.aws): a case that wants some names its own.
    env["AWS_SHARED_CREDENTIALS_FILE"] = env["AWS_CONFIG_FILE"] = "/nonexistent/panto-conformance"
    if network is not None:
        for key in NETWORK_VARIABLES:
            env.pop(key, None)
        env.update(network)
    env["PANTO_LIBRARY"] = str(LIB)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in [str(LIB.parent), env.get("LD_LIBRARY_PATH", "")] if p
    )
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [str(REPO / "bindings-py"), env.get("PYTHONPATH", "")] if p
    )
    env["LUA_CPATH"] = str(LUA_MODULE.parent / "?.so") + ";;"
    return env


def go_library_stamp() -> dict[str, str]:
    """Go's build cache does not hash libpanto.a (cgo's LDFLAGS only name it), so after a
    `make build` `go build` would keep a driver linked with the old library. A define that
    changes with the library's bytes is part of the cache key: the driver is relinked."""
    libs = sorted((REPO / "libpanto-go" / "lib").glob("*/libpanto.a"))
    digest = hashlib.sha256()
    for lib in libs:
        digest.update(lib.read_bytes())
    return {"CGO_CFLAGS": f"-O2 -g -DPANTO_LIBRARY_STAMP={digest.hexdigest()[:16]}"}


def run_build(argv: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> str:
    """Runs a build command; returns "" on success or a short reason."""
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env={**driver_env(), **(extra_env or {})}, capture_output=True, text=True,
            timeout=BUILD_TIMEOUT_S,
        )
    except FileNotFoundError as e:
        return f"cannot run {argv[0]}: {e}"
    except subprocess.TimeoutExpired:
        return f"build timed out after {BUILD_TIMEOUT_S:.0f}s: {' '.join(argv)}"
    if proc.returncode != 0:
        out = (proc.stderr + proc.stdout).strip().splitlines()
        return f"build failed: {' '.join(argv)}\n" + "\n".join("    " + l for l in out[-15:])
    return ""


def prepare_driver(lang: str) -> Driver:
    """Builds (if needed) and locates the driver of one language."""
    drivers = REPO / "tests" / "conformance" / "drivers"
    build = REPO / "build" / "drivers"
    if lang == "c":
        if not LIB.exists():
            return Driver(lang, problem=f"{LIB.relative_to(REPO)} is missing (run zig build)")
        build.mkdir(parents=True, exist_ok=True)
        exe = build / "c_driver"
        cc = os.environ.get("CC", "cc")
        problem = run_build(
            [cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-pthread", "-Iinclude",
             "tests/conformance/drivers/c_driver.c", "-o", str(exe), "-Lzig-out/lib", "-lpanto",
             f"-Wl,-rpath,{LIB.parent}"],
            REPO,
        )
        return Driver(lang, problem=problem) if problem else Driver(lang, [str(exe)])
    if lang == "python":
        script = drivers / "driver.py"
        if not script.exists():
            return Driver(lang, problem=f"{script.relative_to(REPO)} is missing")
        python = REPO / ".venv" / "bin" / "python"
        return Driver(lang, [str(python if python.exists() else sys.executable), str(script)])
    if lang == "go":
        pkg = REPO / "libpanto-go" / "cmd" / "conformance-driver"
        if not pkg.is_dir():
            return Driver(lang, problem=f"{pkg.relative_to(REPO)} is missing")
        go = shutil.which("go") or "/usr/local/go/bin/go"
        build.mkdir(parents=True, exist_ok=True)
        exe = build / "go_driver"
        problem = run_build([go, "build", "-o", str(exe), "./cmd/conformance-driver"],
                            REPO / "libpanto-go", go_library_stamp())
        return Driver(lang, problem=problem) if problem else Driver(lang, [str(exe)])
    if lang == "lua":
        script = drivers / "driver.lua"
        if not script.exists():
            return Driver(lang, problem=f"{script.relative_to(REPO)} is missing")
        if not LUA_MODULE.exists():
            return Driver(lang, problem=f"{LUA_MODULE.relative_to(REPO)} is missing (run zig build)")
        lua = shutil.which("lua5.4") or "/usr/bin/lua5.4"
        return Driver(lang, [lua, str(script)])
    return Driver(lang, problem=f"unknown language {lang!r}")


# ---- The emulator ------------------------------------------------------------------------


# Runs `python -m panto.emulator` without importing the panto package itself (the emulator is
# standard library only): a binding that does not import must not take the emulator, and with
# it every language's cells, down.
EMULATOR_BOOT = (
    "import runpy, sys, types\n"
    "pkg = types.ModuleType('panto')\n"
    "pkg.__path__ = [sys.argv.pop(1)]\n"
    "sys.modules['panto'] = pkg\n"
    "runpy.run_module('panto.emulator', run_name='__main__', alter_sys=True)\n"
)


class Emulator:
    """The provider emulator, `python -m panto.emulator --port 0`, as a subprocess; with
    `tls=(cert, key, ca)` it serves HTTPS (its url is then `https://localhost:PORT`) and the
    runner's own calls trust `ca`."""

    def __init__(self, tls: tuple[Path, Path, Path] | None = None) -> None:
        env = dict(os.environ)
        argv = [sys.executable, "-c", EMULATOR_BOOT, str(REPO / "bindings-py" / "panto"),
                "--port", "0"]
        # The runner's own calls never go through a proxy of the outer environment.
        handlers: list[Any] = [urllib.request.ProxyHandler({})]
        if tls is not None:
            cert, key, ca = tls
            argv += ["--tls-cert", str(cert), "--tls-key", str(key)]
            handlers.append(urllib.request.HTTPSHandler(
                context=ssl.create_default_context(cafile=str(ca))))
        self._opener = urllib.request.build_opener(*handlers)
        self.proc = subprocess.Popen(
            argv,
            cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )
        self.stderr: list[str] = []
        threading.Thread(target=self._drain, args=(self.proc.stderr, self.stderr), daemon=True).start()
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._first_line, args=(lines,), daemon=True).start()
        try:
            first = lines.get(timeout=EMULATOR_START_TIMEOUT_S)
        except queue.Empty:
            self.close()
            raise RuntimeError("the emulator printed nothing within "
                               f"{EMULATOR_START_TIMEOUT_S:.0f}s")
        prefix = "panto-emulator listening on "
        if not first.startswith(prefix):
            self.close()
            time.sleep(0.2)
            raise RuntimeError(f"the emulator did not start: {first.strip()!r}\n"
                               + "".join(self.stderr[-20:]))
        self.url = first[len(prefix):].strip().rstrip("/")
        self.port = int(self.url.rsplit(":", 1)[1])

    def _first_line(self, out: queue.Queue[str]) -> None:
        assert self.proc.stdout is not None
        out.put(self.proc.stdout.readline())
        # Keep draining so the emulator never blocks on a full pipe.
        for _ in self.proc.stdout:
            pass

    @staticmethod
    def _drain(stream: Any, sink: list[str]) -> None:
        for line in stream:
            sink.append(line)
            del sink[:-200]

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"content-type": "application/json"})
        try:
            with self._opener.open(req, timeout=10) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"emulator {method} {path}: HTTP {e.code}: "
                               f"{e.read().decode(errors='replace')[:500]}") from None
        return json.loads(raw) if raw.strip() else None

    def load(self, scenario: Any) -> None:
        self._call("POST", "/_emulator/scenario", scenario)

    def requests(self) -> list[dict[str, Any]]:
        return self._call("GET", "/_emulator/requests")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---- The network cases: the TLS emulator and the proxy -----------------------------------


class FullQueueListener:
    """A loopback TCP listener that never completes a connection: its accept queue (backlog
    0) is kept full by a connection it never accepts, and Linux then drops every SYN, so a
    client's connect() hangs until the client gives up (`"connect_hangs": true`)."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._fillers: list[socket.socket] = []
        try:
            self._sock.bind(("127.0.0.1", 0))
            self._sock.listen(0)
            self.port = self._sock.getsockname()[1]
            for _ in range(8):
                filler = socket.socket()
                filler.setblocking(False)
                filler.connect_ex(("127.0.0.1", self.port))
                if not select.select([], [filler], [], 0.2)[1]:
                    filler.close()  # this one hangs: the queue is full
                    return
                self._fillers.append(filler)
            raise OSError("the listener's queue never filled up")
        except OSError:
            self.close()
            raise

    def close(self) -> None:
        for s in self._fillers + [self._sock]:
            s.close()


class Network:
    """What the network cases need, started on first use and kept for the run: the test
    certificates (tests/net/make_certs.sh into build/tls), a second emulator serving HTTPS
    with them, the loopback proxy (tests/net/connect_proxy.py, in this process), a listener
    that never completes a connection and a nameserver that answers late
    (tests/net/dns_server.py, in this process, named by build/conformance/resolv.conf). When
    one cannot start, every cell that needs it fails with the reason."""

    def __init__(self, resolv_conf: Path = RESOLV_CONF) -> None:
        # Each worker of a parallel run has its own nameserver, named by its own file.
        self.resolv_conf = resolv_conf
        self._tls: Emulator | None = None
        self._proxy: Proxy | None = None
        self._hang: FullQueueListener | None = None
        self._nameserver: Nameserver | None = None
        self._problems: dict[str, str] = {}

    def tls_emulator(self) -> Emulator:
        if self._tls is None and "tls" not in self._problems:
            try:
                proc = subprocess.run([str(NET_DIR / "make_certs.sh"), str(TLS_DIR)], cwd=REPO,
                                      capture_output=True, text=True, timeout=60)
                if proc.returncode != 0:
                    raise RuntimeError("tests/net/make_certs.sh failed: "
                                       + (proc.stderr + proc.stdout).strip()[-500:])
                self._tls = Emulator(tls=(TLS_DIR / "server.pem", TLS_DIR / "server.key",
                                          CA_FILES["test"]))
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
                self._problems["tls"] = f"cannot start the TLS emulator: {e}"
        if self._tls is None:
            raise RuntimeError(self._problems["tls"])
        return self._tls

    def proxy(self) -> Proxy:
        if self._proxy is None and "proxy" not in self._problems:
            try:
                self._proxy = Proxy()
            except OSError as e:
                self._problems["proxy"] = f"cannot start the proxy: {e}"
        if self._proxy is None:
            raise RuntimeError(self._problems["proxy"])
        return self._proxy

    def hanging_listener(self) -> FullQueueListener:
        if self._hang is None and "hang" not in self._problems:
            try:
                self._hang = FullQueueListener()
            except OSError as e:
                self._problems["hang"] = f"cannot set up a listener that never answers: {e}"
        if self._hang is None:
            raise RuntimeError(self._problems["hang"])
        return self._hang

    def nameserver(self) -> Nameserver:
        if self._nameserver is None and "dns" not in self._problems:
            try:
                self._nameserver = Nameserver()
                self.resolv_conf.parent.mkdir(parents=True, exist_ok=True)
                self._nameserver.write_resolv_conf(self.resolv_conf)
            except OSError as e:
                self._problems["dns"] = f"cannot start the nameserver: {e}"
        if self._nameserver is None:
            raise RuntimeError(self._problems["dns"])
        return self._nameserver

    def close(self) -> None:
        if self._nameserver is not None:
            self._nameserver.close()
        if self._tls is not None:
            self._tls.close()
        if self._proxy is not None:
            self._proxy.close()
        if self._hang is not None:
            self._hang.close()


DEFAULT_PROXY_VARS = {"connect": ["HTTPS_PROXY", "https_proxy"],
                      "http": ["HTTP_PROXY", "http_proxy"]}
PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def check_network_options(data: dict[str, Any]) -> None:
    """Raises ValueError when the case's network options (see README.md) are malformed."""
    if not isinstance(data.get("tls", False), bool):
        raise ValueError("tls must be true or false")
    if "ca" in data and (not data.get("tls") or data["ca"] not in CA_FILES):
        raise ValueError(f"ca (with tls only) must be one of {sorted(CA_FILES)}")
    if "host" in data and not (isinstance(data["host"], str) and data["host"]):
        raise ValueError("host must be a non-empty string")
    proxy = data.get("proxy")
    if proxy is not None and proxy not in DEFAULT_PROXY_VARS:
        raise ValueError(f"proxy must be one of {sorted(DEFAULT_PROXY_VARS)}")
    for key in ("proxy_vars", "proxy_auth", "proxy_credentials", "proxy_mode", "expect_proxy"):
        if key in data and proxy is None:
            raise ValueError(f"{key} needs proxy")
    if "proxy_vars" in data and not (
        isinstance(data["proxy_vars"], list) and data["proxy_vars"]
        and all(v in PROXY_VARS for v in data["proxy_vars"])
    ):
        raise ValueError(f"proxy_vars must be a non-empty list of {list(PROXY_VARS)}")
    if "proxy_auth" in data and not (isinstance(data["proxy_auth"], str)
                                     and ":" in data["proxy_auth"]):
        raise ValueError('proxy_auth must be "USER:PASSWORD"')
    if "proxy_credentials" in data and not (isinstance(data["proxy_credentials"], str) and (
            data["proxy_credentials"] == "" or ":" in data["proxy_credentials"])):
        raise ValueError('proxy_credentials must be "USER:PASSWORD" or ""')
    if "proxy_mode" in data and data["proxy_mode"] not in PROXY_MODES:
        raise ValueError(f"proxy_mode must be one of {list(PROXY_MODES)}")
    if not isinstance(data.get("connect_hangs", False), bool):
        raise ValueError("connect_hangs must be true or false")
    if data.get("connect_hangs") and (data.get("tls") or "host" in data):
        raise ValueError("connect_hangs goes with neither tls nor host")
    if "no_proxy" in data and not isinstance(data["no_proxy"], str):
        raise ValueError("no_proxy must be a string")
    dns = data.get("dns")
    if dns is not None:
        if not (isinstance(dns, dict) and set(dns) <= {"delay_ms", "silent"}
                and isinstance(dns.get("delay_ms", 0), int) and dns.get("delay_ms", 0) >= 0
                and isinstance(dns.get("silent", False), bool)):
            raise ValueError('dns must be {"delay_ms": MS} or {"silent": true}')
        if data.get("tls") or data.get("connect_hangs") or data.get("proxy") is not None:
            raise ValueError("dns goes with neither tls, connect_hangs nor proxy")
    expect = data.get("expect_proxy")
    if expect is not None:
        if not isinstance(expect, list):
            raise ValueError("expect_proxy must be a list")
        for i, want in enumerate(expect):
            if isinstance(want, dict) and matcher(want) is None and (
                not set(want) <= {"request", "headers_contain", "headers_absent"}
                or not isinstance(want.get("headers_contain", {}), dict)
                or not isinstance(want.get("headers_absent", []), list)
            ):
                raise ValueError(f"expect_proxy[{i}]: an object holds request, "
                                 "headers_contain, headers_absent")
            if not isinstance(want, (str, dict)):
                raise ValueError(f"expect_proxy[{i}] must be a string, a matcher or an object")


def network_env(data: dict[str, Any], proxy: Proxy | None, port: int) -> dict[str, str]:
    """The network variables a case's drivers get (and no others): SSL_CERT_FILE for `tls`,
    the proxy's URL in the `proxy` variables, NO_PROXY/no_proxy for `no_proxy` ($PORT in it:
    the emulator's port)."""
    env: dict[str, str] = {}
    if data.get("tls"):
        env["SSL_CERT_FILE"] = str(CA_FILES[data.get("ca", "test")])
    if data.get("proxy") is not None and proxy is not None:
        credentials = data.get("proxy_credentials", data.get("proxy_auth"))
        url = proxy.url_with_credentials(credentials or None)
        for name in data.get("proxy_vars", DEFAULT_PROXY_VARS[data["proxy"]]):
            env[name] = url
    if "no_proxy" in data:
        env["NO_PROXY"] = env["no_proxy"] = data["no_proxy"].replace("$PORT", str(port))
    return env


def with_port(value: Any, port: int) -> Any:
    """value with "$PORT" in every string replaced by the emulator's port."""
    if isinstance(value, str):
        return value.replace("$PORT", str(port))
    if isinstance(value, dict):
        return {k: with_port(v, port) for k, v in value.items()}
    if isinstance(value, list):
        return [with_port(v, port) for v in value]
    return value


def check_proxy(expect: list[Any], log: list[dict[str, Any]], port: int) -> list[str]:
    """Checks the requests the proxy saw against `expect_proxy` ($PORT: the emulator's port)."""
    expect = with_port(expect, port)
    lines = [f"{e['method']} {e['target']}" for e in log]
    errors = []
    if len(log) != len(expect):
        errors.append(f"expected {len(expect)} proxy request(s), the proxy saw {len(log)}: "
                      + (", ".join(f"{l} ({e['status']})" for l, e in zip(lines, log)) or "none"))
    for i, (want, got, line) in enumerate(zip(expect, log, lines)):
        where = f"proxy request {i + 1}"
        if isinstance(want, dict) and matcher(want) is None:
            request = want.get("request")
            contain, absent = want.get("headers_contain", {}), want.get("headers_absent", [])
        else:
            request, contain, absent = want, {}, []
        if request is not None:
            errors += subset_errors(request, line, where)
        for name, value in contain.items():
            have = got["headers"].get(name.lower())
            if have is None:
                errors.append(f"{where} ({line}): header {name} missing")
            else:
                errors += subset_errors(value, have, f"{where} ({line}): header {name}")
        for name in absent:
            if name.lower() in got["headers"]:
                errors.append(f"{where} ({line}): header {name} present, expected absent")
    return errors


# ---- Cases -------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    path: Path  # the case.json
    data: dict[str, Any]
    expected: list[Any]
    problem: str = ""  # a malformed case fails in every language
    scenario: Any = None
    driver_path: Path | None = None  # the resolved case.json the drivers read
    # The first cell's export texts (language, texts): every other cell's must be the same.
    export_reference: tuple[str, list[str]] | None = None


RESOLVED_DIR = REPO / "build" / "conformance" / "cases"


def resolve_case_dir(value: Any, folder: Path) -> Any:
    """Returns value with "$CASE_DIR" in every string replaced by the case folder's absolute
    path, and "$MEDIA_DIR" by the generated test media's folder (generated if needed)."""
    if isinstance(value, str):
        if "$MEDIA_DIR" in value:
            try:
                value = value.replace("$MEDIA_DIR", str(test_media.ensure()))
            except ImportError as e:
                raise ValueError(f"$MEDIA_DIR: generating the test media needs Pillow ({e})") from None
        return value.replace("$CASE_DIR", str(folder.resolve()))
    if isinstance(value, dict):
        return {k: resolve_case_dir(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_case_dir(v, folder) for v in value]
    return value


def check_tools(tools: Any) -> None:
    """Raises ValueError when the case's `tools` is malformed (see README.md)."""
    if not isinstance(tools, list):
        raise ValueError("tools is not a list")
    names = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ValueError(f"tools[{i}] is not an object with a string name")
        if tool["name"] in names:
            raise ValueError(f"tools[{i}]: the name {tool['name']!r} is used twice")
        names.add(tool["name"])
        behavior = tool.get("behavior")
        if not isinstance(behavior, dict):
            raise ValueError(f"tools[{i}].behavior must be an object")
        ends = [k for k in behavior if k in ("return", "raise", "return_input", "return_parts")]
        if len(ends) > 1 or not (
            isinstance(behavior.get("return", ""), str) and isinstance(behavior.get("raise", ""), str)
            and behavior.get("return_input", True) is True
            and isinstance(behavior.get("return_parts", []), list)
        ):
            raise ValueError(f"tools[{i}].behavior ends with one of {{\"return\": TEXT}}, "
                             "{\"raise\": TEXT}, {\"return_input\": true} or "
                             "{\"return_parts\": [PART, ...]} (or none: it returns \"\")")
        for key, value in behavior.items():
            if key in ends:
                continue
            if key not in BEHAVIOR_STEPS or not BEHAVIOR_STEPS[key][1](value):
                what = BEHAVIOR_STEPS[key][0] if key in BEHAVIOR_STEPS else "unknown"
                raise ValueError(f"tools[{i}].behavior.{key}: {what}")


def _is_fraction(v: Any) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1)


# What a tool's behavior may do before it ends (README, "Tools in a case").
BEHAVIOR_STEPS: dict[str, tuple[str, Any]] = {
    "sleep_ms": ("must be a non-negative integer", steps.is_count),
    "rendezvous": ("must be [GROUP, COUNT]", lambda v: isinstance(v, list) and len(v) == 2
                   and isinstance(v[0], str) and steps.is_count(v[1]) and v[1] >= 1),
    "exclusive": ("must be true", lambda v: v is True),
    "progress": ("must be [[TEXT, FRACTION or null], ...]", lambda v: isinstance(v, list) and all(
        isinstance(r, list) and len(r) == 2 and isinstance(r[0], str) and _is_fraction(r[1]) for r in v)),
}


def order_progress(values: list[Any]) -> list[int]:
    """The order to compare a transcript's lines in: each run of consecutive tool_progress
    lines ordered by call id, stable (calls running at once report in any order between them,
    README "Tools in a case"). Returns the indexes of `values` in that order."""
    order = list(range(len(values)))
    i = 0
    while i < len(values):
        j = i
        while j < len(values) and isinstance(values[j], dict) and values[j].get("event") == "tool_progress":
            j += 1
        if j > i + 1:
            order[i:j] = sorted(range(i, j), key=lambda k: str(values[k].get("id")))
        i = max(j, i + 1)
    return order


def resolve_part(part: Any, where: str) -> Any:
    """A part of a turn or of `return_parts` as the drivers read it: a string (text) as is;
    {"media": NAME, "hint": H, "name": N} (hint and name optional) becomes {"media_path":
    ABS, "hint": H or "", "name": N or ""}, NAME being a file of media.py (generated here if
    needed). Raises ValueError when malformed."""
    if isinstance(part, str):
        return part
    if not (isinstance(part, dict) and isinstance(part.get("media"), str)
            and set(part) <= {"media", "hint", "name"}
            and all(isinstance(part.get(k, ""), str) for k in ("hint", "name"))):
        raise ValueError(f'{where}: a part is a string or {{"media": NAME, "hint": H, "name": N}}')
    try:
        path = test_media.path(part["media"])
    except KeyError as e:
        raise ValueError(f"{where}: {e.args[0]}") from None
    except ImportError as e:
        raise ValueError(f"{where}: generating the test media needs Pillow ({e})") from None
    return {"media_path": str(path), "hint": part.get("hint", ""), "name": part.get("name", "")}


def resolve_parts(parts: Any, where: str) -> list[Any]:
    if not isinstance(parts, list):
        raise ValueError(f"{where} must be a list of parts")
    return [resolve_part(p, f"{where}[{i}]") for i, p in enumerate(parts)]


def resolve_turns(turns: Any) -> list[Any]:
    """The turns as the drivers read them: a string, a {"$repeat": [S, N]} expanded, a list
    of parts (see resolve_part), or a step object (steps.py), checked and kept as is."""
    if not isinstance(turns, list):
        raise ValueError("turns must be a list")
    out = []
    for i, t in enumerate(turns):
        if isinstance(t, dict) and "input" in t:
            out.append(resolve_turn_object(t, f"turns[{i}]"))
        elif isinstance(t, list):
            out.append(resolve_parts(t, f"turns[{i}]"))
        elif steps.is_step(t):
            steps.check_step(t, f"turns[{i}]")
            out.append(t)
        else:
            out.append(expand_repeats(t))
    return out


def resolve_turn_object(t: dict[str, Any], where: str) -> dict[str, Any]:
    """A turn {"input", "options"?, "final"?} (README, "Turn objects"), its input resolved as a
    plain turn's."""
    if not set(t) <= {"input", "options", "final"}:
        raise ValueError(f'{where}: a turn object holds "input" and optionally "options", "final"')
    if not isinstance(t.get("options", {}), dict):
        raise ValueError(f"{where}.options must be an object")
    if t.get("final", "message") not in ("message", "json"):
        raise ValueError(f'{where}.final must be "message" or "json"')
    given = t["input"]
    if isinstance(given, list):
        given = resolve_parts(given, f"{where}.input")
    else:
        given = expand_repeats(given)
        if not isinstance(given, str):
            raise ValueError(f"{where}.input must be a string or a list of parts")
    return dict(t, input=given)


def resolve_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools as the drivers read them: the parts of a `return_parts` resolved."""
    out = []
    for i, tool in enumerate(tools):
        behavior = tool["behavior"]
        if "return_parts" in behavior:
            parts = resolve_parts(behavior["return_parts"], f"tools[{i}].behavior.return_parts")
            tool = dict(tool, behavior=dict(behavior, return_parts=parts))
        out.append(tool)
    return out


def make_fifos(paths: Any, folder: Path) -> None:
    """Creates the FIFOs a case's `fifos` names (paths in the case folder; git cannot hold
    a FIFO), each removed when the runner exits. Raises ValueError when malformed."""
    if not isinstance(paths, list) or not all(isinstance(p, str) and p and not p.startswith("/") for p in paths):
        raise ValueError("fifos must be a list of paths relative to the case folder")
    for p in paths:
        path = folder / p
        if path.is_fifo():
            continue
        if path.exists() or path.is_symlink():
            raise ValueError(f"fifos: {p} exists and is not a FIFO")
        os.mkfifo(path)
        atexit.register(path.unlink, missing_ok=True)


def resolve_replays(scenario: Any, folder: Path) -> Any:
    """Returns the scenario with every response's `replay` path made absolute, relative to
    the case folder."""
    if not isinstance(scenario, dict):
        return scenario
    out = dict(scenario)
    responses = []
    for r in scenario.get("responses", []):
        if isinstance(r, dict) and isinstance(r.get("replay"), str):
            r = dict(r)
            r["replay"] = str((folder / r["replay"]).resolve())
        responses.append(r)
    if "responses" in scenario:
        out["responses"] = responses
    return out


def load_case(folder: Path) -> Case:
    path = folder / "case.json"
    case = Case(folder.name, path, {}, [])
    try:
        case.data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(case.data, dict):
            raise ValueError("case.json is not an object")
        for key in ("config", "turns", "script"):
            if key not in case.data:
                raise ValueError(f"case.json has no {key!r}")
        case.scenario = expand_repeats(resolve_replays(case.data["script"], folder))
        langs = case.data.get("languages", LANGUAGES)
        if not isinstance(langs, list) or not langs or any(l not in LANGUAGES for l in langs):
            raise ValueError(f"languages must be a non-empty list of {LANGUAGES}")
        if "cancel_after_ms" in case.data and not (
            isinstance(case.data["cancel_after_ms"], int)
            and not isinstance(case.data["cancel_after_ms"], bool)
            and case.data["cancel_after_ms"] >= 0
        ):
            raise ValueError("cancel_after_ms must be a non-negative integer")
        cancel_turn = case.data.get("cancel_turn", 0)
        if not (isinstance(cancel_turn, int) and not isinstance(cancel_turn, bool)
                and 0 <= cancel_turn < len(case.data["turns"])
                and ("cancel_turn" not in case.data or "cancel_after_ms" in case.data)):
            raise ValueError("cancel_turn (with cancel_after_ms) must be the index of a turn")
        on_error = case.data.get("on_error")
        if on_error is not None and (
            not isinstance(on_error, dict) or not set(on_error) <= {"set_config", "reopen"}
            or not isinstance(on_error.get("set_config", {}), dict)
            or not isinstance(on_error.get("reopen", False), bool)
        ):
            raise ValueError('on_error must be {"set_config": {...}, "reopen": true|false}')
        if "end_early" in case.data:
            check_end_early(case.data["end_early"], len(case.data["turns"]))
        for key in ("print_conversation", "print_error_detail", "print_request_ids"):
            if not isinstance(case.data.get(key, False), bool):
                raise ValueError(f"{key} must be true or false")
        if "tools" in case.data:
            check_tools(case.data["tools"])
        check_network_options(case.data)
        make_fifos(case.data.get("fifos", []), folder)
        # The drivers read a copy of case.json whose config has $CASE_DIR resolved.
        # A turn may be written {"$repeat": [S, N]} too (a large user message).
        # A turn may be a list of parts, whose media the drivers read from media_path.
        resolved = dict(case.data, config=resolve_case_dir(case.data["config"], folder),
                        turns=resolve_turns(case.data["turns"]))
        if "tools" in case.data:
            resolved["tools"] = resolve_tools(case.data["tools"])
        RESOLVED_DIR.mkdir(parents=True, exist_ok=True)
        case.driver_path = RESOLVED_DIR / f"{folder.name}.json"
        case.driver_path.write_text(json.dumps(resolved, indent=2, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
        for r in case.scenario.get("responses", []):
            if isinstance(r, dict) and "replay" in r and not Path(r["replay"]).is_file():
                raise ValueError(f"replay file not found: {r['replay']}")
        lines = json_lines((folder / "expected.jsonl").read_text(encoding="utf-8"))
        case.expected = [json.loads(l) for l in lines if l.strip()]
        case.expected = [case.expected[k] for k in order_progress(case.expected)]
        conversation = None
        if case.data.get("print_conversation"):
            # The conversation line comes last, after the connections line.
            if not case.expected or case.expected[-1].get("event") != "conversation":
                raise ValueError('print_conversation: the last line of expected.jsonl must be {"event": "conversation", ...}')
            conversation = case.expected.pop()
        if "expect_connections" in case.data:
            case.expected.append(connections_line(case.data["expect_connections"]))
        if conversation is not None:
            case.expected.append(conversation)
    except (OSError, ValueError) as e:
        case.problem = f"bad case: {e}"
    return case


END_EARLY_WAYS = ("close_after_deltas", "drop_after_deltas", "free_blocked_after_ms")


def check_end_early(end_early: Any, n_turns: int) -> None:
    """`end_early`: {"turn": T (default 0), WAY: N} with one WAY of END_EARLY_WAYS (a count of
    deltas from 1, or milliseconds). Raises ValueError when malformed."""
    def count(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0
    if not isinstance(end_early, dict):
        raise ValueError("end_early must be an object")
    ways = [k for k in end_early if k in END_EARLY_WAYS]
    if len(ways) != 1 or not set(end_early) <= {"turn", *END_EARLY_WAYS}:
        raise ValueError(f'end_early must hold "turn" (optional) and one of {", ".join(END_EARLY_WAYS)}')
    way = ways[0]
    if not count(end_early[way]) or (way != "free_blocked_after_ms" and end_early[way] < 1):
        raise ValueError(f"end_early.{way} must be a {'count from 1' if way != 'free_blocked_after_ms' else 'non-negative integer'}")
    turn = end_early.get("turn", 0)
    if not count(turn) or turn >= n_turns:
        raise ValueError("end_early.turn must be the index of a turn")


def connections_line(expect: Any) -> dict[str, Any]:
    """The line a driver prints after the turns when the case has `expect_connections`: the
    agent's connection counters (opened, reused), which must be these."""
    if not (isinstance(expect, dict) and set(expect) == {"opened", "reused"} and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in expect.values())):
        raise ValueError('expect_connections must be {"opened": N, "reused": M}')
    return {"event": "connections", **expect}


def json_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text: cut at LF only. str.splitlines() would also cut at
    U+2028, U+2029, U+0085 and other characters a JSON string holds as they are."""
    return text.split("\n")


def find_cases(cases_dir: Path, filters: list[str]) -> list[Case]:
    folders = sorted(p.parent for p in cases_dir.glob("*/case.json"))
    if filters:
        folders = [f for f in folders if any(k in f.name for k in filters)]
    return [load_case(f) for f in folders]


# ---- Checking requests -------------------------------------------------------------------


MATCHERS = ("$text", "$prefix", "$contains", "$json", "$repeat", "$range", "$absent",
            "$media_sha256", "$media_size", "$media_base64_len", "$image")
MEDIA_MATCHERS = ("$media_sha256", "$media_size", "$media_base64_len", "$image")
IMAGE_KEYS = {"format", "fits", "aspect_of", "alpha", "size"}


def decoded_media(got: Any) -> bytes | str:
    """The bytes a base64 string or a `data:<type>;base64,<data>` URL holds, or why not."""
    if not isinstance(got, str):
        return "expected base64 text or a data URL"
    text = got
    if text.startswith("data:"):
        head, sep, text = text.partition(",")
        if not sep or not head.endswith(";base64"):
            return "expected a data URL with ;base64,"
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return "expected base64 text"


def image_error(want: dict[str, Any], data: bytes) -> str | None:
    """Why the image `data` does not satisfy the $image matcher's `want`, or None."""
    from PIL import Image  # only a case with media gets here

    if not set(want) <= IMAGE_KEYS:
        return f"$image takes {sorted(IMAGE_KEYS)}, got {sorted(want)}"
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception as e:  # noqa: BLE001  (any decoding failure is the answer)
        return f"expected an image, the bytes do not decode: {e}"
    fmt = (image.format or "").lower()
    w, h = image.size
    if "format" in want and fmt != want["format"]:
        return f"expected a {want['format']} image, got {fmt} ({w}x{h})"
    if "fits" in want and (w > want["fits"] or h > want["fits"]):
        return f"expected an image within {want['fits']}x{want['fits']}, got {w}x{h}"
    if "size" in want and [w, h] != list(want["size"]):
        return f"expected a {want['size'][0]}x{want['size'][1]} image, got {w}x{h}"
    if "aspect_of" in want:
        with Image.open(test_media.path(want["aspect_of"])) as original:
            ow, oh = original.size
        # Within one pixel: each side as the other side and the original's ratio give it.
        if abs(h - w * oh / ow) > 1 or abs(w - h * ow / oh) > 1:
            return (f"expected the aspect ratio of {want['aspect_of']} ({ow}x{oh}) within a "
                    f"pixel, got {w}x{h}")
    if want.get("alpha"):
        if "A" not in image.getbands():
            return f"expected an alpha channel, got mode {image.mode}"
        if image.getchannel("A").getextrema()[0] == 255:
            return "expected transparent pixels, the alpha channel is opaque everywhere"
    return None


def media_matcher_error(kind: str, arg: Any, got: Any, shown: str) -> str | None:
    """The media matchers (see matcher_error); NAME is a file of media.py."""
    try:
        if kind == "$image":
            if not isinstance(arg, dict):
                return f"$image takes an object of {sorted(IMAGE_KEYS)}"
            data = decoded_media(got)
            if isinstance(data, str):
                return f"{data}, got {shown}"
            return image_error(arg, data)
        original = test_media.path(arg).read_bytes()
    except (KeyError, ImportError, OSError) as e:
        return f"{kind}: {e}"
    if kind == "$media_sha256":
        data = decoded_media(got)
        if isinstance(data, str):
            return f"{data}, got {shown}"
        if hashlib.sha256(data).digest() != hashlib.sha256(original).digest():
            return (f"expected the bytes of {arg} ({len(original)} bytes), got {len(data)} "
                    "other bytes")
        return None
    size = len(original) if kind == "$media_size" else 4 * ((len(original) + 2) // 3)
    if got != size or isinstance(got, bool):
        what = "size" if kind == "$media_size" else "base64 length"
        return f"expected the {what} of {arg} ({size}), got {shown}"
    return None


def repeat_arg(arg: Any) -> tuple[str, int]:
    """The [S, N] of a {"$repeat": [S, N]}; raises ValueError when malformed."""
    if (not isinstance(arg, list) or len(arg) != 2 or not isinstance(arg[0], str)
            or not isinstance(arg[1], int) or isinstance(arg[1], bool) or arg[1] < 0):
        raise ValueError(f'$repeat takes [STRING, COUNT], got {json.dumps(arg)}')
    return arg[0], arg[1]


def expand_repeats(value: Any) -> Any:
    """Returns value with every {"$repeat": [S, N]} replaced by S repeated N times (the
    scenario a case posts to the emulator)."""
    if isinstance(value, dict):
        if len(value) == 1 and "$repeat" in value:
            text, n = repeat_arg(value["$repeat"])
            return text * n
        return {k: expand_repeats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_repeats(v) for v in value]
    return value


def matcher(want: Any) -> str | None:
    """The matcher an expected value is ({"$prefix": S}, ...), or None for a plain value."""
    if isinstance(want, dict) and len(want) == 1 and next(iter(want)) in MATCHERS:
        return next(iter(want))
    return None


def matcher_error(kind: str, arg: Any, got: Any) -> str | None:
    """Why `got` does not match the matcher {kind: arg}, or None when it does.

    - {"$text": S}: a message content whose text is S (a string, or text blocks joined);
    - {"$prefix": S}: a string that starts with S ({"$prefix": ""}: any string);
    - {"$contains": S}: a string that contains S;
    - {"$json": V}: a string holding JSON text whose value equals V (keys in any order,
      any spacing);
    - {"$repeat": [S, N]}: exactly S repeated N times;
    - {"$range": [A, B]}: an integer from A to B;
    - {"$absent": true}: only in body_contains (see subset_errors): never matches a value;
    - {"$media_sha256": NAME}: base64 text or a data URL holding exactly the bytes of the
      generated test file NAME (media.py);
    - {"$media_size": NAME}, {"$media_base64_len": NAME}: the integer size of file NAME, of
      its base64 text;
    - {"$image": {"format", "fits", "aspect_of", "alpha", "size"}}: base64 text or a data URL
      holding an image that decodes (Pillow), of that format, within fits x fits, of the
      aspect ratio of file NAME within a pixel, with transparent pixels, of that size."""
    shown = json.dumps(got, ensure_ascii=False)
    if len(shown) > 200:
        shown = shown[:200] + f"... ({len(shown)} characters)"
    if kind in MEDIA_MATCHERS:
        return media_matcher_error(kind, arg, got, shown)
    if kind == "$absent":
        return f"expected no such key, got {shown}"
    if kind == "$range":
        lo, hi = arg
        if not isinstance(got, int) or isinstance(got, bool) or not lo <= got <= hi:
            return f"expected an integer from {lo} to {hi}, got {shown}"
        return None
    if kind == "$text":
        if message_text(got) != arg:
            return f"expected the text {json.dumps(arg, ensure_ascii=False)}, got {shown}"
        return None
    if not isinstance(got, str):
        return f"expected a string, got {shown}"
    if kind == "$prefix" and not got.startswith(arg):
        return f"expected a string starting with {json.dumps(arg, ensure_ascii=False)}, got {shown}"
    if kind == "$contains" and arg not in got:
        return f"expected a string containing {json.dumps(arg, ensure_ascii=False)}, got {shown}"
    if kind == "$repeat":
        text, n = repeat_arg(arg)
        if got != text * n:
            return f"expected {json.dumps(text, ensure_ascii=False)} repeated {n} times, got {shown}"
    if kind == "$json":
        try:
            value = json.loads(got)
        except ValueError:
            return f"expected JSON text, got {shown}"
        if canon(value) != canon(arg):
            return f"expected JSON text of {canon(arg)}, got {shown}"
    return None


def subset_errors(want: Any, got: Any, where: str) -> list[str]:
    """Where `want` is not a recursive subset of `got`: objects by key, lists element by
    element with the same length, everything else by equality (true is not 1). A matcher
    ({"$text": S}, {"$prefix": S}, {"$contains": S}, {"$json": V}; see matcher_error)
    matches the value in its place."""
    kind = matcher(want)
    if kind is not None:
        problem = matcher_error(kind, want[kind], got)
        return [f"{where}: {problem}"] if problem else []
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{where}: expected an object, got {json.dumps(got)}"]
        errors = []
        for k, v in want.items():
            if matcher(v) == "$absent":
                if k in got:
                    errors.append(f"{where}.{k}: present ({json.dumps(got[k])[:200]}), expected absent")
                continue
            if k not in got:
                errors.append(f"{where}.{k}: missing")
            else:
                errors += subset_errors(v, got[k], f"{where}.{k}")
        return errors
    if isinstance(want, list):
        if not isinstance(got, list):
            return [f"{where}: expected a list, got {json.dumps(got)}"]
        if len(want) != len(got):
            return [f"{where}: expected {len(want)} elements, got {len(got)}: {json.dumps(got)}"]
        errors = []
        for i, (w, g) in enumerate(zip(want, got)):
            errors += subset_errors(w, g, f"{where}[{i}]")
        return errors
    if type(want) is not type(got) and not (
        isinstance(want, (int, float)) and isinstance(got, (int, float))
        and not isinstance(want, bool) and not isinstance(got, bool)
    ):
        return [f"{where}: expected {json.dumps(want)}, got {json.dumps(got)}"]
    if want != got:
        return [f"{where}: expected {json.dumps(want)}, got {json.dumps(got)}"]
    return []


def message_text(content: Any) -> str | None:
    """The text of a message content as both providers accept it: a string, or a list of
    text blocks ({"type": "text", "text": ...}) whose texts are joined. None otherwise."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in content
    ):
        return "".join(b["text"] for b in content)
    return None


def header_map(headers: Any) -> dict[str, list[str]]:
    """The request's headers as {lower-case name: [values]}, from an object or a list of pairs."""
    out: dict[str, list[str]] = {}
    items = headers.items() if isinstance(headers, dict) else (headers or [])
    for item in items:
        name, value = item[0], item[1]
        values = value if isinstance(value, list) else [value]
        out.setdefault(str(name).lower(), []).extend(str(v) for v in values)
    return out


def check_requests(expect: list[dict[str, Any]], log: list[dict[str, Any]]) -> list[str]:
    if len(log) != len(expect):
        summary = ", ".join(f"{r.get('method')} {r.get('path')}" for r in log) or "none"
        errors = [f"expected {len(expect)} request(s), the emulator received {len(log)}: {summary}"]
    else:
        errors = []
    for i, (want, got) in enumerate(zip(expect, log)):
        where = f"request {i + 1}"
        for key in ("method", "path", "connection"):
            if key in want and want[key] != got.get(key):
                errors.append(f"{where}: {key} is {got.get(key)!r}, expected {want[key]!r}")
        body = got.get("body")
        if isinstance(body, str):
            try:
                body = json.loads(body) if body.strip() else None
            except ValueError:
                pass
        if "body_contains" in want:
            errors += subset_errors(want["body_contains"], body, f"{where} body")
        if "headers_contain" in want:
            headers = header_map(got.get("headers"))
            for name, value in want["headers_contain"].items():
                have = headers.get(name.lower())
                if have is None:
                    errors.append(f"{where}: header {name} missing")
                elif all(subset_errors(value, one, f"{where}: header {name}") for one in have):
                    errors.append(f"{where}: header {name} is {have!r}, expected {value!r}")
        for name in want.get("headers_absent", []):
            if name.lower() in header_map(got.get("headers")):
                errors.append(f"{where}: header {name} present, expected absent")
    return errors


# ---- Running one cell --------------------------------------------------------------------


def matcher_used(value: Any) -> bool:
    if matcher(value) is not None:
        return True
    if isinstance(value, dict):
        return any(matcher_used(v) for v in value.values())
    if isinstance(value, list):
        return any(matcher_used(v) for v in value)
    return False


@dataclass
class Result:
    ok: bool
    report: list[str] = field(default_factory=list)  # lines printed when it fails (or -v)


def canon(obj: Any) -> str:
    return json.dumps(whole_numbers(obj), sort_keys=True, ensure_ascii=False)


def whole_numbers(obj: Any) -> Any:
    """obj with every float that is a whole number written as an integer: a fraction or a
    retry_after of 1 is the same number whether a driver prints 1 or 1.0."""
    if isinstance(obj, float) and obj.is_integer() and abs(obj) < 2 ** 53:
        return int(obj)
    if isinstance(obj, dict):
        return {k: whole_numbers(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [whole_numbers(v) for v in obj]
    return obj


def line_matches(want: Any, got: Any) -> bool:
    """Whether a transcript line equals the expected one: parsed JSON values compared exactly
    (same keys, same list lengths, true is not 1), except that a matcher in the expected line
    ({"$prefix": S}, {"$contains": S}, ...) stands for any value it matches."""
    kind = matcher(want)
    if kind is not None:
        return matcher_error(kind, want[kind], got) is None
    if isinstance(want, dict):
        return (isinstance(got, dict) and want.keys() == got.keys()
                and all(line_matches(want[k], got[k]) for k in want))
    if isinstance(want, list):
        return (isinstance(got, list) and len(want) == len(got)
                and all(line_matches(w, g) for w, g in zip(want, got)))
    return canon(want) == canon(got)


REQUEST_LOG = REPO / "build" / "conformance-requests.jsonl"
REQUEST_LOG_LOCK = threading.Lock()


def run_driver(argv: list[str], env: dict[str, str]) -> tuple[bytes, bytes, int | None, bool]:
    """Runs a driver: its stdout, stderr, exit status (None when it timed out), and whether it
    timed out."""
    try:
        proc = subprocess.run(argv, cwd=REPO, env=driver_env(env), capture_output=True,
                              timeout=DRIVER_TIMEOUT_S, stdin=subprocess.DEVNULL)
        return proc.stdout, proc.stderr, proc.returncode, False
    except subprocess.TimeoutExpired as e:
        return e.stdout or b"", e.stderr or b"", None, True


def run_cell(case: Case, driver: Driver, emulator: Emulator, verbose: bool,
             request_log: Any = None, network: Network | None = None) -> Result:
    if case.problem:
        return Result(False, [case.problem])
    if driver.argv is None:
        return Result(False, [f"driver unavailable: {driver.problem.splitlines()[0]}"])
    data = case.data
    proxy = None
    if data.get("tls") or data.get("proxy") is not None:
        if network is None:
            raise RuntimeError("a network case (tls, proxy) needs the runner's Network")
        if data.get("tls"):
            emulator = network.tls_emulator()
        if data.get("proxy") is not None:
            proxy = network.proxy()
            proxy.auth = data.get("proxy_auth")
            proxy.mode = data.get("proxy_mode", "forward")
            proxy.clear()
    scheme = "https" if data.get("tls") else "http"
    host = data.get("host", "localhost" if data.get("tls") else "127.0.0.1")
    base_url = f"{scheme}://{host}:{emulator.port}"
    if data.get("connect_hangs"):
        if network is None:
            raise RuntimeError("connect_hangs needs the runner's Network")
        base_url = f"http://127.0.0.1:{network.hanging_listener().port}"
    env = network_env(data, proxy, emulator.port)
    if data.get("dns") is not None:
        if network is None:
            raise RuntimeError("dns needs the runner's Network")
        nameserver = network.nameserver()
        nameserver.delay_ms = data["dns"].get("delay_ms", 0)
        nameserver.silent = data["dns"].get("silent", False)
        env["PANTO_RESOLV_CONF"] = str(network.resolv_conf)
        base_url = f"http://{data.get('host', DNS_HOST)}:{emulator.port}"
    # Variables the case sets ("env"), e.g. ANTHROPIC_BASE_URL: "$BASE_URL" (req_env_base_url_*),
    # or the emulator by another name: "http://localhost:$PORT/v1" (req_env_switch_provider).
    for name, value in data.get("env", {}).items():
        env[name] = (value.replace("$BASE_URL", base_url).replace("$PORT", str(emulator.port))
                     .replace("$CASE_DIR", str(case.path.parent.resolve())))
    emulator.load(case.scenario)
    start = time.monotonic()
    with steps.SessionDir() as session_dir, \
            steps.McpHttpServer(data.get("mcp_http_server"), REPO) as mcp_port:
        case_file = case.driver_path
        if steps.uses_session_dir(case.data) or mcp_port:
            case_file = steps.cell_case_file(case.driver_path, driver.lang, session_dir, mcp_port)
        argv = driver.argv + [str(case_file), base_url]
        stdout, stderr, rc, timed_out = run_driver(argv, env)
        # A case whose driver kills itself (an approval answered "kill") goes on in a second
        # process, on the same session folder, with the case's `after_kill` (README.md, "A
        # process killed while a call waits").
        if "after_kill" in data and not timed_out:
            if rc != -signal.SIGKILL:
                stderr += f"\nafter_kill: the driver exited with status {rc}, not killed by SIGKILL\n".encode()
                rc = rc or 1
            else:
                second = steps.after_kill_case_file(case_file, driver.lang)
                more_out, more_err, rc, timed_out = run_driver(driver.argv + [str(second), base_url], env)
                stdout, stderr = stdout + more_out, stderr + more_err
    elapsed = time.monotonic() - start
    out_text = stdout.decode("utf-8", errors="replace")
    err_text = stderr.decode("utf-8", errors="replace")

    report: list[str] = []
    got_values: list[Any] = []
    got_lines: list[str] = []
    for line in json_lines(out_text):
        if not line.strip():
            continue
        try:
            got_values.append(json.loads(line))
            got_lines.append(canon(got_values[-1]))
        except ValueError:
            got_values.append(None)
            got_lines.append("NOT JSON: " + line)
    order = order_progress(got_values)
    got_values = [got_values[k] for k in order]
    got_lines = [got_lines[k] for k in order]
    # An export line's raw text is compared as parsed JSON, and byte for byte across languages.
    raws = steps.parse_exports(got_values)
    if raws:
        got_lines = [canon(v) if isinstance(v, dict) and v.get("event") == "export" else l
                     for v, l in zip(got_values, got_lines)]
    # An expected line with matchers is shown as the line it matched, so the diff shows only
    # real differences.
    want_lines = [
        got_lines[i] if i < len(got_lines) and got_lines[i][:1] == "{" and matcher_used(o)
        and line_matches(o, got_values[i]) else canon(o)
        for i, o in enumerate(case.expected)
    ]

    if timed_out:
        report.append(f"driver timed out after {DRIVER_TIMEOUT_S:.0f}s")
    elif rc != 0:
        report.append(f"driver exited with status {rc}")
    if raws and not timed_out:
        if case.export_reference is None:
            case.export_reference = (driver.lang, raws)
        else:
            report += steps.export_differences(case.export_reference, driver.lang, raws)
    if got_lines != want_lines:
        diff = difflib.unified_diff(want_lines, got_lines, "expected", "got", lineterm="", n=2)
        report += [l if len(l) <= 2000 else l[:2000] + f"... ({len(l)} characters)"
                   for l in list(diff)[:60]]
    if not timed_out:
        try:
            log = emulator.requests()
            if "expect_requests" in case.data:
                report += check_requests(case.data["expect_requests"], log)
            # Whatever the case did, every request's conversation is one a provider takes.
            if not case.data.get("invalid_conversation_sent"):
                for n, r in enumerate(log):
                    report += [f"request {n + 1}: {p}" for p in conversation_shape.problems(r)]
            if request_log is not None:
                lines = []
                for r in log:
                    path = str(r.get("path", ""))
                    provider = ("anthropic" if path.startswith("/v1/messages")
                                else "openai" if path.startswith("/v1/chat/completions")
                                else "openai-responses" if path.startswith("/v1/responses")
                                else "gemini" if ":streamGenerateContent" in path
                                else "bedrock" if path.endswith("/converse-stream")
                                else "")
                    lines.append(json.dumps(
                        {"case": case.name, "lang": driver.lang, "provider": provider,
                         "method": r.get("method"), "path": path, "body": r.get("body")},
                        ensure_ascii=False) + "\n")
                with REQUEST_LOG_LOCK:
                    request_log.write("".join(lines))
        except RuntimeError as e:
            report.append(str(e))
        if proxy is not None and "expect_proxy" in data:
            report += check_proxy(data["expect_proxy"], proxy.requests(), emulator.port)
    ok = not report
    if (not ok or verbose) and err_text.strip():
        report += ["driver stderr:"] + ["    " + l for l in err_text.strip().splitlines()[-15:]]
    if verbose:
        command = " ".join([f"{k}={v}" for k, v in env.items()] + argv)
        report.insert(0, f"({elapsed * 1000:.0f} ms) {command}")
    return Result(ok, report)


def run_cases(cases: list[Case], languages: list[str], drivers: dict[str, Driver], verbose: bool,
              request_log: Any, jobs: int) -> dict[str, dict[str, str]]:
    """Runs every cell, `jobs` cases at once. A worker has its own emulator and network (the
    emulator holds one scenario and one request log at a time); a case's languages run in
    turn on one worker, as the first language's export is the others' reference. A cell's
    report is printed whole."""
    results: dict[str, dict[str, str]] = {}
    todo: queue.Queue[Case] = queue.Queue()
    for case in cases:
        todo.put(case)
    print_lock = threading.Lock()

    def work(k: int) -> None:
        try:
            emulator: Emulator | None = Emulator()
        except (OSError, RuntimeError) as e:
            with print_lock:
                print(f"cannot start the emulator: {e}")
            emulator = None
        network = Network(RESOLV_CONF if k == 0 else RESOLV_CONF.with_name(f"resolv-{k}.conf"))
        try:
            while True:
                try:
                    case = todo.get_nowait()
                except queue.Empty:
                    return
                row: dict[str, str] = {}
                for lang in languages:
                    if lang not in case.data.get("languages", LANGUAGES):
                        row[lang] = "n/a"
                        continue
                    if emulator is None:
                        res = Result(False, ["no emulator"])
                    else:
                        try:
                            res = run_cell(case, drivers[lang], emulator, verbose, request_log,
                                           network)
                        except (OSError, RuntimeError, ValueError) as e:
                            res = Result(False, [f"runner error: {e}"])
                    row[lang] = "pass" if res.ok else "fail"
                    if not res.ok or verbose:
                        with print_lock:
                            print(f"{'PASS' if res.ok else 'FAIL'} {case.name} [{lang}]")
                            for line in res.report:
                                print("    " + line)
                            sys.stdout.flush()
                results[case.name] = row
        finally:
            if emulator is not None:
                emulator.close()
            network.close()

    if jobs == 1:
        work(0)
    else:
        workers = [threading.Thread(target=work, args=(k,), name=f"conformance-{k}")
                   for k in range(jobs)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    return results


# ---- Main --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=Path, default=CASES_DIR, help="folder of case folders")
    ap.add_argument("--lang", action="append", choices=LANGUAGES,
                    help="a language to run (repeatable; default: all)")
    ap.add_argument("-k", action="append", default=[], metavar="SUBSTR",
                    help="run only the cases whose name contains SUBSTR (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="report every cell")
    ap.add_argument("--async", dest="async_mode", action="store_true",
                    help="drive every case through the stepped (non-blocking) path, in the "
                         f"languages that have one ({', '.join(ASYNC_LANGUAGES)})")
    ap.add_argument("-j", "--jobs", type=int, default=int(os.environ.get("CONFORMANCE_JOBS", "1")),
                    help="cases run at once, each worker with its own emulator and network "
                         "(default: $CONFORMANCE_JOBS or 1); a case's languages run in turn")
    args = ap.parse_args(argv)

    languages = list(dict.fromkeys(args.lang or LANGUAGES))
    if args.async_mode:
        for lang in languages:
            if lang not in ASYNC_LANGUAGES:
                print(f"{lang}: no --async mode in its driver, not run")
        languages = [lang for lang in languages if lang in ASYNC_LANGUAGES]
        if not languages:
            return 1
    cases = find_cases(args.cases, args.k)
    if not cases:
        print(f"no cases in {args.cases}" + (f" matching {args.k}" if args.k else ""))
        return 1

    drivers = {}
    for lang in languages:
        drivers[lang] = prepare_driver(lang)
        if args.async_mode and drivers[lang].argv is not None:
            drivers[lang].argv.append("--async")
        if drivers[lang].argv is None:
            print(f"{lang}: driver unavailable: {drivers[lang].problem}")

    # The async mode keeps its own files: the blocking run's are what test_request_fidelity reads.
    suffix = "-async" if args.async_mode else ""
    request_log_path = REQUEST_LOG.with_name(f"conformance{suffix}-requests.jsonl")
    request_log_path.parent.mkdir(parents=True, exist_ok=True)
    jobs = max(1, min(args.jobs, len(cases)))
    with request_log_path.open("w", encoding="utf-8") as request_log:
        results = run_cases(cases, languages, drivers, args.verbose, request_log, jobs)
    # (A case a worker did not finish, its thread having died, counts as failed.)
    ordered = {case.name: results.get(case.name, {"runner": "fail"}) for case in cases}
    passed = sum(1 for row in ordered.values() for r in row.values() if r == "pass")
    failed = sum(1 for row in ordered.values() for r in row.values() if r == "fail")

    out = REPO / "build" / f"conformance{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"languages": languages, "cases": ordered}, indent=2) + "\n")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
