"""SaveAttachment: write one attachment of a message into the workspace."""

from __future__ import annotations

import errno
import os
import re
import stat
from typing import Annotated, Any, Literal

from janito_core import Failure, tool
from janito_core.constraints import Ge
from janito_core.results import counted

from . import _mime
from ._base import MailTool
from ._errors import EXISTS, INVALID_ARGUMENTS, NOT_FOUND, WRITE_FAILED, MailError
from ._imap import imap_session, section
from ._params import Folder, MessageId
from ._results import TypedDict
from ._settings import Settings


class Saved(TypedDict):
    success: Literal[True]
    id: Annotated[int, "The message."]
    folder: str
    filename: Annotated[str, "The attachment's name in the message."]
    index: Annotated[int, "Its number in the message."]
    content_type: str
    path: Annotated[str, "The file written in the workspace."]
    size: Annotated[int, "Bytes written."]


def safe_filename(name: str, fallback: str) -> str:
    """An attachment's name reduced to one harmless file name (no folders, no controls)."""
    base = re.split(r"[\\/]", name)[-1]
    base = re.sub(r"[\x00-\x1f\x7f]", "", base).strip().lstrip(".")
    return base[:200] if base and base not in (".", "..") else fallback


@tool(permissions="w")
class SaveAttachment(MailTool):
    """Save an attachment of an email into the workspace."""

    def run(self, id: MessageId, folder: Folder = "INBOX", filename: str | None = None,
            index: Annotated[int, Ge(1)] | None = None, path: str | None = None,
            overwrite: bool = False) -> Saved | Failure:
        """Write one attachment of a message to a file inside the workspace.

        Choose the attachment by filename or by index (as ReadEmails lists them); a
        message with a single attachment needs neither.

        Args:
            id: The message id, as ReadEmails gave it.
            folder: The folder holding the message.
            filename: The attachment's file name, as ReadEmails lists it.
            index: The attachment's index, as ReadEmails lists it (from 1).
            path: Where to write, relative to the workspace: a file name, or a folder
                (ending in "/" or existing) to write into under the attachment's name.
                Default: the attachment's name in the workspace root.
            overwrite: Replace an existing file of that name.
        """
        echo = {"id": id, "folder": folder}

        def action(settings: Settings) -> dict[str, Any]:
            with imap_session(settings) as mailbox:
                mailbox.select(folder, readonly=True)
                data = mailbox.client.fetch([id], ["BODYSTRUCTURE"])
                if id not in data:
                    raise MailError(NOT_FOUND, f"no message with id {id} is in {folder}")
                _body, attachments = _mime.split_parts(_mime.parts(data[id][b"BODYSTRUCTURE"]))
                listed = [_mime.attachment_info(i, p) for i, p in enumerate(attachments, 1)]
                part, info = self._choose(attachments, listed, filename, index)
                target = self._target(path, str(info["filename"]), index=int(info["index"]))
                self._refuse_existing(target, overwrite)
                self.say("start", f"Saving {info['filename']} from message {id}")
                fetched = mailbox.client.fetch([id], [f"BODY.PEEK[{part.section}]"])
            raw = section(fetched.get(id, {}), f"BODY[{part.section}]".encode()) or b""
            content = _mime.decode_body(raw, part.encoding, complete=True)
            shown = self._write(target, content, overwrite)
            self.say("result", f"Saved {shown} ({counted(len(content), 'byte')})")
            return {"success": True, "id": id, "folder": folder, "filename": info["filename"],
                    "index": info["index"], "content_type": part.content_type,
                    "path": shown, "size": len(content)}

        return self.execute(action, **echo)

    @staticmethod
    def _choose(attachments: list[_mime.Part], listed: list[dict[str, Any]],
                filename: str | None, index: int | None) -> tuple[_mime.Part, dict[str, Any]]:
        names = [str(item["filename"]) for item in listed]
        if not attachments:
            raise MailError(NOT_FOUND, "this message has no attachments")
        if index is not None:
            if not 1 <= index <= len(attachments):
                raise MailError(NOT_FOUND, f"there is no attachment {index}; the message has "
                                           f"{len(attachments)}: {', '.join(names)}",
                                attachments=names)
            return attachments[index - 1], listed[index - 1]
        if filename is not None:
            for part, item in zip(attachments, listed, strict=True):
                if item["filename"] == filename:
                    return part, item
            lowered = filename.lower()
            for part, item in zip(attachments, listed, strict=True):
                if str(item["filename"]).lower() == lowered:
                    return part, item
            raise MailError(NOT_FOUND, f"there is no attachment named {filename!r}; the message "
                                       f"has: {', '.join(names)}", attachments=names)
        if len(attachments) == 1:
            return attachments[0], listed[0]
        raise MailError(INVALID_ARGUMENTS, f"the message has {len(attachments)} attachments "
                                           f"({', '.join(names)}); give filename or index",
                        attachments=names)

    def _target(self, path: str | None, name: str, *, index: int) -> str:
        """The workspace path to write: ``path``, or the attachment's own name in the
        workspace root or in the folder ``path`` names (ending in "/" or existing)."""
        own = safe_filename(name, f"attachment-{index}")
        if path is None or not path.strip():
            return own
        if path.endswith(("/", os.sep)):
            return path + own
        try:
            with self.workspace.locate(path) as where:
                found = where.lookup()
        except OSError:
            return path  # a folder on the way is missing: made when the file is written
        if found is not None and stat.S_ISDIR(found.st_mode):
            return f"{path}/{own}"
        return path

    def _refuse_existing(self, target: str, overwrite: bool) -> None:
        """Refuse before fetching anything when the file exists and may not be replaced (the
        write refuses again, atomically, should it appear meanwhile)."""
        if overwrite:
            return
        try:
            with self.workspace.locate(target) as where:
                found = where.lookup()
                shown = where.shown
        except OSError:
            return
        if found is not None:
            raise MailError(EXISTS, f"{shown} exists; pass overwrite=true to replace it",
                            path=shown)

    def _write(self, target: str, content: bytes, overwrite: bool) -> str:
        """Write the file atomically through the workspace; the path as the model sees it."""
        shown = target
        try:
            with self.workspace.locate(target, make_parents=True) as where:
                shown = where.shown
                if where.is_root:
                    raise IsADirectoryError(errno.EISDIR, "the path is a folder", shown)
                where.write(content, overwrite=overwrite)
        except FileExistsError:
            raise MailError(EXISTS, f"{shown} exists; pass overwrite=true to replace it",
                            path=shown) from None
        except IsADirectoryError:
            raise MailError(WRITE_FAILED, f"cannot write {shown}: it is a folder",
                            path=shown) from None
        except OSError as exc:
            raise MailError(WRITE_FAILED, f"cannot write {shown}: {exc.strerror or exc}",
                            path=shown) from None
        return shown


def main(argv: list[str] | None = None) -> int:
    """Run SaveAttachment from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(SaveAttachment, argv)


if __name__ == "__main__":
    main()
