"""Allow, ask or deny: the rules a person sets for what a model's calls may do.

Privileges (``-r -w -x``) are the outer bound and stay as they are; inside them a
:class:`Policy` decides each call, in this order:

1. janito's own places: nothing writes ``.janito/`` in the workspace (it holds this very
   policy), and a write under ``.git/`` always asks a person, whatever the rules;
2. ``deny`` rules, then ``ask`` rules, then ``allow`` rules, the first kind that has a
   matching rule deciding;
3. with no rule matching, the mode: ``read-only`` (only tools that change nothing),
   ``ask`` (tools that write or run code ask), ``auto-edit`` (writes to workspace paths
   are allowed, other writes and code ask) or ``full-auto`` (whatever the privileges
   grant).

A rule matches a call when every criterion it gives matches: ``tools`` (name globs),
``toolsets``, ``permissions`` (letters: a tool holding any of them), ``args`` (argument
name to value globs) and ``paths`` (gitignore-style patterns, with ``access``: read,
write or both). Paths are matched on where the ``Workspace`` resolved them, never on how
the model spelled them, before the call (for the paths a tool declares in
``reads_paths`` and ``writes_paths``) and again on every file the tool touches while it
runs (see :class:`PathGuard`).

Policies come from ``policy.toml`` in janito's configuration folder (the person's) and
``.janito/policy.toml`` in the workspace (the project's). The project's file can only
restrict: its ``deny`` and ``ask`` rules count, and its mode when stricter; its ``allow``
rules are ignored, since a cloned repository could otherwise widen what the person set.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ._globs import GlobError, first_literal, name_matches, name_pattern, path_regex

if TYPE_CHECKING:
    import re

READ_ONLY = "read-only"
ASK = "ask"
AUTO_EDIT = "auto-edit"
FULL_AUTO = "full-auto"
MODES: tuple[str, ...] = (READ_ONLY, ASK, AUTO_EDIT, FULL_AUTO)
"""From the strictest to the widest."""

ALLOW, DENY = "allow", "deny"
ACTIONS: tuple[str, ...] = (ALLOW, ASK, DENY)
READ, WRITE = "read", "write"
POLICY_FILE = "policy.toml"
WORKSPACE_POLICY = ".janito/policy.toml"
PROTECTED_FOLDER = ".janito"
GIT_FOLDER = ".git"

_RULE_KEYS = {"action", "tools", "toolsets", "permissions", "args", "paths", "access", "reason"}


class PolicyError(ValueError):
    """A policy that cannot be read: ``source`` says where (``file:line``)."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


_put = object.__setattr__


class _Value:
    """An immutable value: equal, hashed and shown by its fields (``_fields``, in order).

    What a frozen dataclass gives, written out: ``dataclasses`` imports ``inspect``, and
    the policy is read on every start of ``janito`` (decision 0001).
    """

    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a {type(self).__name__} "
                             "does not change")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} "
                             "does not change")


