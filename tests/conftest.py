"""Shared fixtures. Every test runs with the network closed: a socket may only connect
to this machine (the Chroma and stand-in Ollama servers the tests start)."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest
from hypothesis import settings

from indexer.settings import Settings

# Property tests draw the same examples on every run (CI must not pass or fail by luck);
# `pytest --hypothesis-profile=explore` draws new ones and more of them.
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", max_examples=2000)
settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.pop("INDEXER_CHROMA_URL", None)
# The suite builds with the multilingual model, named: a folder's English text would
# otherwise get the English model (`embeddings.choose_embedder`), three times slower, and
# every build would print its choice. tests/test_embedders_choice.py tests the choice with
# nothing named (`unnamed`, below).
os.environ["INDEXER_EMBEDDER"] = "use-m3"

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address) -> bool:
    if not isinstance(address, tuple):
        return True  # unix socket
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded(real):
    def connect(self, address):
        if not _is_local(address):
            raise OSError(f"tests must not touch the network (tried to connect to {address!r})")
        return real(self, address)

    return connect


socket.socket.connect = _guarded(_real_connect)
socket.socket.connect_ex = _guarded(_real_connect_ex)


def write_file(base: Path, rel: str, content: str | bytes) -> None:
    path = base / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


@pytest.fixture
def write_files(tmp_path):
    """Write {relative path: str | bytes} under a fresh folder and return the folder."""

    def write(files: dict[str, str | bytes], root: Path | None = None) -> Path:
        base = root or tmp_path / "docs"
        for rel, content in files.items():
            write_file(base, rel, content)
        return base

    return write


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def open_store(db, url: str | None = None, create: bool = False):
    """`Store` on an index folder (and a Chroma server), with the environment's other settings."""
    from indexer.store import Store

    return Store(Settings.load(db=db, chroma_url=url), create=create)


def raw_chroma(db, url: str | None = None):
    """An index's Chroma client as the store opens it (the store keeps its own private):
    for tests that look at the physical collections and their records directly."""
    from indexer.store.chroma import Chroma

    return Chroma(Path(db) / "chroma", url, read_only_ok=True)


def start_chroma(path: Path, port: int | None = None):
    """A real Chroma server (`chroma run`) on a local port, data in `path`: (process, url)."""
    import shutil
    import subprocess
    import sys
    import time
    import urllib.request

    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = port or free_port()
    path.mkdir(parents=True, exist_ok=True)
    log = open(path / "server.log", "a")
    proc = subprocess.Popen([exe, "run", "--path", str(path / "data"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1).read()
            return proc, url
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("chroma run exited: " + (path / "server.log").read_text()[-2000:])
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("chroma run did not come up within 60 s")


def stop(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except Exception:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real Chroma server (`chroma run`) on a free local port, for server-mode tests."""
    proc, url = start_chroma(tmp_path_factory.mktemp("chroma-server"))
    yield url
    stop(proc)


@pytest.fixture(scope="session")
def built_db(tmp_path_factory):
    """The bundled Turkish corpus built once with headers and fixed64 (real embedder)."""
    from indexer.indexing.building import build

    db = tmp_path_factory.mktemp("db") / "index"
    reports = build([CORPUS], ["headers", "fixed64"], settings=Settings.load(db=db))
    return db, reports
