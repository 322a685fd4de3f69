"""What every reliability test shares: counts, the secret sweep, snapshots, the command.

The counts are what ``docs/reliability.md`` reports: each test adds what it really did
(inputs generated, escapes tried, processes killed, privilege pairs checked), and the
suite prints the totals at the end of the run (and writes them as JSON to the file named
by ``JANITO_RELIABILITY_COUNTS`` when that variable is set).

The secret sweep sees every result, error, log line, report event and command output the
suite produces: each piece of text goes through ``SWEEP.check`` as it appears, and any
configured secret value found in it is recorded with where it was seen.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import stat
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from helpers.distributions import clean_env  # noqa: E402

from janito_core import hookimpl  # noqa: E402

# -- counts -----------------------------------------------------------------------------

COUNTS: Counter[str] = Counter()
FAULT_KINDS: set[str] = set()
_count_lock = threading.Lock()


def count(key: str, n: int = 1) -> None:
    with _count_lock:
        COUNTS[key] += n


def fault_kind(name: str) -> None:
    with _count_lock:
        FAULT_KINDS.add(name)


def counts_report() -> dict[str, Any]:
    data: dict[str, Any] = dict(sorted(COUNTS.items()))
    data["fault kinds"] = len(FAULT_KINDS)
    data["fault kind names"] = sorted(FAULT_KINDS)
    return data


# -- secrets ----------------------------------------------------------------------------

# Values no tool output could hold by chance. The OneDrive tokens are set once the
# identity server has started (they go into an msal token cache).
SECRETS: dict[str, str] = {
    "gmail_username": "reliability@example.test",
    "gmail_password": "Gm-pw-4c0ffee5ca1ab1e-rel",
    "onedrive_client_id": "0b5e7c1d-rel0-4aa1-9f00-5ecre7c1d000",
    # quotes, a backslash, a slash, a plus, a space and a non-ASCII letter: its JSON-escaped,
    # URL-encoded and base64 forms all differ from it
    "mcp_token": 'mcp-tok-"9a8b\\7c6d/5e4f+3a2b é-rel',
    "api_key": "sk-rel-0f1e2d3c4b5a69788796a5b4",
}
ONEDRIVE_ACCESS_TOKEN = "AT-rel-1f2e3d4c5b6a7988a7b6c5d4e3f2a1b0"
ONEDRIVE_REFRESH_TOKEN = "RT-rel-0a1b2c3d4e5f60718293a4b5c6d7e8f9"
NOT_SECRET = {"gmail_username", "onedrive_client_id"}


def secret_values() -> list[str]:
    """Every form in which a configured secret could leak, longest first: as it is,
    JSON-escaped, base64 (standard and URL-safe, padded or not) and URL-encoded."""
    from urllib.parse import quote, quote_plus

    raw = [v for k, v in SECRETS.items() if k not in NOT_SECRET and k != "onedrive_token_cache"]
    raw += [ONEDRIVE_ACCESS_TOKEN, ONEDRIVE_REFRESH_TOKEN]
    forms = set(raw)
    user = SECRETS["gmail_username"]
    password = SECRETS["gmail_password"]
    for value in raw:
        forms.update((json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]))
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(value.encode()).decode()
            forms.update((encoded, encoded.rstrip("=")))
        forms.update((quote(value, safe=""), quote(value), quote_plus(value)))
    # what AUTH PLAIN (IMAP and SMTP) sends on the wire
    forms.add(base64.b64encode(f"\0{user}\0{password}".encode()).decode())
    return sorted(forms, key=len, reverse=True)


def secret_env() -> dict[str, str]:
    """The JANITO_SECRET_* variables of every configured secret."""
    return {f"JANITO_SECRET_{name.upper()}": value for name, value in SECRETS.items()}


class Sweep:
    """Looks for secret values in every piece of text the suite sees."""

    def __init__(self) -> None:
        self.hits: list[tuple[str, str, str]] = []  # (where, secret, excerpt)
        self.excused: list[tuple[str, str, str]] = []  # hits of tests marked xfail
        self.items = 0
        self._lock = threading.Lock()
        self._values: list[str] | None = None

    def reset_values(self) -> None:
        self._values = None

    def check(self, value: Any, where: str) -> list[str]:
        """Record (and return) the secrets found in ``value`` (text or JSON data)."""
        if self._values is None:
            self._values = secret_values()
        if isinstance(value, (bytes, bytearray)):
            text = bytes(value).decode("utf-8", "replace")
        elif isinstance(value, str):
            text = value
        else:
            try:
                text = json.dumps(value, ensure_ascii=False, default=repr)
            except (ValueError, RecursionError):
                text = repr(value)
        found = [s for s in self._values if s in text]
        with self._lock:
            self.items += 1
            for secret in found:
                at = text.index(secret)
                excerpt = text[max(0, at - 80): at + len(secret) + 40]
                self.hits.append((where, secret, excerpt))
        return found


SWEEP = Sweep()


class SweepHandler(logging.Handler):
    """A logging handler that sweeps every record (at every level)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records = 0

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:
            text = f"{record.msg!r} {record.args!r}"
        if record.exc_info:
            try:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            except Exception:
                pass
        self.records += 1
        count("secret sweep: log records")
        SWEEP.check(text, f"log {record.name}")