class Rule(_Value):
    """One rule; an empty criterion matches every call."""

    __slots__ = (
        "access",
        "action",
        "args",
        "paths",
        "permissions",
        "reason",
        "source",
        "tools",
        "toolsets",
    )
    _fields = ("action", "tools", "toolsets", "permissions", "args", "paths", "access",
               "reason", "source")
    action: str
    tools: tuple[str, ...]
    toolsets: tuple[str, ...]
    permissions: str
    args: tuple[tuple[str, tuple[str, ...]], ...]
    paths: tuple[str, ...]
    access: frozenset[str]
    reason: str
    source: str

    def __init__(self, action: str, tools: tuple[str, ...] = (),
                 toolsets: tuple[str, ...] = (), permissions: str = "",
                 args: tuple[tuple[str, tuple[str, ...]], ...] = (),
                 paths: tuple[str, ...] = (), access: frozenset[str] = frozenset((READ, WRITE)),
                 reason: str = "", source: str = "python") -> None:
        _put(self, "action", action)
        _put(self, "tools", tools)
        _put(self, "toolsets", toolsets)
        _put(self, "permissions", permissions)
        _put(self, "args", args)
        _put(self, "paths", paths)
        _put(self, "access", access)
        _put(self, "reason", reason)
        _put(self, "source", source)
        if self.action not in ACTIONS:
            raise PolicyError(self.source, f"action must be one of {', '.join(ACTIONS)}, "
                                           f"not {self.action!r}")
        if not (self.tools or self.toolsets or self.permissions or self.args or self.paths):
            raise PolicyError(self.source, "a rule must say what it applies to: tools, "
                                           "toolsets, permissions, args or paths")
        bad = set(self.permissions) - set("rwx")
        if bad:
            raise PolicyError(self.source, f"permissions are letters r, w and x, not "
                                           f"{''.join(sorted(bad))!r}")
        if not self.access or not self.access <= {READ, WRITE}:
            raise PolicyError(self.source, "access is read, write or both")
        try:
            for pattern in self.paths:
                path_regex(pattern)
        except GlobError as exc:
            raise PolicyError(self.source, str(exc)) from None

    @property
    def text(self) -> str:
        """The rule in a few words, for refusals, prompts and ``janito policy show``."""
        said = []
        if self.tools:
            said.append("tools " + ", ".join(self.tools))
        if self.toolsets:
            said.append("toolsets " + ", ".join(self.toolsets))
        if self.permissions:
            said.append(f"permissions {self.permissions}")
        for name, globs in self.args:
            said.append(f"{name} matching {' or '.join(globs)}")
        if self.paths:
            access = "" if self.access == {READ, WRITE} else f" ({next(iter(self.access))})"
            said.append("paths " + ", ".join(self.paths) + access)
        text = f"{self.action} " + "; ".join(said)
        return f"{text}: {self.reason}" if self.reason else text

    def matches_tool(self, tool: ToolFacts) -> bool:
        if self.tools and not any(name_matches(g, tool.name) for g in self.tools):
            return False
        if self.toolsets and not any(name_matches(g, tool.toolset) for g in self.toolsets):
            return False
        return not self.permissions or any(letter in tool.permissions
                                           for letter in self.permissions)

    def matches_args(self, arguments: Mapping[str, Any]) -> bool:
        for name, globs in self.args:
            value = arguments.get(name)
            values = value if isinstance(value, (list, tuple)) else (value,)
            texts = [v for v in values if isinstance(v, str)]
            if not any(name_matches(g, t) for g in globs for t in texts):
                return False
        return True

    def path_patterns(self) -> list[re.Pattern[str]]:
        return [path_regex(p) for p in self.paths]


class ToolFacts(NamedTuple):
    """What a rule may look at of a tool; ``reads`` and ``writes`` say whether it declares
    the paths it reads and writes (``reads_paths``, ``writes_paths``)."""

    name: str
    toolset: str = ""
    permissions: str = ""
    reads: bool = False
    writes: bool = False


class _Plan:
    """What the policy needs to decide the calls of one tool, worked out once.

    ``fixed`` is the decision when nothing about a call can change it. Otherwise the
    rules that could (on arguments, or on paths of an access the tool declares) are
    kept, and ``reads``/``writes`` say which declared paths must be resolved first.
    ``guards`` are the tool's guards, (not approved, approved), when no rule on
    arguments changes what the tool may touch.
    """

    __slots__ = ("fixed", "guards", "reads", "relevant", "writes")

    def __init__(self) -> None:
        self.fixed: Decision | None = None
        self.relevant: list[Rule] = []
        self.reads = self.writes = False
        self.guards: tuple[PathGuard, PathGuard] | None = None


class PathUse(_Value):
    """A path a call names: the argument, where it leads in the workspace (None: it does
    not lead inside), and whether the tool reads or writes it."""

    __slots__ = ("access", "argument", "relative")
    _fields = ("argument", "relative", "access")
    argument: str
    relative: str | None
    access: str

    def __init__(self, argument: str, relative: str | None, access: str) -> None:
        _put(self, "argument", argument)
        _put(self, "relative", relative)
        _put(self, "access", access)


