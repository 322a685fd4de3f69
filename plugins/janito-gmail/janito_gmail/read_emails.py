"""ReadEmails: the newest messages of a folder, or those matching a search, with text bodies;
page after page, or a whole conversation."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import Failure, tool
from janito_core.constraints import Interval
from janito_core.results import counted

from . import _reading
from ._base import MailTool
from ._errors import INVALID_ARGUMENTS, MailError
from ._imap import Mailbox, Selection, imap_session
from ._params import Before, Folder, Ids, MessageId, Query, Sender, Since, Subject, UnreadOnly
from ._results import Message, MissingIds, NotRequired, Selected
from ._settings import Settings

MAX_LIMIT = 500
MAX_BODY_CHARS = 100_000


class Emails(Selected):
    success: Literal[True]
    folder: Annotated[str, "The folder read."]
    count: Annotated[int, "The messages returned."]
    matching: Annotated[int, "Every message the choice matches (the whole conversation)."]
    has_more: Annotated[bool, "Whether more match than were returned."]
    messages: Annotated[list[Message], "Newest first (a conversation: oldest first)."]
    before_id: NotRequired[Annotated[int, "The before_id asked for."]]
    next_before_id: NotRequired[Annotated[int, "The before_id of the next page."]]
    missing_ids: NotRequired[MissingIds]
    thread_of: NotRequired[Annotated[int, "The message whose conversation this is."]]
    thread_by: NotRequired[Annotated[Literal["X-GM-THRID", "References"],
                                     "How the conversation was found."]]
    order: NotRequired[Literal["oldest first"]]


@tool(permissions="r")
class ReadEmails(MailTool):
    """Read emails: newest first, by search, page by page or a whole thread; from, subject, date, body, attachments."""

    def run(self, folder: Folder = "INBOX",
            limit: Annotated[int, Interval(ge=1, le=MAX_LIMIT)] = 20,
            unread_only: UnreadOnly = False,
            query: Query = None, sender: Sender = None, subject: Subject = None,
            since: Since = None, before: Before = None, ids: Ids = None,
            before_id: MessageId | None = None, thread_of: MessageId | None = None,
            max_body_chars: Annotated[int, Interval(ge=0, le=MAX_BODY_CHARS)] = 2000,
            ) -> Emails | Failure:
        """Read messages without marking them read; the newest come first.

        Args:
            folder: The folder to read, e.g. "INBOX" or "[Gmail]/All Mail".
            limit: At most this many messages, the newest matching ones.
            ids: Read exactly these messages (ids as earlier results gave them).
            before_id: The next page: only messages older than this id. A result that
                has more gives it as next_before_id.
            thread_of: Read the whole conversation of this message (its id in folder),
                oldest first, including your own replies; each message names its folder.
            max_body_chars: Cut each text body to this many characters (0 for no body).
        """
        echo = {"folder": folder}

        def action(settings: Settings) -> dict[str, Any]:
            selection = Selection.build(ids=ids, query=query, sender=sender, subject=subject,
                                        since=since, before=before, unread_only=unread_only)
            if thread_of is not None:
                if selection.ids is not None or selection.has_filters() or before_id:
                    raise MailError(INVALID_ARGUMENTS, "thread_of reads one whole "
                                                       "conversation: give it without ids, "
                                                       "search criteria or before_id")
                self.say("start", f"Reading the conversation of message {thread_of}")
                with imap_session(settings) as mailbox:
                    return self._thread(mailbox, folder, thread_of, limit, max_body_chars)
            self.say("start", f"Reading emails in {folder}")
            with imap_session(settings) as mailbox:
                info = mailbox.select(folder, readonly=True)
                exists = int(info.get(b"EXISTS", 0))
                missing: list[int] = []
                if selection.ids:
                    found, missing = mailbox.resolve(selection)
                    chosen = _reading.page_of(found, limit, before_id)
                else:
                    chosen = _reading.page(mailbox, selection, exists=exists, limit=limit,
                                           before_id=before_id)
                messages = _reading.read_messages(mailbox, chosen.uids, max_body_chars)
            result: dict[str, Any] = {
                "success": True, "folder": folder, **selection.describe(),
                "count": len(messages), "matching": chosen.matching,
                "has_more": chosen.has_more, "messages": messages,
            }
            if before_id is not None:
                result["before_id"] = before_id
            if chosen.has_more and chosen.uids:
                result["next_before_id"] = min(chosen.uids)
            if missing:
                result["missing_ids"] = missing
            self.say("result", f"{len(messages)} of {counted(chosen.matching, 'message')}")
            return result

        return self.execute(action, **echo)

    def _thread(self, mailbox: Mailbox, folder: str, uid: int, limit: int,
                max_chars: int) -> dict[str, Any]:
        """The conversation: by Gmail's thread id on Gmail, else by References headers."""
        if mailbox.gmail:
            where, uids = _reading.gmail_thread(mailbox, folder, uid)
            places = [(where, u) for u in uids]
            method = "X-GM-THRID"
        else:
            places = _reading.reference_thread(mailbox, folder, uid)
            method = "References"
        messages: list[dict[str, Any]] = []
        by_folder: dict[str, list[int]] = {}
        for place, number in places:
            by_folder.setdefault(place, []).append(number)
        for place, numbers in by_folder.items():
            mailbox.select(place, readonly=True)
            for message in _reading.read_messages(mailbox, sorted(numbers), max_chars):
                messages.append({"folder": place, **message})
        messages.sort(key=_when)
        shown = messages[-limit:]
        self.say("result", f"{counted(len(shown), 'message')} in the conversation")
        return {"success": True, "folder": folder, "thread_of": uid, "thread_by": method,
                "count": len(shown), "matching": len(messages),
                "has_more": len(messages) > len(shown), "order": "oldest first",
                "messages": shown}


def _when(message: dict[str, Any]) -> tuple[float, str, int]:
    """When a message was written, for putting a conversation in order."""
    import datetime

    try:
        moment = datetime.datetime.fromisoformat(str(message.get("date")))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.timezone.utc)
        stamp = moment.timestamp()
    except ValueError:
        stamp = 0.0
    return stamp, str(message["folder"]), int(message["id"])


def main(argv: list[str] | None = None) -> int:
    """Run ReadEmails from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ReadEmails, argv)


if __name__ == "__main__":
    main()
