"""The package's version: what a build records in its catalogue entries and collections."""

VERSION = "0.1.0"