class Decision(_Value):
    """What the policy says of one call: ``action`` (allow, ask, deny), the rule that
    decided (None when the mode did), and why, in a sentence."""

    __slots__ = ("action", "reason", "rule")
    _fields = ("action", "reason", "rule")
    action: str
    reason: str
    rule: Rule | None

    def __init__(self, action: str, reason: str, rule: Rule | None = None) -> None:
        _put(self, "action", action)
        _put(self, "reason", reason)
        _put(self, "rule", rule)

    @property
    def source(self) -> str:
        return self.rule.source if self.rule is not None else "mode"

    def as_json(self) -> dict[str, Any]:
        return {"decision": self.action, "rule": self.rule.text if self.rule else None,
                "source": self.source, "reason": self.reason}


class Policy:
    """A mode and rules (see the module's docstring). ``Policy()`` is ``full-auto`` with no
    rule: only janito's own places are guarded."""

    def __init__(self, mode: str = FULL_AUTO, rules: list[Rule] | None = None,
                 mode_source: str = "default", files: list[str] | None = None) -> None:
        self.mode = mode
        self.rules: list[Rule] = [] if rules is None else rules
        #: Where the mode was set (a file, or "python"), for ``janito policy show``.
        self.mode_source = mode_source
        #: The files read, for ``janito policy show``.
        self.files: list[str] = [] if files is None else files
        if self.mode not in MODES:
            raise PolicyError(self.mode_source, f"mode must be one of {', '.join(MODES)}, "
                                                f"not {self.mode!r}")
        self._by_tool: dict[ToolFacts, tuple[Decision | None, bool]] = {}
        self._plans: dict[ToolFacts, _Plan] = {}

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.mode, self.rules, self.mode_source, self.files) == (
            other.mode, other.rules, other.mode_source, other.files)

    __hash__ = None  # type: ignore[assignment]  # it changes: rules may be added

    def __repr__(self) -> str:
        return (f"Policy(mode={self.mode!r}, rules={self.rules!r}, "
                f"mode_source={self.mode_source!r}, files={self.files!r})")

    # -- reading ------------------------------------------------------------------------

    @classmethod
    def from_toml(cls, text: str, source: str = "policy.toml", *,
                  restrict_only: bool = False) -> Policy:
        """The policy written in TOML ``text`` (PolicyError naming ``source:line``)."""
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # Python 3.10
            import tomli as tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PolicyError(source, f"is not valid TOML ({exc})") from None
        lines = [n for n, line in enumerate(text.splitlines(), 1)
                 if line.strip().replace(" ", "").startswith("[[rules]]")]
        return cls.from_data(data, source, lines=lines, restrict_only=restrict_only)

    @classmethod
    def from_data(cls, data: Mapping[str, Any], source: str = "python", *,
                  lines: Sequence[int] = (), restrict_only: bool = False) -> Policy:
        """The policy of a parsed file (or a dict written in Python)."""
        unknown = set(data) - {"mode", "rules"}
        if unknown:
            raise PolicyError(source, f"unknown key {sorted(unknown)[0]!r} (mode and rules "
                                      "are what a policy holds)")
        mode = data.get("mode", FULL_AUTO)
        if not isinstance(mode, str):
            raise PolicyError(source, "mode must be a string")
        raw = data.get("rules", [])
        if not isinstance(raw, list):
            raise PolicyError(source, "rules must be an array of tables ([[rules]])")
        rules = []
        for index, item in enumerate(raw):
            where = f"{source}:{lines[index]}" if index < len(lines) else f"{source} rule {index + 1}"
            rule = _rule(item, where)
            if restrict_only and rule.action == ALLOW:
                continue
            rules.append(rule)
        has_mode = "mode" in data
        return cls(mode=mode.strip().lower(), rules=rules,
                   mode_source=source if has_mode else "default", files=[source])

    @classmethod
    def load(cls, workspace_root: str | os.PathLike[str] | None = None) -> Policy:
        """The person's ``policy.toml`` and the workspace's ``.janito/policy.toml``, merged;
        ``Policy()`` when neither exists. PolicyError for a file that cannot be read."""
        from .config import config_dir

        policy = cls()
        mine = os.path.join(os.fspath(config_dir()), POLICY_FILE)
        found = _read(mine)
        if found is not None:
            policy = cls.from_toml(found, mine)
        if workspace_root is not None:
            project = os.path.join(os.fspath(workspace_root), WORKSPACE_POLICY)
            text = _read(project)
            if text is not None:
                policy = policy.merged(cls.from_toml(text, project, restrict_only=True))
        return policy

    def merged(self, other: Policy) -> Policy:
        """Both policies' rules, and the stricter of the two modes."""
        if MODES.index(other.mode) < MODES.index(self.mode) and other.mode_source != "default":
            mode, where = other.mode, other.mode_source
        else:
            mode, where = self.mode, self.mode_source
        return Policy(mode=mode, rules=[*self.rules, *other.rules], mode_source=where,
                      files=[*self.files, *other.files])

    # -- deciding -----------------------------------------------------------------------

    @property
    def path_rules(self) -> bool:
        """Whether any rule looks at paths (only then are reads resolved before a call)."""
        return any(rule.paths for rule in self.rules)

    def for_tool(self, tool: ToolFacts) -> tuple[Decision | None, bool]:
        """(what the policy says of ``tool`` whatever its arguments, or None when that
        depends on them; whether any rule of its could look at arguments or paths)."""
        known = self._by_tool.get(tool)
        if known is not None:
            return known
        relevant = [r for r in self.rules if r.matches_tool(tool)]
        depends = any(r.args or r.paths for r in relevant)
        answer: Decision | None = None
        if not depends:
            answer = self._decide(tool, relevant, [], {})
            if answer.action == ALLOW and "w" in tool.permissions:
                answer = None  # a write may land in .janito/ or .git/: look at its paths
            if answer is not None and answer.rule is None and self.mode == AUTO_EDIT \
                    and "w" in tool.permissions and "x" not in tool.permissions:
                answer = None  # auto-edit asks the paths
        self._by_tool[tool] = known = (answer, depends)
        return known

    def listing(self, tool: ToolFacts, *, declares_writes: bool = False) -> tuple[Decision, bool]:
        """(what the policy says of ``tool`` when no rule on arguments or paths matches the
        call, whether such a rule could change it): what ``janito tools`` shows. A tool
        that ``declares_writes`` is taken to write inside the workspace."""
        plain = [r for r in self.rules if r.matches_tool(tool) and not (r.args or r.paths)]
        conditional = any(r.matches_tool(tool) and (r.args or r.paths) for r in self.rules)
        inside = [PathUse("", "", WRITE)] if declares_writes else []
        return self._decide(tool, plain, inside, {}), conditional

    def decide(self, tool: ToolFacts, arguments: Mapping[str, Any],
               paths: Sequence[PathUse] = ()) -> Decision:
        """The decision for one call of ``tool`` with ``arguments`` naming ``paths``."""
        relevant = [r for r in self.rules if r.matches_tool(tool) and r.matches_args(arguments)]
        return self._decide(tool, relevant, paths, arguments)

    def plan(self, tool: ToolFacts) -> _Plan:
        """How calls of ``tool`` are decided (see :class:`_Plan`), worked out on first use."""
        plan = self._plans.get(tool)
        if plan is not None:
            return plan
        plan = _Plan()
        relevant = [r for r in self.rules if r.matches_tool(tool)]
        # A path rule can only be decided before the call on paths the tool declares; a
        # deny on paths needs no decision beforehand, since the guard refuses the path
        # itself as the tool touches it.
        declared = {READ} if tool.reads else set()
        if tool.writes:
            declared.add(WRITE)
        useful = [r for r in relevant if not r.paths or r.access & declared]
        plan.relevant = useful
        # Reads are resolved first only for a rule that must ask or allow on them: a deny
        # needs no decision beforehand, since the guard refuses the path itself as the
        # tool touches it. A write is always looked at (.janito/, .git/, auto-edit).
        plan.reads = tool.reads and any(r.paths and READ in r.access and r.action != DENY
                                        for r in useful)
        plan.writes = tool.writes and ("w" in tool.permissions or "x" in tool.permissions)
        if not any(r.args for r in useful) and not plan.reads and not plan.writes:
            plan.fixed = self._decide(tool, [r for r in useful if not r.paths], [], {})
        if not any(r.args for r in relevant if r.paths and r.action != ALLOW):
            plan.guards = (self.guard(tool, {}, approved=False),
                           self.guard(tool, {}, approved=True))
        self._plans[tool] = plan
        return plan

    def decide_call(self, tool: ToolFacts, arguments: Mapping[str, Any],
                    resolve: Any) -> Decision:
        """The decision for a call, resolving (``resolve(accesses)`` -> PathUses) only the
        declared paths some rule or janito's own places need."""
        plan = self.plan(tool)
        if plan.fixed is not None:
            return plan.fixed
        wanted = {access for access, needed in ((READ, plan.reads), (WRITE, plan.writes))
                  if needed}
        paths = resolve(wanted) if wanted else []
        relevant = [r for r in plan.relevant if not r.args or r.matches_args(arguments)]
        return self._decide(tool, relevant, paths, arguments)

    def guard_for(self, tool: ToolFacts, arguments: Mapping[str, Any], *,
                  approved: bool) -> PathGuard:
        guards = self.plan(tool).guards
        if guards is not None:
            return guards[1 if approved else 0]
        return self.guard(tool, arguments, approved=approved)

    def _decide(self, tool: ToolFacts, relevant: list[Rule], paths: Sequence[PathUse],
                arguments: Mapping[str, Any]) -> Decision:
        writes = [p for p in paths if p.access == WRITE]
        for use in writes:
            if use.relative is not None and _under(use.relative, PROTECTED_FOLDER):
                return Decision(DENY, f"{tool.name} would write {use.relative}, inside "
                                      f"{PROTECTED_FOLDER}/, which holds janito's own settings "
                                      "for this workspace: no tool may change it")
        matched = [r for r in relevant if _paths_match(r, paths)]
        for rule in matched:
            if rule.action == DENY:
                return Decision(DENY, f"the policy denies it ({rule.text}, {rule.source})", rule)
        git = next((p for p in writes if p.relative is not None
                    and _under(p.relative, GIT_FOLDER)), None)
        if git is not None:
            return Decision(ASK, f"{tool.name} would write {git.relative}: a write under "
                                 f"{GIT_FOLDER}/ always needs a person's approval")
        for rule in matched:
            if rule.action == ASK:
                return Decision(ASK, f"the policy asks a person first ({rule.text}, "
                                     f"{rule.source})", rule)
        for rule in matched:
            if rule.action == ALLOW:
                return Decision(ALLOW, f"the policy allows it ({rule.text}, {rule.source})", rule)
        return self._by_mode(tool, paths)

    def _by_mode(self, tool: ToolFacts, paths: Sequence[PathUse]) -> Decision:
        changes = "w" in tool.permissions or "x" in tool.permissions
        mode = self.mode
        if mode == FULL_AUTO or not changes:
            return Decision(ALLOW, f"mode {mode}")
        if mode == READ_ONLY:
            return Decision(DENY, f"the policy's mode is {READ_ONLY} ({self.mode_source}): "
                                  f"{tool.name} writes or runs code")
        if mode == AUTO_EDIT and "x" not in tool.permissions:
            writes = [p for p in paths if p.access == WRITE]
            if writes and all(p.relative is not None for p in writes):
                return Decision(ALLOW, f"mode {AUTO_EDIT}: a write inside the workspace")
            return Decision(ASK, f"mode {AUTO_EDIT} ({self.mode_source}): {tool.name} changes "
                                 "something outside the workspace's files")
        return Decision(ASK, f"mode {mode} ({self.mode_source}): {tool.name} "
                             f"{'runs code' if 'x' in tool.permissions else 'writes'}")

    def guard(self, tool: ToolFacts, arguments: Mapping[str, Any], *, approved: bool,
              within: Mapping[str, tuple[tuple[str, ...], ...]] | None = None) -> PathGuard:
        """What the tool may touch while it runs: the path patterns of the rules that
        apply to this call, and janito's own places. ``within``: the paths (as parts, by
        access) a person approved the call for; for those accesses the approval lifts the
        asks (``.git/`` and the ask rules) there only, and for the others everywhere."""
        denied: list[tuple[str, frozenset[str], Rule]] = []
        asked: list[tuple[str, frozenset[str], Rule]] = []
        for rule in self.rules:
            if not rule.paths or rule.action == ALLOW:
                continue
            if not (rule.matches_tool(tool) and rule.matches_args(arguments)):
                continue
            target = denied if rule.action == DENY else asked
            target.extend((pattern, rule.access, rule) for pattern in rule.paths)
        if approved:
            bound = frozenset(within or ())
            asked = [(p, a & bound, r) for p, a, r in asked if a & bound]
            return PathGuard(tuple(denied), tuple(asked), git_writable=WRITE not in bound,
                             within=within)
        return PathGuard(tuple(denied), tuple(asked), git_writable=False)

    # -- showing ------------------------------------------------------------------------

    def as_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode, "mode_source": self.mode_source, "files": list(self.files),
            "rules": [{"action": r.action, "tools": list(r.tools), "toolsets": list(r.toolsets),
                       "permissions": r.permissions, "args": {k: list(v) for k, v in r.args},
                       "paths": list(r.paths), "access": sorted(r.access), "reason": r.reason,
                       "source": r.source, "text": r.text} for r in self.rules],
        }