class ReportCollector:
    """A ``janito_report`` hook implementation that sweeps every report event."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    @hookimpl
    def janito_report(self, event: Any) -> None:
        self.events.append(event)
        count("secret sweep: report events")
        SWEEP.check(f"{event.kind} {event.tool} {event.message}", f"report {event.tool}")


COLLECTOR = ReportCollector()


def watch(registry: Any) -> Any:
    """Register the report collector on ``registry``'s plugin manager; return the registry."""
    registry.plugins.register(COLLECTOR, "reliability-report-collector", None)
    return registry


def swept(result: Any, where: str) -> Any:
    """Sweep one result (or list of results) and hand it back."""
    count("secret sweep: results")
    SWEEP.check(result, where)
    return result


# -- the workspace and what lies outside it ----------------------------------------------


def snapshot(root: Path, *, skip: Iterable[Path] = ()) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``root`` (not following links): kind, size, mtime, content hash."""
    skipped = {os.fspath(p) for p in skip}
    out: dict[str, tuple[Any, ...]] = {}
    root_s = os.fspath(root)
    for folder, dirs, files in os.walk(root_s, followlinks=False):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in skipped]
        for name in sorted(dirs) + sorted(files):
            path = os.path.join(folder, name)
            if path in skipped:
                continue
            rel = os.path.relpath(path, root_s)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                out[rel] = ("dir", stat.S_IMODE(info.st_mode))
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                out[rel] = ("file", info.st_size, info.st_mtime_ns, stat.S_IMODE(info.st_mode),
                            digest)
            else:
                out[rel] = ("other", stat.S_IFMT(info.st_mode))
    info = os.lstat(root_s)
    out["."] = ("root", info.st_mtime_ns)
    return out


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    changes = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            changes.append(f"{key}: {before.get(key)!r} -> {after.get(key)!r}")
    return changes


SENTINEL_TEXT = "SENTINEL-outside-the-workspace-7d41"


SENTINEL_NAMES = ("sentinel-secret.txt", "sentinel-notes.md", "sentinel-sub",
                  "sentinel-deep.txt", "sentinel-script.py", "sentinel-data.bin")


def make_sentinel_tree(root: Path) -> Path:
    """Files a tool must never touch or show: plain files, a folder, a script, binary data.

    Every name starts with ``sentinel-`` and every file holds ``SENTINEL_TEXT``, so a
    listing or a read that crossed the boundary shows up in a result.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "sentinel-secret.txt").write_text(f"{SENTINEL_TEXT} plain\n", encoding="utf-8")
    (root / "sentinel-notes.md").write_text(f"# {SENTINEL_TEXT} notes\n", encoding="utf-8")
    (root / "sentinel-sub").mkdir(exist_ok=True)
    (root / "sentinel-sub" / "sentinel-deep.txt").write_text(f"{SENTINEL_TEXT} deep\n",
                                                             encoding="utf-8")
    (root / "sentinel-script.py").write_text(f"print('{SENTINEL_TEXT} script')\n", encoding="utf-8")
    (root / "sentinel-data.bin").write_bytes(SENTINEL_TEXT.encode() + bytes(range(256)))
    return root


# -- the command --------------------------------------------------------------------------


