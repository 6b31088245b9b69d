"""A chunker's parameters are declared twice: in its `params` dict (what the command line
parses and coerces) and as class annotations (what the type checker reads, since
`Chunker.__init__` sets them with setattr). These tests keep the two in step."""

from __future__ import annotations

import typing

import pytest

from indexer.chunkers import REGISTRY, Chunker, Param


def expected_annotation(param: Param) -> object:
    """The annotation a parameter must have: its type, optional where it defaults to None."""
    return param.type | None if param.default is None else param.type


def mismatches(cls: type[Chunker]) -> list[str]:
    """How a chunker's annotations and its `params` disagree (names and types)."""
    hints = typing.get_type_hints(cls)
    declared = set(hints) - set(typing.get_type_hints(Chunker))
    problems = [f"{name}: in params, not annotated" for name in sorted(set(cls.params) - declared)]
    problems += [f"{name}: annotated, not in params" for name in sorted(declared - set(cls.params))]
    for name, param in cls.params.items():
        if name in hints and hints[name] != expected_annotation(param):
            problems.append(f"{name}: annotated {hints[name]}, params say {expected_annotation(param)}")
    return problems


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_params_and_annotations_agree(kind):
    assert mismatches(REGISTRY[kind]) == []


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_parameter_values_have_their_annotated_types(kind):
    cls = REGISTRY[kind]
    chunker = cls()
    hints = typing.get_type_hints(cls)
    for name in cls.params:
        value = getattr(chunker, name)
        assert value is None or isinstance(value, hints[name]), (name, value)


class _Drifted(Chunker):
    kind = "drifted"
    params = {
        "size": Param(int, 8, "a size"),
        "ratio": Param(float, None, "an optional ratio"),
        "gone": Param(int, 1, "declared here only"),
    }
    size: str
    ratio: float | None
    extra: int


def test_the_check_sees_drift_in_names_and_types():
    assert mismatches(_Drifted) == [
        "gone: in params, not annotated",
        "extra: annotated, not in params",
        "size: annotated <class 'str'>, params say <class 'int'>",
    ]