class ApprovalRequest(_Value):
    """What a person is asked to approve: one call, exactly as it would run.

    ``arguments`` are the validated arguments (what the tool will get), ``paths`` the
    real workspace paths the tool declares it reads or writes, ``rule`` and ``source``
    the rule that asked (None when the mode did), ``reason`` why, in a sentence. ``id``
    binds a decision to this call: bring ``{id: True}`` (or False) back to run it (or not).
    """

    __slots__ = (
        "arguments",
        "call_id",
        "id",
        "paths",
        "permissions",
        "reason",
        "rule",
        "source",
        "tool",
        "toolset",
    )
    _fields = ("id", "tool", "toolset", "permissions", "arguments", "paths", "call_id",
               "reason", "rule", "source")
    id: str
    tool: str
    toolset: str
    permissions: str
    arguments: dict[str, Any]
    paths: list[dict[str, Any]]
    call_id: str | None
    reason: str
    rule: str | None
    source: str

    def __init__(self, id: str, tool: str, toolset: str, permissions: str,
                 arguments: dict[str, Any], paths: list[dict[str, Any]], call_id: str | None,
                 reason: str, rule: str | None, source: str) -> None:
        _put(self, "id", id)
        _put(self, "tool", tool)
        _put(self, "toolset", toolset)
        _put(self, "permissions", permissions)
        _put(self, "arguments", arguments)
        _put(self, "paths", paths)
        _put(self, "call_id", call_id)
        _put(self, "reason", reason)
        _put(self, "rule", rule)
        _put(self, "source", source)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "tool": self.tool, "toolset": self.toolset,
                "permissions": self.permissions, "arguments": self.arguments,
                "paths": self.paths, "call_id": self.call_id, "reason": self.reason,
                "rule": self.rule, "source": self.source}

    def summary(self) -> str:
        """The call in one line, for a prompt."""
        shown = json.dumps(self.arguments, ensure_ascii=False)
        if len(shown) > 300:
            shown = shown[:297] + "..."
        return f"{self.tool}({shown})"