def janito_command() -> list[str]:
    """The installed ``janito`` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("janito")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "janito_core.cli"]


def base_env(config: Path, extra: Mapping[str, str] | None = None, *,
             path: Sequence[os.PathLike[str] | str] = (), secrets: bool = False) -> dict[str, str]:
    """A subprocess environment: isolated config, no keyring, no colour, optional secrets."""
    env = clean_env(None, path=path)
    env["JANITO_CONFIG_DIR"] = str(config)
    env["NO_COLOR"] = "1"
    env.update(offline_env())
    if secrets:
        env.update(secret_env())
        env.update(SERVICE_ENV)
    env.update(extra or {})
    return env


def offline_env() -> dict[str, str]:
    """Proxy settings that send any non-loopback HTTP request to a closed loopback port."""
    dead = "http://127.0.0.1:9"
    return {"http_proxy": dead, "https_proxy": dead, "HTTP_PROXY": dead, "HTTPS_PROXY": dead,
            "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost"}


# Settings that point gmail and onedrive at the suite's loopback servers; filled in by the
# session fixtures once they listen.
SERVICE_ENV: dict[str, str] = {}


def run_janito(args: Sequence[str], *, env: Mapping[str, str], cwd: Path | str,
               timeout: float = 120, where: str = "janito") -> subprocess.CompletedProcess[str]:
    """Run the real ``janito`` command; its stdout and stderr are swept for secrets."""
    done = subprocess.run(
        [*janito_command(), *args], env=dict(env), cwd=cwd, capture_output=True, text=True,
        encoding="utf-8", errors="replace", timeout=timeout, stdin=subprocess.DEVNULL,
        check=False,
    )
    count("commands run")
    count("secret sweep: command outputs")
    SWEEP.check(done.stdout, f"{where} stdout")
    SWEEP.check(done.stderr, f"{where} stderr")
    return done


def run_many(commands: Sequence[Sequence[str]], *, env: Mapping[str, str], cwd: Path | str,
             timeout: float = 120) -> list[subprocess.CompletedProcess[str]]:
    """Run several independent ``janito`` commands at once; results in the given order."""
    from concurrent.futures import ThreadPoolExecutor

    workers = max(2, min(len(commands), 2 * (os.cpu_count() or 1)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_janito, list(args), env=env, cwd=cwd, timeout=timeout)
                   for args in commands]
        return [f.result() for f in futures]


def json_of(done: subprocess.CompletedProcess[str]) -> Any:
    try:
        return json.loads(done.stdout)
    except ValueError as exc:
        raise AssertionError(
            f"not JSON ({exc}); exit {done.returncode}\nstdout:\n{done.stdout[:3000]}\n"
            f"stderr:\n{done.stderr[:3000]}"
        ) from None


class environment:
    """Set environment variables for a block, then put back what was there."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = dict(values)
        self.saved: dict[str, str | None] = {}

    def __enter__(self) -> None:
        for key, value in self.values.items():
            self.saved[key] = os.environ.get(key)
            os.environ[key] = value

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def service_environment() -> environment:
    """The secrets and service settings, for code that runs outside a test's own setup."""
    return environment({**secret_env(), **SERVICE_ENV, **offline_env()})


# -- the registry ---------------------------------------------------------------------------

ALL_TOOLSETS = ("files", "system", "skills", "gmail", "onedrive", "undo")
PRIVILEGE_SETS = ("", "r", "w", "x", "rw", "rx", "wx", "rwx")


def installed_toolsets() -> list[str]:
    from janito_core import Registry

    return sorted(Registry(autoload=(), allowed=None).toolsets())


def mechanism_problem(name: str) -> str | None:
    """Why containment mechanism ``name`` cannot run here (None when it can)."""
    from janito_system import _sandbox

    from janito_core.sandbox import SandboxPolicy

    with environment({_sandbox.MECHANISM_ENV: name}):
        choice = _sandbox.choose(SandboxPolicy("workspace-write", "test"), probe=True)
    return None if choice.mechanism == name else choice.why


def make_registry(workspace: Path, privileges: str = "rwx",
                  toolsets: Iterable[str] | None = None) -> Any:
    """A fresh registry rooted in ``workspace`` with the repository's toolsets loaded."""
    from janito_core import Privileges, Registry, Workspace

    registry = Registry(privileges=Privileges.from_string(privileges),
                        workspace=Workspace(workspace), autoload=(), allowed=None)
    watch(registry)
    available = set(registry.toolsets())
    for name in toolsets if toolsets is not None else ALL_TOOLSETS:
        if name in available:
            registry.add_toolset(name)
    return registry


# -- tools and privileges ------------------------------------------------------------------


def allows(privileges: str, permissions: str) -> bool:
    return all(letter in privileges for letter in permissions)


CANARY_CODE = {
    "RunBashCode": {"code": "echo pwned > canary-bash.txt"},
    "RunPythonCode": {"code": "open('canary-python.txt', 'w').write('pwned')"},
    "RunPythonFile": {"file_path": "canary.py"},
}


def plausible_arguments(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments that would pass validation: what a denied call must still not run."""
    if name in CANARY_CODE:
        return dict(CANARY_CODE[name])
    out: dict[str, Any] = {}
    for key in schema.get("required", []):
        prop = schema["properties"][key]
        out[key] = _value(prop)
    return out


def _value(prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return prop["enum"][0]
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if "anyOf" in prop:
        return _value(next(p for p in prop["anyOf"] if p.get("type") != "null"))
    if kind == "array":
        return [_value(prop.get("items") or {"type": "string"})]
    return {"integer": 1, "number": 1.0, "boolean": False, "object": {}}.get(kind, "probe.txt")
