"""Finding skills: where they live, which one wins a name, what was wrong with the rest.

Skill folders are looked for, in this order of precedence:

1. the project: ``<workspace>/.janito/skills/``, ``<workspace>/.agents/skills/``, then
   ``<workspace>/.claude/skills/`` (the folders other clients of the Agent Skills format
   read), and only once the user has trusted the project's folder (see ``_trust``);
2. the user: ``<janito config folder>/skills/`` (``JANITO_CONFIG_DIR``, else
   ``$XDG_CONFIG_HOME/janito``, else ``~/.config/janito``), ``~/.agents/skills/``, then
   ``~/.claude/skills/``;
3. installed skill packs: every ``janito.skills`` entry point, ordered by distribution
   name, then entry-point name. The entry point's value names a package whose folder
   holds skill folders; the folder is located without importing the package.

Within one folder, skill folders are taken in name order. When two skills declare the
same ``name``, the first in that order is used and the other is *shadowed*: it stays
visible, with the skill that hides it. The skills of a project that is not trusted are
listed as *untrusted* and take part in nothing (they shadow nothing). A folder reached
twice (a project inside the home folder whose ``.agents/skills`` is the user's) is read
once, as the user's. A SKILL.md that cannot be used is a diagnostic naming the file; it
never stops the others from loading.

Every file is read through the skill's folder held as a workspace of its own (see
``Skill.open_folder``): a project skill's folder is reached through the project's
workspace, so it cannot lie outside it; and whatever the source, a link in a skill folder
(its SKILL.md included) is followed only while it stays inside that folder.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

# The tools' result types mark the keys a result may leave out with NotRequired, which
# typing has from 3.11 on.
if sys.version_info >= (3, 11):
    from typing import NotRequired as NotRequired
    from typing import TypedDict as TypedDict
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired as NotRequired
    from typing_extensions import TypedDict as TypedDict

from ._frontmatter import SKILL_FILE, SkillFileError, open_skill_file, read_front_matter

if TYPE_CHECKING:
    from janito_core import Failure
    from janito_core.workspace import Workspace

ENTRY_POINT_GROUP = "janito.skills"
PROJECT_FOLDERS = (".janito/skills", ".agents/skills", ".claude/skills")
HOME_FOLDERS = (".agents/skills", ".claude/skills")
SOURCES = ("project", "user", "installed")
PRECEDENCE = (
    "project (.janito/skills, .agents/skills, .claude/skills; once the project is trusted "
    "with `janito skills trust`) > user (<config>/skills, ~/.agents/skills, "
    "~/.claude/skills) > installed (by distribution name, then entry-point name); within a "
    "folder, by folder name"
)
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_FOLDERS_PER_ROOT = 1000
_PACKAGE_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")


Source = Literal["project", "user", "installed"]
Level = Literal["error", "warning"]


class SkillRow(TypedDict):
    """One skill, as ListSkills lists it and LoadSkill starts its answer.

    Attributes:
        name: The skill's name, for LoadSkill.
        description: What the skill is for and when to use it.
        source: Where it comes from; an earlier source wins a name.
        origin: The folder or skill pack it was found in.
        path: The skill's folder.
        distribution: The installed distribution that ships it.
        allowed_tools: The tools the skill says it expects to use (nothing is granted).
        warnings: What is wrong with its SKILL.md but did not stop it loading.
    """

    name: str
    description: str
    source: Source
    origin: str
    path: str
    distribution: NotRequired[str]
    allowed_tools: NotRequired[list[str]]
    warnings: NotRequired[list[str]]


class DiagnosticRow(TypedDict):
    """A SKILL.md or skill source that cannot be used as it is.

    Attributes:
        level: "error" when the skill is left out, "warning" when it loads anyway.
        path: The file or source concerned.
        message: What is wrong, for whoever maintains it.
        source: Where it was looked for.
        distribution: The installed distribution concerned.
    """

    level: Level
    path: str
    message: str
    source: Source | None
    distribution: NotRequired[str]


class SkillRoot(NamedTuple):
    """A folder whose sub-folders are skills, and where it came from.

    ``inside`` is the folder's path in the workspace for a project root: it is listed and
    its skills opened through the workspace, never through ``path`` (which is for showing).
    """

    source: Source
    path: str
    origin: str
    distribution: str | None = None
    inside: str | None = None


class Skill:
    """One usable skill: its front matter and where its folder is."""

    __slots__ = ("allowed_tools", "base", "description", "distribution", "folder",
                 "front_matter", "name", "origin", "place", "source", "warnings")

    def __init__(self, name: str, description: str, source: Source, origin: str, folder: str,
                 front_matter: dict[str, Any], distribution: str | None = None,
                 warnings: list[str] | None = None, *, base: Workspace | None = None,
                 place: str | None = None) -> None:
        self.name = name
        self.description = description
        self.source = source
        self.origin = origin
        self.folder = folder
        self.front_matter = front_matter
        self.distribution = distribution
        self.warnings = warnings if warnings is not None else []
        self.base = base
        self.place = place
        self.allowed_tools = allowed_tools(front_matter.get("allowed-tools"))

    def __repr__(self) -> str:
        return f"<Skill {self.name!r} ({self.source}) {self.folder}>"

    def open_folder(self) -> Workspace:
        """The skill's folder as a workspace of its own, to read every file of the skill
        through (close it when done).

        A project skill's folder is found again through the project's workspace (``base``
        and ``place``), so a folder swapped for a link since discovery cannot lead out of
        the project; a user or installed skill's folder is opened by its path. Raises
        WorkspaceError or OSError when the folder cannot be opened.
        """
        if self.base is not None and self.place is not None:
            return self.base.within(self.place)
        return _trusted().within(self.folder)

    @property
    def skill_file(self) -> str:
        return os.path.join(self.folder, SKILL_FILE)

    def as_row(self, workspace_root: str | None = None) -> SkillRow:
        row: SkillRow = {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "origin": self.origin,
            "path": display(self.folder, workspace_root),
        }
        if self.distribution:
            row["distribution"] = self.distribution
        if self.allowed_tools:
            row["allowed_tools"] = list(self.allowed_tools)
        if self.warnings:
            row["warnings"] = list(self.warnings)
        return row


class Diagnostic(NamedTuple):
    """A problem with one SKILL.md or one skill source, for whoever maintains it.

    ``skill`` is the name of the skill folder it is about, if it is about one.
    """

    level: Level
    path: str
    message: str
    source: Source | None = None
    distribution: str | None = None
    skill: str | None = None

    def as_dict(self, workspace_root: str | None = None) -> DiagnosticRow:
        row: DiagnosticRow = {
            "level": self.level,
            "path": display(self.path, workspace_root),
            "message": self.message,
            "source": self.source,
        }
        if self.distribution:
            row["distribution"] = self.distribution
        return row

    def text(self, workspace_root: str | None = None) -> str:
        return f"{display(self.path, workspace_root)}: {self.message}"


class SkillIndex:
    """What one look at every source found."""

    __slots__ = ("diagnostics", "roots", "shadowed", "skills", "untrusted", "workspace",
                 "workspace_root")

    def __init__(self, workspace: Workspace | None, roots: list[SkillRoot],
                 skills: dict[str, Skill], shadowed: list[tuple[Skill, Skill]],
                 diagnostics: list[Diagnostic], untrusted: list[Skill] | None = None) -> None:
        self.workspace = workspace
        self.workspace_root = workspace.root if workspace is not None else None
        self.roots = roots
        self.skills = skills
        self.shadowed = shadowed
        self.diagnostics = diagnostics
        self.untrusted = untrusted or []

    def untrusted_named(self, name: str) -> Skill | None:
        """A skill of the (untrusted) project called ``name``, if there is one."""
        return next((s for s in self.untrusted if s.name == name), None)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def problem_for(self, name: str) -> Diagnostic | None:
        """The error that kept a skill folder called ``name`` from loading, if any."""
        for diagnostic in self.diagnostics:
            if diagnostic.level == "error" and diagnostic.skill == name:
                return diagnostic
        return None

    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "error"]

    def rows(self) -> list[dict[str, Any]]:
        """Every skill, the shadowed ones too, for ``janito skills --json``."""
        rows: list[dict[str, Any]] = []
        for skill in self.skills.values():
            rows.append({**skill.as_row(self.workspace_root), "status": "active",
                         "shadowed_by": None})
        for hidden, winner in self.shadowed:
            rows.append({**hidden.as_row(self.workspace_root), "status": "shadowed",
                         "shadowed_by": {"source": winner.source,
                                         "path": display(winner.folder, self.workspace_root)}})
        for waiting in self.untrusted:
            rows.append({**waiting.as_row(self.workspace_root), "status": "untrusted",
                         "shadowed_by": None})
        for diagnostic in self.diagnostics:
            rows.append({"name": None, "description": None, "source": diagnostic.source,
                         "path": display(diagnostic.path, self.workspace_root),
                         "status": diagnostic.level, "reason": diagnostic.message,
                         **({"distribution": diagnostic.distribution}
                            if diagnostic.distribution else {})})
        return rows


def display(path: str, workspace_root: str | None) -> str:
    """A path relative to the workspace when it lies inside, else absolute; '/' separated."""
    if workspace_root:
        root = os.path.abspath(workspace_root)
        absolute = os.path.abspath(path)
        if absolute == root:
            return "."
        prefix = root if root.endswith(os.sep) else root + os.sep
        if absolute.startswith(prefix):
            return os.path.relpath(absolute, root).replace(os.sep, "/")
    return path.replace(os.sep, "/")


# -- sources ----------------------------------------------------------------------------


def project_roots(workspace_root: str) -> list[SkillRoot]:
    return [
        SkillRoot("project", os.path.join(workspace_root, *folder.split("/")), folder,
                  inside=folder)
        for folder in PROJECT_FOLDERS
    ]


def _trusted() -> Workspace:
    """What the folders outside the project (user, installed packs) are opened through:
    their paths come from janito's configuration and installed packages, not from a
    model, so they may lead anywhere; a skill folder opened from them is still confined."""
    from janito_core.workspace import Workspace

    return Workspace.unconfined()


def user_roots() -> list[SkillRoot]:
    from janito_core.secrets import config_dir

    roots = [SkillRoot("user", os.path.join(os.fspath(config_dir()), "skills"),
                       "user config folder")]
    home = os.path.expanduser("~")
    if home and home != "~":
        roots.extend(SkillRoot("user", os.path.join(home, *folder.split("/")), f"~/{folder}")
                     for folder in HOME_FOLDERS)
    return roots



def installed_roots(diagnostics: list[Diagnostic]) -> list[SkillRoot]:
    """The folders of every ``janito.skills`` entry point, imported nowhere."""
    try:
        import importlib_metadata

        points = list(importlib_metadata.entry_points(group=ENTRY_POINT_GROUP))
    except Exception as exc:  # a broken metadata folder must not stop the others
        diagnostics.append(Diagnostic("error", ENTRY_POINT_GROUP,
                                      f"installed skill packs cannot be listed: {exc}",
                                      "installed"))
        return []
    found: list[tuple[str, str, str, str]] = []
    for point in points:
        distribution, version = _identity(point)
        found.append((distribution, point.name, point.value, version))
    roots: list[SkillRoot] = []
    for distribution, name, value, version in sorted(found):
        origin = f"{distribution} {version} (entry point {name!r})"
        try:
            folders = package_folders(value)
        except LookupError as exc:
            diagnostics.append(Diagnostic(
                "error", f"{ENTRY_POINT_GROUP}:{name}",
                f"skill pack {name!r} of {distribution} cannot be used: {exc}",
                "installed", distribution,
            ))
            continue
        roots.extend(SkillRoot("installed", folder, origin, distribution) for folder in folders)
    return roots


def _identity(point: Any) -> tuple[str, str]:
    dist = getattr(point, "dist", None)
    if dist is None:
        return "unknown", "0"
    try:
        from janito_core.discovery import dist_identity

        name, version, _ = dist_identity(dist)
        return name, version
    except Exception:
        return "unknown", "0"


def package_folders(value: str) -> list[str]:
    """The folders of package ``value`` (a dotted name), found without importing it.

    Only the finders are asked: a top-level name through ``importlib.util.find_spec``,
    each further part through the path finder on its parent's folders. LookupError says
    what is wrong with the value.
    """
    import importlib.machinery
    import importlib.util

    text = value.strip()
    if not _PACKAGE_PATH.match(text):
        raise LookupError(
            f"the entry point value {value!r} must be a dotted package name such as 'acme_skills'"
        )
    parts = text.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError) as exc:
        raise LookupError(f"package {parts[0]!r} cannot be located ({exc})") from None
    for index, part in enumerate(parts[1:], start=1):
        if spec is None:
            break
        locations = list(spec.submodule_search_locations or [])
        if not locations:
            raise LookupError(f"{'.'.join(parts[:index])!r} is a module, not a package")
        spec = importlib.machinery.PathFinder.find_spec(part, locations)
    if spec is None:
        raise LookupError(f"package {text!r} is not installed")
    locations = [os.fspath(p) for p in (spec.submodule_search_locations or [])]
    if not locations:
        raise LookupError(f"{text!r} is a module, not a package folder holding skill folders")
    return [p for p in dict.fromkeys(locations) if os.path.isdir(p)]


# -- scanning ---------------------------------------------------------------------------


def scan_root(root: SkillRoot, diagnostics: list[Diagnostic],
              workspace: Workspace | None = None) -> list[Skill]:
    """The skills directly inside ``root``: each sub-folder holding a SKILL.md.

    A project root is listed, and its skill folders opened, through ``workspace``: a
    skill folder that is a link leading out of the project is refused, one leading
    elsewhere inside it is followed. Other roots are opened by their paths.
    """
    from janito_core import WorkspaceError

    if root.inside is not None and workspace is not None:
        base, place = workspace, root.inside
    else:
        base, place = _trusted(), root.path

    def problem(path: str, message: str, level: Level = "error", skill: str | None = None) -> None:
        diagnostics.append(Diagnostic(level, path, message, root.source, root.distribution,
                                      skill))

    try:
        entries = base.listdir(place)
    except FileNotFoundError:
        return []
    except NotADirectoryError:
        problem(root.path, "a skills folder was expected here")
        return []
    except WorkspaceError as exc:
        problem(root.path, f"the skills folder cannot be used: {_refusal(exc, 'workspace')}")
        return []
    except OSError as exc:
        problem(root.path, f"the skills folder cannot be listed ({exc.strerror or exc})")
        return []
    skills: list[Skill] = []
    folders = 0
    for entry in entries:
        if entry.startswith((".", "__")):
            continue
        folder_path = os.path.join(root.path, entry)
        folder: Workspace | None = None
        refusal = ""
        try:
            folder = base.within(f"{place.rstrip('/')}/{entry}")
        except (FileNotFoundError, NotADirectoryError):
            continue  # a file, or a link leading nowhere: not a skill
        except WorkspaceError as exc:
            refusal = f"the skill folder cannot be used: {_refusal(exc, 'workspace')}"
        except OSError as exc:
            refusal = f"the skill folder cannot be opened ({exc.strerror or exc})"
        folders += 1
        if folders > MAX_FOLDERS_PER_ROOT:
            if folder is not None:
                folder.close()
            problem(root.path, f"more than {MAX_FOLDERS_PER_ROOT} folders; the rest are not "
                    "looked at", level="warning")
            break
        if folder is None:
            problem(folder_path, refusal, skill=entry)
            continue
        with folder:
            skill = load_skill_file(folder, folder_path, root, diagnostics)
        if skill is not None:
            if root.inside is not None and workspace is not None:
                skill.base, skill.place = workspace, f"{root.inside}/{entry}"
            skills.append(skill)
    return skills


def _refusal(exc: Any, boundary: str) -> str:
    """Why a walk refused a path, for a diagnostic."""
    if exc.error_type == "outside_workspace":
        return f"it is a symbolic link leading outside the {boundary}; refused"
    if exc.error_type == "symlink_loop":
        return "it goes round a loop of symbolic links"
    return str(exc.reason)


def _missing_skill_file(folder: Workspace, folder_path: str, root: SkillRoot,
                        diagnostics: list[Diagnostic]) -> None:
    """A folder without SKILL.md is ignored, unless it looks like a misnamed one."""
    try:
        names = folder.listdir(".")
    except OSError:
        return
    skill = os.path.basename(folder_path)
    for name in names:
        if name == SKILL_FILE:  # a link to a file that does not exist
            diagnostics.append(Diagnostic(
                "error", os.path.join(folder_path, name), f"{SKILL_FILE} must be a regular file",
                root.source, root.distribution, skill))
            return
        if name.lower() == SKILL_FILE.lower():
            diagnostics.append(Diagnostic(
                "error", os.path.join(folder_path, name),
                f"the file must be named exactly {SKILL_FILE!r}", root.source, root.distribution,
                skill))
            return


def load_skill_file(folder: Workspace, folder_path: str, root: SkillRoot,
                    diagnostics: list[Diagnostic]) -> Skill | None:
    """The skill in ``folder`` (held open, shown as ``folder_path``) from its front matter,
    or None with a diagnostic (none for a folder without SKILL.md: it is no skill)."""
    skill_file = os.path.join(folder_path, SKILL_FILE)
    folder_name = os.path.basename(folder_path)

    def error(message: str) -> None:
        diagnostics.append(Diagnostic("error", skill_file, message, root.source,
                                      root.distribution, folder_name))

    try:
        front = read_front_matter(open_skill_file(folder))
    except SkillFileError as exc:
        if str(exc) == "the file does not exist":
            _missing_skill_file(folder, folder_path, root, diagnostics)
        else:
            error(str(exc))
        return None
    name = front.get("name")
    description = front.get("description")
    if name is None:
        error("the front matter has no 'name'")
        return None
    if not isinstance(name, str) or not name.strip():
        error(f"'name' must be a non-empty string, not {_show(name)}")
        return None
    if description is None:
        error("the front matter has no 'description'")
        return None
    if not isinstance(description, str) or not description.strip():
        error(f"'description' must be a non-empty string, not {_show(description)}")
        return None
    name = name.strip()
    description = " ".join(description.split())
    warnings: list[str] = []
    if len(name) > MAX_NAME or not NAME_PATTERN.match(name):
        warnings.append(
            f"name {name!r} should be at most {MAX_NAME} lowercase letters, digits and single "
            "hyphens, not starting or ending with a hyphen"
        )
    if name != folder_name:
        warnings.append(f"name {name!r} differs from its folder name {folder_name!r}")
    if len(description) > MAX_DESCRIPTION:
        warnings.append(f"description is longer than {MAX_DESCRIPTION} characters")
    warnings.extend(optional_field_problems(front))
    for warning in warnings:
        diagnostics.append(Diagnostic("warning", skill_file, warning, root.source,
                                      root.distribution, folder_name))
    return Skill(name, description, root.source, root.origin, folder_path, front,
                 root.distribution, warnings)


def _show(value: object) -> str:
    if isinstance(value, str):
        return "an empty string"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()} (quote it)"
    if isinstance(value, (int, float)):
        return f"the number {value} (quote it)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def discover(
    workspace: Workspace | str | os.PathLike[str] | None,
    *,
    user: bool = True,
    installed: bool = True,
    report: bool = False,
) -> SkillIndex:
    """Look at every source in precedence order and return what was found.

    ``workspace`` is the project, a Workspace or its folder (None: no project skills).
    ``report`` sends a summary and every diagnostic through janito's standalone reporter
    functions.
    """
    if workspace is not None and isinstance(workspace, (str, os.PathLike)):
        from janito_core.workspace import Workspace

        workspace = Workspace(workspace)
    diagnostics: list[Diagnostic] = []
    roots: list[SkillRoot] = []
    personal = user_roots() if user else []
    if workspace is not None:
        mine = {os.path.realpath(r.path) for r in personal}
        roots.extend(r for r in project_roots(workspace.root)
                     if os.path.realpath(r.path) not in mine)
    roots.extend(_once(personal))
    if installed:
        roots.extend(installed_roots(diagnostics))
    from ._trust import is_trusted

    trusted = workspace is not None and is_trusted(workspace.root)
    winners: dict[str, Skill] = {}
    shadowed: list[tuple[Skill, Skill]] = []
    untrusted: list[Skill] = []
    for root in roots:
        for skill in scan_root(root, diagnostics, workspace):
            if root.source == "project" and not trusted:
                untrusted.append(skill)
                continue
            existing = winners.get(skill.name)
            if existing is None:
                winners[skill.name] = skill
            else:
                shadowed.append((skill, existing))
    index = SkillIndex(workspace, roots, dict(sorted(winners.items())), shadowed,
                       diagnostics, untrusted)
    if report:
        report_index(index)
    return index


def summary(index: SkillIndex) -> str:
    """One line saying what is loaded, for people."""
    if not index.skills:
        text = "no skills found"
    else:
        counts = {source: 0 for source in SOURCES}
        for skill in index.skills.values():
            counts[skill.source] = counts.get(skill.source, 0) + 1
        parts = [f"{n} {source}" for source, n in counts.items() if n]
        plural = "" if len(index.skills) == 1 else "s"
        text = f"{len(index.skills)} skill{plural} available ({', '.join(parts)})"
    if index.shadowed:
        text += f", {len(index.shadowed)} shadowed"
    if index.untrusted:
        text += (f", {len(index.untrusted)} in this project not offered until it is trusted "
                 "(janito skills trust)")
    errors = len(index.errors())
    if errors:
        text += f", {errors} unusable SKILL.md file{'' if errors == 1 else 's'}"
    return text


def report_index(index: SkillIndex) -> None:
    """Report the summary, each shadowed skill and each diagnostic (stderr by default)."""
    from janito_core.reporter import report_info

    report_info(f"Skills: {summary(index)}")
    root = index.workspace_root
    for hidden, winner in index.shadowed:
        report_info(
            f"Skill {hidden.name!r} at {display(hidden.folder, root)} ({hidden.source}) is "
            f"shadowed by {display(winner.folder, root)} ({winner.source})"
        )
    report_diagnostics(index)



def report_diagnostics(index: SkillIndex) -> None:
    """Report each unusable SKILL.md as an error and each doubtful one as a warning."""
    from janito_core.reporter import report_error, report_warning

    root = index.workspace_root
    for diagnostic in index.diagnostics:
        if diagnostic.level == "error":
            report_error(f"Skill not loaded: {diagnostic.text(root)}")
        else:
            report_warning(f"Skill warning: {diagnostic.text(root)}")


def missing_skill(index: SkillIndex, name: str, **echo: Any) -> Failure:
    """The failure result for a skill name that is not available, saying why (with
    ``echo``, the arguments of the call)."""
    import difflib

    from janito_core.dispatch import failure

    root = index.workspace_root
    waiting = index.untrusted_named(name)
    if waiting is not None:
        return failure(
            f"Skill {name!r} comes with this project, whose skills are not offered until the "
            "user trusts its folder (the user can run `janito skills trust` there).",
            "not_trusted", name=name, path=display(waiting.folder, root), **echo)
    problem = index.problem_for(name)
    if problem is not None:
        return failure(
            f"Skill {name!r} cannot be loaded: {problem.text(root)}.", "invalid_skill",
            name=name, path=display(problem.path, root), **echo)
    names = list(index.skills)
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return failure(f"There is no skill named {name!r}.{hint}", "not_found",
                   name=name, available=names[:100], suggestions=close, **echo)


def _once(roots: list[SkillRoot]) -> list[SkillRoot]:
    """``roots`` without a folder seen before (the same folder reached by two paths)."""
    seen: set[str] = set()
    kept = []
    for root in roots:
        real = os.path.realpath(root.path)
        if real not in seen:
            seen.add(real)
            kept.append(root)
    return kept


def allowed_tools(value: Any) -> list[str]:
    """The tools an ``allowed-tools`` field names: a space-separated string (the format's
    own form; commas, as some clients write it, also separate), or a list of strings.
    Spaces inside parentheses, as in ``Bash(git add:*)``, stay part of the name."""
    if isinstance(value, list):
        return [v.strip() for v in value if isinstance(v, str) and v.strip()]
    if not isinstance(value, str):
        return []
    tools: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        if depth == 0 and (char.isspace() or char == ","):
            if current:
                tools.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        tools.append("".join(current))
    return tools


def optional_field_problems(front: dict[str, Any]) -> list[str]:
    """Warnings for the optional fields of the Agent Skills format that break its limits."""
    problems: list[str] = []
    if "license" in front and not isinstance(front["license"], str):
        problems.append("'license' should be a string (a license name or a file of the skill)")
    if "compatibility" in front:
        value = front["compatibility"]
        if not isinstance(value, str) or not value.strip():
            problems.append("'compatibility' should be a non-empty string")
        elif len(value) > MAX_COMPATIBILITY:
            problems.append(f"'compatibility' is longer than {MAX_COMPATIBILITY} characters")
    if "metadata" in front:
        value = front["metadata"]
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            problems.append("'metadata' should map strings to strings")
    if "allowed-tools" in front:
        value = front["allowed-tools"]
        if not (isinstance(value, str) or (isinstance(value, list)
                                           and all(isinstance(v, str) for v in value))):
            problems.append("'allowed-tools' should be a space-separated string of tool names")
    return problems
