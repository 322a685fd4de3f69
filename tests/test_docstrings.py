"""Parameter descriptions read from docstrings in the three styles, edge cases included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from janito_core.schema import parse_param_docs


def test_google_types_continuations_and_the_end_of_the_section() -> None:
    doc = """Do it.

    Args:
        path (str): Where,
            relative to the root.
        pairs (list[tuple(int, int)]): Nested brackets in the type.
        flag:
            Described on the next line.

        spaced: After a blank line.
        *args: Starred.
        **kwargs (Any): Double starred.

    Returns:
        something: Not a parameter.

    Note:
        prose: Not a parameter either.
    """
    assert parse_param_docs(doc) == {
        "path": "Where, relative to the root.",
        "pairs": "Nested brackets in the type.",
        "flag": "Described on the next line.",
        "spaced": "After a blank line.",
        "args": "Starred.",
        "kwargs": "Double starred.",
    }


def test_google_sections_list_items_and_entries_that_are_not_parameters() -> None:
    doc = """Do it.

    Args:
        - first: A list item.
        this line is prose, not an entry
        second: Kept after the prose.

    Keyword Args:
        third: From a second section.
    """
    assert parse_param_docs(doc) == {"first": "A list item.", "second": "Kept after the prose.",
                                     "third": "From a second section."}


def test_numpy_shared_entries_escaped_stars_and_the_next_heading() -> None:
    doc = r"""Do it.

    Parameters
    ----------
    m, n : int
        Both sizes.
    \*args : Any
        Escaped for reST.
    plain
        No type given.
    bare : str

    See Also
    --------
    other : Not a parameter.
    """
    assert parse_param_docs(doc) == {"m": "Both sizes.", "n": "Both sizes.",
                                     "args": "Escaped for reST.", "plain": "No type given.",
                                     "bare": ""}


def test_rest_fields_roles_and_trailing_prose() -> None:
    doc = r"""Do it.

    :param path: Where the file is,
        relative to the root; see :class:`Thing` for more.
    :param int limit: How many lines.
    :param \**options: Passed on.
    :returns: Not a parameter.
    :param last:
        Below the field.

    A closing paragraph that belongs to no parameter.
    """
    assert parse_param_docs(doc) == {
        "path": "Where the file is, relative to the root; see :class:`Thing` for more.",
        "limit": "How many lines.",
        "options": "Passed on.",
        "last": "Below the field.",
    }


def test_a_field_on_the_first_line_is_ended_by_the_next_field() -> None:
    doc = """:param e: The key.
        :return: Not part of e's description.
        """
    assert parse_param_docs(doc) == {"e": "The key."}


def test_the_style_is_detected_rest_first_and_prose_gives_nothing() -> None:
    mixed = """Do it.

    Args:
        a: Google.

    :param b: reST.
    """
    assert parse_param_docs(mixed) == {"b": "reST."}
    assert parse_param_docs("Args are described elsewhere.") == {}
    assert parse_param_docs("") == {}
    assert parse_param_docs(None) == {}


def test_tabs_count_as_indentation() -> None:
    doc = "Do it.\n\n\tArgs:\n\t\tpath: Where.\n\t\t\tStill where.\n\tReturns:\n\t\tx: no.\n"
    assert parse_param_docs(doc) == {"path": "Where. Still where."}


_DOC_PIECES = ["Args:", "Parameters", "----------", ":param x:", ":param int y: text",
               "    name: text", "        more", "name (int): t", "x, y : int", "", "  ",
               "\t", "Returns:", "See Also", "--------", "- a: b", r"\*args : T", ":", "(",
               "a (b: c", "Args :", "\x00", "é: ü"]


@given(st.lists(st.one_of(st.sampled_from(_DOC_PIECES), st.text(max_size=20)), max_size=30),
       st.integers(0, 8))
@settings(max_examples=300, deadline=None)
def test_any_docstring_gives_a_mapping_and_never_raises(lines: list[str], indent: int) -> None:
    doc = "\n".join(" " * (indent * (i % 3)) + line for i, line in enumerate(lines))
    found = parse_param_docs(doc)
    assert isinstance(found, dict)
    assert all(isinstance(k, str) and k and isinstance(v, str) for k, v in found.items())
