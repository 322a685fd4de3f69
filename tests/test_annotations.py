"""Type hints resolved by janito agree with ``typing.get_type_hints``, errors included."""

from __future__ import annotations

import dataclasses
import enum
import functools
import typing
from typing import Annotated, Any, Literal, Optional

import pytest

from janito_core._annotations import type_hints


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int


def plain(a: str, b: int | None, c: Optional[list[str]] = None) -> dict[str, Any]:
    return {}


def extras(a: Annotated[str, "a string, not a reference"], b: Literal["x", "y"] = "x",
           c: Colour = Colour.RED, d: Point | None = None) -> None:
    return None


def nested_reference(a: list["Point"], b: dict[str, "Colour"]) -> None:  # noqa: UP037
    return None


def unannotated(a, b: int):  # type: ignore[no-untyped-def]
    return None


@functools.wraps(plain)
def wrapper(*args: Any, **kwargs: Any) -> Any:
    return plain(*args, **kwargs)


@pytest.mark.parametrize("function", [plain, extras, nested_reference, unannotated, wrapper])
def test_the_same_hints_as_get_type_hints(function: Any) -> None:
    assert type_hints(function) == typing.get_type_hints(function, include_extras=True)


def test_annotated_metadata_is_kept() -> None:
    assert type_hints(extras)["a"] == Annotated[str, "a string, not a reference"]
    assert type_hints(extras)["return"] is type(None)


def test_real_objects_as_annotations() -> None:
    def made(a, b):  # type: ignore[no-untyped-def]
        return None

    made.__annotations__ = {"a": list[int], "b": None}
    assert type_hints(made) == {"a": list[int], "b": type(None)}


def test_a_name_that_does_not_exist_raises_what_get_type_hints_raises() -> None:
    def broken(a: NoSuchName) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    with pytest.raises(NameError, match="NoSuchName"):
        typing.get_type_hints(broken)
    with pytest.raises(NameError, match="NoSuchName"):
        type_hints(broken)