class PathGuard:
    """The paths one call may not touch while it runs, checked by the ``Workspace`` on the
    real path of every file and folder the tool opens, lists, writes, renames or removes.

    ``check(parts, access)`` raises WorkspaceError (``denied_by_policy``) for a path a deny
    rule covers, one an ask rule covers when the call was not approved, a write inside
    ``.janito/``, and a write inside ``.git/`` unless a person approved the call. An
    approval given for paths the person was shown (``within``, parts by access) counts on
    those, inside them and on the folders above them (made on the way) only: a link
    swapped in after the question does not carry the call elsewhere. Walks and listings
    leave out what ``hides`` says a read may not see.
    """

    __slots__ = ("_index", "asked", "denied", "git_writable", "within")

    def __init__(self, denied: tuple[tuple[str, frozenset[str], Rule], ...] = (),
                 asked: tuple[tuple[str, frozenset[str], Rule], ...] = (), *,
                 git_writable: bool = False,
                 within: Mapping[str, tuple[tuple[str, ...], ...]] | None = None) -> None:
        self.denied = denied
        self.asked = asked
        self.git_writable = git_writable
        self.within = dict(within or {})
        # Per access, what finds a path some pattern covers in a match or two, whatever
        # the number of rules: one expression for the patterns that match a name at any
        # depth (tried on each component), one per first folder for anchored patterns
        # that start with a plain name, and one for the rest.
        self._index: dict[str, _Index | None] = {READ: _Index.of(denied, asked, READ),
                                                 WRITE: _Index.of(denied, asked, WRITE)}

    def problem(self, parts: Sequence[str], access: str) -> str | None:
        """Why the path at real ``parts`` (from the workspace root) may not be touched with
        ``access``, or None."""
        if not parts:
            return None
        if access == WRITE and parts[0] == PROTECTED_FOLDER:
            return (f"{PROTECTED_FOLDER}/ holds janito's own settings for this workspace, "
                    "which no tool may change")
        approved = self._approved(parts, access)
        if access == WRITE and parts[0] == GIT_FOLDER and not (self.git_writable or approved):
            if access in self.within:
                return (f"a write under {GIT_FOLDER}/ needs a person's approval, and the "
                        f"person approved this call for {self._shown(access)} only")
            return (f"a write under {GIT_FOLDER}/ needs a person's approval, and this call "
                    "was not approved")
        index = self._index[access]
        if index is None or not index.covers(parts):
            return None
        relative = "/".join(parts)
        for pattern, access_set, rule in self.denied:
            if access in access_set and path_regex(pattern).fullmatch(relative):
                return f"the policy denies it ({rule.text}, {rule.source})"
        if approved:
            return None
        for pattern, access_set, rule in self.asked:
            if access in access_set and path_regex(pattern).fullmatch(relative):
                return (f"the policy asks a person first ({rule.text}, {rule.source}), and "
                        "this call was not approved for it")
        return None

    def _approved(self, parts: Sequence[str], access: str) -> bool:
        for shown in self.within.get(access, ()):
            common = min(len(shown), len(parts))
            if tuple(parts[:common]) == shown[:common]:
                return True
        return False

    def _shown(self, access: str) -> str:
        return ", ".join(sorted({"/".join(p) for p in self.within[access]}))

    def hides(self, parts: Sequence[str]) -> bool:
        return self.problem(parts, READ) is not None

    def inside_guarded(self, parts: Sequence[str]) -> bool:
        """Whether something below folder ``parts`` could be refused a write (removing or
        moving the folder then looks at each entry)."""
        return self._index[WRITE] is not None

    @property
    def reads_guarded(self) -> bool:
        """Whether any read can be refused (walks then look at every entry)."""
        return self._index[READ] is not None

    def masked(self) -> list[str]:
        """The patterns whose paths sandboxed code must not see (read-denied)."""
        return sorted({p for p, a, _ in (*self.denied, *self.asked) if READ in a})


