"""The shared path of every tool that changes a mailbox: select, resolve, dry run, act."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from janito_core.results import counted

from ._imap import PREVIEW_LIMIT, Mailbox, Selection, imap_session
from ._settings import Settings

if TYPE_CHECKING:
    from ._base import MailTool


def change_messages(
    settings: Settings,
    *,
    folder: str,
    selection: Selection,
    dry_run: bool,
    verb: str,
    apply: Callable[[Mailbox, list[int]], dict[str, Any]],
    prepare: Callable[[Mailbox], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Act on the messages ``selection`` picks in ``folder`` and report what happened.

    ``verb`` names the action for messages ("mark", "move", ...). A selection that would
    mean every message is refused before connecting. ``prepare`` runs before the folder
    is opened (to check a destination, say) and may add fields to the result. With
    ``dry_run`` the folder is opened read-only and nothing changes: the result lists
    what would be affected.
    """
    selection.require_criteria(verb)
    with imap_session(settings) as mailbox:
        extra = prepare(mailbox) if prepare is not None else {}
        mailbox.select(folder, readonly=dry_run)
        uids, missing = mailbox.resolve(selection)
        result: dict[str, Any] = {"success": True, "folder": folder, **selection.describe(),
                                  **extra, "dry_run": dry_run}
        if dry_run:
            result["count"] = len(uids)
            result["would_affect"] = mailbox.summaries(uids[:PREVIEW_LIMIT])
            if len(uids) > PREVIEW_LIMIT:
                result["would_affect_shown"] = PREVIEW_LIMIT
            result["affected_ids"] = uids
        elif not uids:
            result["count"] = 0
            result["affected_ids"] = []
            result["note"] = "no message matched, nothing changed"
        else:
            result.update(apply(mailbox, uids))
            result["count"] = len(uids)
            result["affected_ids"] = uids
        if missing:
            result["missing_ids"] = missing
        return result


def run_change(
    tool: MailTool,
    echo: dict[str, Any],
    *,
    folder: str,
    criteria: dict[str, Any],
    dry_run: bool,
    verb: str,
    starting: str,
    would: str,
    done: str,
    apply: Callable[[Mailbox, list[int]], dict[str, Any]],
    prepare: Callable[[Mailbox], dict[str, Any]] | None = None,
    check: Callable[[], object] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole ``run()`` of a tool that changes messages, inside ``tool.execute``.

    ``check`` looks at the tool's own arguments first, ``criteria`` are the keywords of
    ``Selection.build``, and the reports read "``starting`` (dry run)" and "N messages``would``"
    or "N messages``done``". ``extra`` is added to the result; ``echo`` repeats the inputs
    in a failure. The rest is ``change_messages``.
    """

    def action(settings: Settings) -> dict[str, Any]:
        if check is not None:
            check()
        selection = Selection.build(**criteria)
        tool.say("start", starting + (" (dry run)" if dry_run else ""))
        result = change_messages(settings, folder=folder, selection=selection, dry_run=dry_run,
                                 verb=verb, apply=apply, prepare=prepare)
        if extra:
            result.update(extra)
        tool.say("result", counted(result['count'], 'message') + (would if dry_run else done))
        return result

    return tool.execute(action, **echo)
