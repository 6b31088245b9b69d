"""The package's version, its one source: pyproject.toml reads it for the distribution's
metadata, `indexer --version` and `indexer.__version__` print it, and a build records it in
its catalogue entries and collections. CHANGELOG.md says what each version changed."""

VERSION = "0.2.0"