class _Index:
    """Whether any of a guard's patterns (for one access) covers a path, quickly.

    Patterns that match a name at any depth are looked up per component: plain names in a
    set, ``*.pem`` and ``id_rsa*`` as suffixes and prefixes, and only the other globs as a
    regex (a single expression over the whole path backtracks at every slash, and costs
    more than the rest of a small call together).
    """

    __slots__ = ("by_first", "names", "other_names", "prefixes", "rest", "suffixes")

    def __init__(self, names: frozenset[str], prefixes: tuple[str, ...],
                 suffixes: tuple[str, ...], other_names: re.Pattern[str] | None,
                 by_first: dict[str, re.Pattern[str]], rest: re.Pattern[str] | None) -> None:
        self.names = names
        self.prefixes = prefixes
        self.suffixes = suffixes
        self.other_names = other_names
        self.by_first = by_first
        self.rest = rest

    @classmethod
    def of(cls, denied: Sequence[tuple[str, frozenset[str], Rule]],
           asked: Sequence[tuple[str, frozenset[str], Rule]], access: str) -> _Index | None:
        import re

        patterns = [p for p, a, _ in (*denied, *asked) if access in a]
        if not patterns:
            return None
        names: set[str] = set()
        prefixes: list[str] = []
        suffixes: list[str] = []
        other_names: list[str] = []
        firsts: dict[str, list[str]] = {}
        rest: list[str] = []
        for pattern in patterns:
            name = name_pattern(pattern)
            if name is not None:
                body = pattern.rstrip("/")
                if not _has_wildcard(body):
                    names.add(body)
                elif body.startswith("*") and not _has_wildcard(body[1:]):
                    suffixes.append(body[1:])
                elif body.endswith("*") and not _has_wildcard(body[:-1]):
                    prefixes.append(body[:-1])
                else:
                    other_names.append(name)
                continue
            first = first_literal(pattern)
            if first is not None:
                firsts.setdefault(first, []).append(path_regex(pattern).pattern)
            else:
                rest.append(path_regex(pattern).pattern)

        def combined(items: list[str]) -> re.Pattern[str] | None:
            return re.compile("|".join(f"(?:{i})" for i in items), re.S) if items else None

        return cls(frozenset(names), tuple(prefixes), tuple(suffixes), combined(other_names),
                   {k: combined(v) for k, v in firsts.items()},  # type: ignore[misc]
                   combined(rest))

    def covers(self, parts: Sequence[str]) -> bool:
        names, prefixes, suffixes, other = (self.names, self.prefixes, self.suffixes,
                                            self.other_names)
        for part in parts:
            if (part in names or (suffixes and part.endswith(suffixes))
                    or (prefixes and part.startswith(prefixes))
                    or (other is not None and other.fullmatch(part) is not None)):
                return True
        first = self.by_first.get(parts[0]) if self.by_first else None
        if first is not None and first.fullmatch("/".join(parts)) is not None:
            return True
        rest = self.rest
        return rest is not None and rest.fullmatch("/".join(parts)) is not None


