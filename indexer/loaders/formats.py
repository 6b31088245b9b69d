"""Which files we read, and as what: file name -> (format, programming language).

The formats and their extensions are the registry's (`registry.READERS`: markdown, text,
html, pdf, docx, pptx, xlsx, csv, epub, ipynb); code is told by extension here, with its
language, and a project's plain-text documents by name."""

from __future__ import annotations

from .registry import BY_EXTENSION

CODE_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".sql": "sql",
    ".cob": "cobol",
    ".cbl": "cobol",
    ".cpy": "cobol",
    ".lua": "lua",
    ".r": "r",
    ".jl": "julia",
    ".hs": "haskell",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".clj": "clojure",
    ".dart": "dart",
    ".pl": "perl",
    ".pm": "perl",
    ".ps1": "powershell",
    ".vue": "vue",
    ".svelte": "svelte",
    ".css": "css",
    ".scss": "scss",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".proto": "proto",
    ".tf": "hcl",
    ".gradle": "groovy",
    ".groovy": "groovy",
}
CODE_NAMES = {
    "Dockerfile": "dockerfile",
    "Makefile": "make",
    "CMakeLists.txt": "cmake",
    "Jenkinsfile": "groovy",
}
TEXT_NAMES = {"README", "LICENSE", "CHANGELOG", "NOTICE", "AUTHORS", "CONTRIBUTING"}
# a project's plain-text documents by name, in any case, alone or with a suffix or prefix a
# packager adds (`INSTALL`, `NEWS`, `README.Debian`, `changelog.Debian`, `mpfr-README`)
DOC_NAMES = TEXT_NAMES | {
    "INSTALL",
    "NEWS",
    "CHANGES",
    "TODO",
    "HACKING",
    "THANKS",
    "BUGS",
    "FAQ",
    "COPYING",
    "HISTORY",
    "USAGE",
}
COMPRESSED = {".gz", ".bz2", ".xz", ".zst", ".z", ".zip", ".lz", ".lzma", ".br"}


def format_of(name: str) -> tuple[str | None, str]:
    """(format, language) for a file name; format is None for files we do not index."""
    if name in CODE_NAMES:
        return "code", CODE_NAMES[name]
    if name in TEXT_NAMES:
        return "text", ""
    dot = name.rfind(".")
    ext = name[dot:].lower() if dot > 0 else ""
    if ext in BY_EXTENSION:
        return BY_EXTENSION[ext], ""
    if ext in CODE_LANGUAGES:
        return "code", CODE_LANGUAGES[ext]
    if ext not in COMPRESSED and _doc_name(name):
        return "text", ""
    return None, ""


def _doc_name(name: str) -> bool:
    """`README.Debian`, `NEWS`, `mpfr-README`: a known document name before the first dot,
    or as the last part of a prefixed name."""
    stem = name.split(".", 1)[0].upper()
    return stem in DOC_NAMES or stem.replace("_", "-").rsplit("-", 1)[-1] in DOC_NAMES
