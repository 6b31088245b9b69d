"""Run a documentation page's shell blocks and Python examples as a reader would, in page
order: each command in a fresh folder, with the `indexer` of this environment first on
PATH, a home of its own (so `~/notes` is the test's copy of a bundled folder, and the
caches start empty) and none of a developer's INDEXER_* settings.

The install steps a block may hold (`python3 -m venv`, activating it, `pip install`) are
the ones this environment already took; .ci/run and .ci/dist take them from scratch. The
long-running commands are run as their readers use them: `indexer serve` until it answers
over HTTP (on a free port instead of 8765), `indexer mcp` until it answers a real MCP
handshake and a search over stdio, `indexer watch` while it stays up."""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from tests.conftest import free_port, stop

BLOCK = re.compile(r"```bash\n(.+?)\n```", flags=re.S)
FENCED = re.compile(r"```(bash|python)\n(.+?)\n```", flags=re.S)
INSTALL = re.compile(r"python3? -m venv \S+|(\.|source) \S+/bin/activate|pip install [^&]+")
TIMEOUT = 600  # seconds, one command on a loaded machine


def shell_blocks(page: Path) -> list[str]:
    """The ```bash blocks of a Markdown page, in order."""
    return BLOCK.findall(page.read_text(encoding="utf-8"))


def runnable_blocks(page: Path) -> list[tuple[str, str]]:
    """The ```bash and ```python blocks of a Markdown page, in order: (language, text)."""
    return FENCED.findall(page.read_text(encoding="utf-8"))


def commands(block: str) -> tuple[list[str], list[str]]:
    """A block's commands, one a line (a line ending in a backslash goes on), and the install
    steps taken out of the front of a line."""
    run: list[str] = []
    installs: list[str] = []
    for line in block.replace("\\\n", " ").splitlines():
        steps = line.split(" && ")
        while steps and INSTALL.fullmatch(steps[0].strip()):
            installs.append(steps.pop(0).strip())
        if steps and steps[0].strip():
            run.append(" && ".join(steps))
    return run, installs


def reader_env(home: Path) -> dict[str, str]:
    """The environment of a reader who installed indexer here and set nothing else."""
    unset = ("XDG_CACHE_HOME", "TIKTOKEN_CACHE_DIR", "OLLAMA_HOST", "PYTHONPATH", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDEXER_") and k not in unset}
    bindir = Path(sys.executable).parent
    assert (bindir / "indexer").exists(), f"no `indexer` command beside {sys.executable}"
    env["PATH"] = os.pathsep.join([str(bindir), env.get("PATH", "")])
    env["HOME"] = str(home)
    return env


def argv(command: str) -> list[str]:
    """The words of a command, its comment left out (for looking at it, not for running it)."""
    return shlex.split(command, comments=True)


def strategies(words: list[str]) -> list[str]:
    return [b for a, b in zip(words, words[1:]) if a in ("-s", "--strategy")]


def run(command: str, cwd: Path, env: dict[str, str]) -> str:
    """Run one command with bash; its stdout. It must exit 0, and an `eval` must print a row
    for every strategy it names."""
    done = subprocess.run(["bash", "-c", f"set -eo pipefail\n{command}"], cwd=cwd, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert done.returncode == 0, f"`{command}` exited {done.returncode}: {done.stderr[-3000:]}"
    words = argv(command)
    if words[:2] == ["indexer", "eval"]:
        for name in strategies(words):
            assert re.search(rf"^{re.escape(name)}\s", done.stdout, flags=re.M), \
                f"`{command}` printed no row for {name}:\n{done.stdout[-2000:]}"
    return done.stdout


def serve(command: str, cwd: Path, env: dict[str, str], built: set[str]) -> None:
    """`indexer serve` as written (on a free port): it answers /api/health and lists the
    collections the page built."""
    port = free_port()
    line = command.replace("indexer serve", f"indexer serve --port {port}", 1)
    log = open(cwd / "serve.log", "w")
    proc = subprocess.Popen(["bash", "-c", f"exec {line}"], cwd=cwd, env=env, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    log.close()
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                health = json.loads(urllib.request.urlopen(f"{url}/health", timeout=2).read())
                break
            except OSError:
                assert proc.poll() is None, f"`{command}` exited: {(cwd / 'serve.log').read_text()[-2000:]}"
                assert time.monotonic() < deadline, f"`{command}` did not answer within 120 s"
                time.sleep(0.3)
        assert health["status"] == "ok"
        listed = json.loads(urllib.request.urlopen(f"{url}/collections", timeout=30).read())
        assert built <= {c["strategy"] for c in listed["collections"]}, listed
    finally:
        stop(proc)


def mcp(command: str, cwd: Path, env: dict[str, str]) -> None:
    """`indexer mcp` as written: a client's MCP handshake over stdio, then a search that
    returns results from the page's index."""
    proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=cwd, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        proc.stdin.flush()

    def answer(ident: int) -> dict:
        try:
            reply = json.loads(lines.get(timeout=120))
        except queue.Empty:
            raise AssertionError(f"`{command}` did not answer within 120 s") from None
        assert reply.get("id") == ident and "result" in reply, reply
        return reply["result"]

    try:
        client = {"name": "docs-test", "version": "0"}
        send({"id": 1, "method": "initialize",
              "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": client}})
        from indexer import __version__

        assert answer(1)["serverInfo"] == {"name": "indexer", "version": __version__}
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/call",
              "params": {"name": "search", "arguments": {"query": "how long are deleted accounts kept"}}})
        found = json.loads(answer(2)["content"][0]["text"])
        assert found["results"], found
    finally:
        proc.stdin.close()
        stop(proc)


def watch(command: str, cwd: Path, env: dict[str, str]) -> None:
    """`indexer watch` as written: it does its first sync and stays up, watching (a sync
    of an unchanged folder says nothing, off a terminal)."""
    log_path = cwd / "watch.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=cwd, env=env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        time.sleep(15)
        assert proc.poll() is None, f"`{command}` exited: {log_path.read_text()[-2000:]}"
        assert "error" not in log_path.read_text().lower(), log_path.read_text()[-2000:]
    finally:
        stop(proc)


def run_python(code: str, cwd: Path, env: dict[str, str]) -> str:
    """A ```python block, run by the environment's Python; it must exit 0 and print."""
    python = str(Path(sys.executable).parent / "python")
    done = subprocess.run([python, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert done.returncode == 0, f"the Python example exited {done.returncode}: {done.stderr[-3000:]}"
    assert done.stdout.strip(), f"the Python example printed nothing:\n{code}"
    return done.stdout


def run_page(page: Path, cwd: Path, env: dict[str, str]) -> list[str]:
    """Every command of every shell block of `page` and every Python example, in order;
    what ran."""
    ran: list[str] = []
    built: set[str] = set()
    for language, block in runnable_blocks(page):
        if language == "python":
            run_python(block, cwd, env)
            ran.append(block)
            continue
        for command in commands(block)[0]:
            words = argv(command)
            verb = words[1] if words[:1] == ["indexer"] and len(words) > 1 else None
            if verb == "serve":
                serve(command, cwd, env, built)
            elif verb == "mcp":
                mcp(command, cwd, env)
            elif verb == "watch":
                watch(command, cwd, env)
            else:
                run(command, cwd, env)
                if "--db" not in words and verb == "build":  # what serve, reading the default index, lists
                    built.update(strategies(words))
                elif "--db" not in words and verb == "drop":
                    built.difference_update(strategies(words))
            ran.append(command)
    return ran