def _has_wildcard(text: str) -> bool:
    return any(c in text for c in "*?[\\")


def _under(relative: str, folder: str) -> bool:
    return relative == folder or relative.startswith(folder + "/")


def _paths_match(rule: Rule, paths: Sequence[PathUse]) -> bool:
    if not rule.paths:
        return True
    patterns = rule.path_patterns()
    return any(use.relative is not None and use.access in rule.access
               and any(p.fullmatch(use.relative) for p in patterns) for use in paths)


def _strings(value: Any, what: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise PolicyError(where, f"{what} must be a string or an array of non-empty strings")
    return tuple(value)


def _rule(item: Any, where: str) -> Rule:
    if not isinstance(item, Mapping):
        raise PolicyError(where, "a rule must be a table")
    unknown = set(item) - _RULE_KEYS
    if unknown:
        raise PolicyError(where, f"unknown key {sorted(unknown)[0]!r} in a rule (one of "
                                 f"{', '.join(sorted(_RULE_KEYS))})")
    action = item.get("action")
    if not isinstance(action, str):
        raise PolicyError(where, f"a rule needs an action: {', '.join(ACTIONS)}")
    args: list[tuple[str, tuple[str, ...]]] = []
    raw_args = item.get("args", {})
    if not isinstance(raw_args, Mapping):
        raise PolicyError(where, "args must be a table of argument names to globs")
    for name, globs in raw_args.items():
        args.append((str(name), _strings(globs, f"args.{name}", where)))
    permissions = item.get("permissions", "")
    if isinstance(permissions, list):
        permissions = "".join(str(p) for p in permissions)
    if not isinstance(permissions, str):
        raise PolicyError(where, "permissions must be letters: r, w, x")
    access = item.get("access", [READ, WRITE])
    access_set = frozenset(_strings(access, "access", where))
    reason = item.get("reason", "")
    if not isinstance(reason, str):
        raise PolicyError(where, "reason must be a string")
    return Rule(action=action.strip().lower(),
                tools=_strings(item["tools"], "tools", where) if "tools" in item else (),
                toolsets=_strings(item["toolsets"], "toolsets", where) if "toolsets" in item else (),
                permissions=permissions, args=tuple(args),
                paths=_strings(item["paths"], "paths", where) if "paths" in item else (),
                access=access_set, reason=reason, source=where)


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PolicyError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PolicyError(path, "is not UTF-8 text") from None


def rules(items: Iterable[Mapping[str, Any]], *, source: str = "python") -> list[Rule]:
    """Rules written in Python as the dicts a file would hold."""
    return [_rule(item, f"{source} rule {index + 1}") for index, item in enumerate(items)]
