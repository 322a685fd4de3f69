"""ListDrafts: the drafts in the Drafts folder, newest first."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import Failure, tool
from janito_core.constraints import Interval

from . import _drafts, _reading
from ._base import MailTool
from ._imap import Selection, imap_session
from ._params import MessageId
from ._results import Message, NotRequired, TypedDict
from ._settings import Settings

MAX_LIMIT = 200
MAX_BODY_CHARS = 100_000


class Drafts(TypedDict):
    success: Literal[True]
    drafts_folder: str
    count: int
    total: Annotated[int, "Every draft in the folder."]
    has_more: Annotated[bool, "Whether older drafts are left: ask again with next_before_id."]
    drafts: Annotated[list[Message], "The drafts, newest first."]
    next_before_id: NotRequired[Annotated[int, "The before_id of the next page."]]


@tool(permissions="r")
class ListDrafts(MailTool):
    """List the drafts (recipients, subject, date, the start of the body, attachments), newest first."""

    def run(self, limit: Annotated[int, Interval(ge=1, le=MAX_LIMIT)] = 20,
            before_id: MessageId | None = None,
            max_body_chars: Annotated[int, Interval(ge=0, le=MAX_BODY_CHARS)] = 500,
            ) -> Drafts | Failure:
        """List the drafts of the Drafts folder; their ids are what UpdateDraft and
        SendDraft take.

        Args:
            limit: At most this many drafts.
            before_id: The next page: only drafts older than this id (next_before_id).
            max_body_chars: Cut each body to this many characters (0 for none).
        """

        def action(settings: Settings) -> dict[str, Any]:
            self.say("start", "Listing drafts")
            with imap_session(settings) as mailbox:
                name = _drafts.folder(mailbox)
                info = mailbox.select(name, readonly=True)
                chosen = _reading.page(mailbox, Selection(), exists=int(info.get(b"EXISTS", 0)),
                                       limit=limit, before_id=before_id)
                drafts = _reading.read_messages(mailbox, chosen.uids, max_body_chars)
            self.say("result", f"{len(drafts)} drafts")
            result: dict[str, Any] = {"success": True, "drafts_folder": name,
                                      "count": len(drafts), "total": chosen.matching,
                                      "has_more": chosen.has_more, "drafts": drafts}
            if chosen.has_more and chosen.uids:
                result["next_before_id"] = min(chosen.uids)
            return result

        return self.execute(action)


def main(argv: list[str] | None = None) -> int:
    """Run ListDrafts from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ListDrafts, argv)


if __name__ == "__main__":
    main()
