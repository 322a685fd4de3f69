"""UpdateDraft: change a draft; what is not given stays as it was."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from janito_core import Failure, tool

from . import _compose, _drafts
from ._base import MailTool
from ._imap import imap_session
from ._params import Addresses, Attachments, MessageId, OneLine
from ._results import Addressed, AttachedFiles, DraftSaved, LeftOut, NotRequired, Renamed
from ._settings import Settings


class DraftUpdated(Addressed, DraftSaved):
    success: Literal[True]
    id: Annotated[int, "The draft's old id, removed."]
    message_id: Annotated[str, "The draft's Message-ID (kept)."]
    attachments: AttachedFiles
    renamed: NotRequired[Annotated[list[Renamed], "Attachments kept under a safe name."]]
    left_out: NotRequired[LeftOut]


@tool(permissions="w")
class UpdateDraft(MailTool):
    """Change a draft: recipients, subject, body or attachments; the rest is kept."""

    reads_paths: ClassVar[tuple[str, ...]] = ("attachments",)

    def run(self, id: MessageId, to: Addresses | None = None, subject: OneLine | None = None,
            body: str | None = None, cc: Addresses | None = None,
            bcc: Addresses | None = None, html_body: str | None = None,
            attachments: Attachments | None = None) -> DraftUpdated | Failure:
        """Replace parts of a draft. The draft is saved anew, so it gets a new id (in
        the result); the old one is removed.

        Args:
            id: The draft's id, as ListDrafts or CreateDraft gave it.
            to: New recipients (replacing the old; [] removes them all).
            subject: A new subject.
            body: A new plain-text body.
            cc: New addresses to copy (replacing the old).
            bcc: New addresses to copy invisibly (replacing the old).
            html_body: A new HTML body ("" removes it).
            attachments: Files of the workspace to attach instead of the draft's current
                attachments ([] removes them all).
        """
        echo = {"id": id}

        def action(settings: Settings) -> dict[str, Any]:
            new_to = _compose.addresses("to", to) if to is not None else None
            new_cc = _compose.addresses("cc", cc) if cc is not None else None
            new_bcc = _compose.addresses("bcc", bcc) if bcc is not None else None
            files = (_compose.workspace_attachments(self.workspace, attachments)
                     if attachments is not None else None)
            self.say("start", f"Updating draft {id}")
            with imap_session(settings) as mailbox:
                name, old = _drafts.load(mailbox, id)
                text, markup, kept = _drafts.parts_of(old)
                left_out: list[str] = []

                def stored(header: str, given: list[str] | None) -> list[str]:
                    if given is not None:
                        return given
                    usable, unusable = _drafts.addresses_of(old, header)
                    left_out.extend(unusable)
                    return usable

                final_to = stored("To", new_to)
                final_cc = stored("Cc", new_cc)
                final_bcc = stored("Bcc", new_bcc)
                _compose.check_recipients(final_to, final_cc, final_bcc)
                sender = ", ".join(_drafts.addresses_of(old, "From")[0]) or settings.from_address
                final_subject = subject if subject is not None else \
                    _compose.settled("Subject", str(old.get("Subject") or ""))
                attached = files if files is not None else kept
                msg = _compose.build(
                    sender=sender, to=final_to, cc=final_cc, bcc=final_bcc,
                    subject=final_subject, body=body if body is not None else text,
                    html_body=(html_body or None) if html_body is not None else markup,
                    attachments=attached, thread=_drafts.thread_of(old),
                    message_id=_drafts.message_id_of(old))
                saved = _drafts.save(mailbox, msg)
                _drafts.remove(mailbox, name, id)  # only once the new version is stored
            self.say("result", f"Draft {id} is now draft {saved['draft_id']}")
            result: dict[str, Any] = {
                "success": True, "id": id, **saved, "message_id": msg["Message-ID"],
                "to": final_to, "cc": final_cc, "bcc": final_bcc, "subject": final_subject,
                "attachments": [a.filename for a in attached]}
            renamed = _compose.renamed(attached)
            if renamed:
                result["renamed"] = renamed
            if left_out:
                result["left_out"] = left_out
            return result

        return self.execute(action, **echo)


def main(argv: list[str] | None = None) -> int:
    """Run UpdateDraft from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(UpdateDraft, argv)


if __name__ == "__main__":
    main()
