"""AskUser: put a question to the person at the terminal and return the answer."""

from __future__ import annotations

import sys
import threading
from typing import Annotated, Literal, TextIO

from janito_core import BaseTool, Failure, failure, tool
from janito_core.constraints import Pattern

from ._common import TypedDict
from ._errors import guarded

# One question at a time: the calls of a turn run at the same time, and two questions
# written together would share the terminal and read each other's answers.
_terminal = threading.Lock()


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):  # a closed or replaced stream
        return False


class Answered(TypedDict):
    """What AskUser answers.

    Attributes:
        question: The question as asked.
        answer: What the person typed.
    """

    success: Literal[True]
    question: str
    answer: str


@tool(permissions="")
class AskUser(BaseTool):
    """Ask the user a question in the terminal and return their answer.

    Use it for a clarification, a confirmation or a value only the user knows. It is only
    available when janito runs in an interactive terminal.
    """

    @guarded("question")
    def run(self, question: Annotated[str, Pattern(r"\S")]) -> Answered | Failure:
        """Show a question to the user and wait for a one-line answer.

        Args:
            question: The question to show, phrased so it can be answered in one line.
        """
        echo = {"question": question}
        stdin, stderr = sys.stdin, sys.stderr
        if not (_is_terminal(stdin) and _is_terminal(stderr)):
            return failure("no one can answer: standard input or error is not a terminal",
                           "no_terminal", **echo)
        try:
            with _terminal:
                stderr.write(f"\n❓ {question}\n> ")
                stderr.flush()
                line = stdin.readline()
        except KeyboardInterrupt:
            stderr.write("\n")
            return failure("the user cancelled the question (Ctrl-C)", "cancelled", **echo)
        except (OSError, ValueError, UnicodeError) as exc:
            return failure(f"reading the answer failed: {exc}", "io_error", **echo)
        if not line:
            return failure("the input was closed before the user answered", "no_answer",
                           **echo)
        answer = line.rstrip("\r\n")
        return {"success": True, "question": question, "answer": answer}

    @classmethod
    def should_load(cls) -> bool:
        if not _is_terminal(sys.stdin):
            return cls.skip("standard input is not a terminal, so no one can answer")
        if not _is_terminal(sys.stderr):
            return cls.skip("standard error is not a terminal, so no one would see the question")
        return True


def main(argv: list[str] | None = None) -> int:
    """Run AskUser from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(AskUser, argv)


if __name__ == "__main__":
    raise SystemExit(main())
