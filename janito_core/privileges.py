"""Which kinds of tool may run: read, write, execute."""

from __future__ import annotations

from .errors import PermissionStringError

PERMISSION_LETTERS = frozenset("rwx")


def validate_permissions(permissions: str) -> str:
    """Return ``permissions`` in canonical ``rwx`` order or raise PermissionStringError."""
    if not isinstance(permissions, str):
        raise PermissionStringError(
            f"permissions must be a string of the letters r, w and x, got {permissions!r}"
        )
    bad = set(permissions) - PERMISSION_LETTERS
    if bad:
        raise PermissionStringError(
            f"invalid permission letter(s) {''.join(sorted(bad))!r} in {permissions!r}: "
            "use a combination of r (read), w (write) and x (execute)"
        )
    if len(set(permissions)) != len(permissions):
        raise PermissionStringError(f"repeated permission letter in {permissions!r}")
    return "".join(letter for letter in "rwx" if letter in permissions)


class Privileges:
    """The privileges janito runs with.

    A tool may load and run only if every letter of its permission string is granted;
    a tool with an empty permission string always may.
    """

    __slots__ = ("execute", "read", "write")
    read: bool
    write: bool
    execute: bool

    def __init__(self, read: bool = True, write: bool = True, execute: bool = True) -> None:
        object.__setattr__(self, "read", bool(read))
        object.__setattr__(self, "write", bool(write))
        object.__setattr__(self, "execute", bool(execute))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Privileges are immutable; make a new one")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Privileges) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"Privileges(read={self.read}, write={self.write}, execute={self.execute})"

    @classmethod
    def from_flags(cls, read: bool = False, write: bool = False, execute: bool = False) -> Privileges:
        """Privileges as the command-line flags give them: no flag at all grants everything."""
        if not (read or write or execute):
            return cls()
        return cls(read=read, write=write, execute=execute)

    @classmethod
    def from_string(cls, letters: str) -> Privileges:
        letters = validate_permissions(letters)
        return cls(read="r" in letters, write="w" in letters, execute="x" in letters)

    def allows(self, permissions: str) -> bool:
        for letter in permissions:
            if letter == "r":
                if not self.read:
                    return False
            elif letter == "w":
                if not self.write:
                    return False
            elif letter == "x":
                if not self.execute:
                    return False
            else:
                return False
        return True

    def missing(self, permissions: str) -> str:
        """The letters of ``permissions`` these privileges do not grant."""
        granted = str(self)
        return "".join(letter for letter in permissions if letter not in granted)

    def denied_reason(self, permissions: str) -> str:
        """Why a tool needing ``permissions`` is denied ("needs write (-w) permission, ...")."""
        names = {"r": "read", "w": "write", "x": "execute"}
        words = ", ".join(f"{names[m]} (-{m})" for m in self.missing(permissions))
        return f"needs {words} permission, which is not granted"

    def __str__(self) -> str:
        return ("r" if self.read else "") + ("w" if self.write else "") + ("x" if self.execute else "")


ALL_PRIVILEGES = Privileges()
