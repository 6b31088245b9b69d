"""The public API (`indexer.search`, `indexer.Index`, ...) does not depend on import order.

Python sets every imported submodule as an attribute of its parent package, so a
submodule named like a public function replaces that function as soon as anything imports
it: `from indexer import Index, search` once returned the `indexer.search` package
(issue 22). These tests hold the names apart and check, in fresh interpreters, every
public name after each subpackage was imported first and in both orders of the names."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import types
from concurrent.futures import ThreadPoolExecutor

import pytest

import indexer

CHILDREN = sorted(m.name for m in pkgutil.iter_modules(indexer.__path__) if m.name != "__main__")

# In a fresh interpreter: import FIRST (a subpackage, or nothing), take the public names
# with one `from indexer import ...` in the given ORDER, then import every subpackage and
# look again; print what is wrong as a JSON list.
PROBE = r"""
import importlib, json, sys, types
first, order = sys.argv[1], sys.argv[2].split(",")
import indexer
if first:
    importlib.import_module("indexer." + first)
taken = {}
exec("from indexer import " + ", ".join(order), taken)
problems = []

def expect(stage, name, got):
    module, attr = indexer.API[name]
    want = getattr(importlib.import_module(module), attr)
    if got is not want or isinstance(got, types.ModuleType) or not callable(got):
        problems.append(f"{stage}: indexer.{name} is {got!r}, not {module}.{attr}")

for name in order:
    expect("from-import", name, taken[name])
    expect("attribute", name, getattr(indexer, name))
for child in sys.argv[3].split(","):
    importlib.import_module("indexer." + child)
for name in order:
    expect("after every subpackage", name, getattr(indexer, name))
print(json.dumps(problems))
"""


def test_no_submodule_is_named_like_a_public_name():
    assert sorted(set(indexer.API) & set(CHILDREN)) == []
    # nor does a package the API reads a name from have a submodule of that name
    for name, (module, attr) in indexer.API.items():
        package = importlib.import_module(module)
        if hasattr(package, "__path__"):
            inner = {m.name for m in pkgutil.iter_modules(package.__path__)}
            assert attr not in inner, f"{module}.{attr} is both a submodule and the API's {name}"


def test_every_public_name_is_a_documented_callable_in_process():
    for name, (module, attr) in indexer.API.items():
        value = getattr(indexer, name)
        assert not isinstance(value, types.ModuleType), name
        assert callable(value) and value is getattr(importlib.import_module(module), attr), name
    assert set(indexer.__all__) == {"__version__", *indexer.API}


def _probe(first: str, order: list[str]) -> tuple[str, list[str], list[str]]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-c", PROBE, first, ",".join(order), ",".join(CHILDREN)],
                         capture_output=True, text=True, timeout=120, env=env)
    if run.returncode != 0:
        return first, order, [f"exit {run.returncode}: {run.stderr.strip().splitlines()[-1:]}"]
    return first, order, json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_public_names_survive_every_import_order_in_fresh_interpreters():
    names = list(indexer.API)
    # every subpackage/module imported first, then the names; and the names alone, in
    # their documented order and reversed (`from indexer import Index, search` was the bug)
    cases = [(child, names) for child in CHILDREN] + [("", names), ("", names[::-1])]
    assert {"retrieval", "indexing", "agents", "store"} <= set(CHILDREN) and len(cases) == len(CHILDREN) + 2 >= 17
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = list(pool.map(lambda case: _probe(*case), cases))
    failures = [f"first={first or '-'} order={order[0]}..: {p}" for first, order, probs in results for p in probs]
    assert failures == []


def test_the_issue_22_order_returns_the_function():
    """The exact sequence from the trial: Index first, then search, in a fresh interpreter."""
    code = "import indexer; indexer.Index; from indexer import search; print(type(search).__name__, search.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["function", "indexer.retrieval.index"]
