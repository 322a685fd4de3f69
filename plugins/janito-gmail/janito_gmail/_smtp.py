"""Sending one message over SMTP: TLS as the settings say, the login, a size check first."""

from __future__ import annotations

import email.policy
import smtplib
from email.message import EmailMessage

from ._errors import TOO_LARGE, MailError, classify, oauth_refused, size_text, smtp_text
from ._settings import Settings

#: The largest encoded message sent to a server that announces no SIZE: what
#: smtp.gmail.com announces (25 MB of attachments, once base64 makes them a third larger).
MAX_MESSAGE_BYTES = 35_882_577


def flatten(msg: EmailMessage, *, international: bool = False) -> bytes:
    """The message as it travels (CRLF line ends; UTF-8 headers only when allowed).

    A header read from a stored message (a draft) is sent as it was stored: refolding a
    long one decodes its encoded words, and a Python without the fix for CVE-2024-6923
    writes a line break one decodes to as it is, a header of its own.
    """
    policy = email.policy.SMTPUTF8 if international else email.policy.SMTP
    return msg.as_bytes(policy=policy.clone(refold_source="none"))


def check_size(size: int, limit: int = MAX_MESSAGE_BYTES, *, where: str = "") -> None:
    if size > limit:
        origin = f"{where} accepts" if where else "Gmail accepts"
        raise MailError(TOO_LARGE, f"the message would be {size_text(size)} once encoded; "
                                   f"{origin} at most {size_text(limit)}: send fewer or smaller "
                                   "attachments, or share a link instead", size=size, limit=limit)



def send(settings: Settings, msg: EmailMessage, sender: str, recipients: list[str]) -> list[str]:
    """Send ``msg`` to ``recipients``; the recipients the server refused (the others got it).

    The encoded size is checked against MAX_MESSAGE_BYTES before connecting, and against
    the SIZE the server announces before any of the message is sent.
    """
    international = any(not address.isascii() for address in [sender, *recipients])
    raw = flatten(msg, international=international)
    check_size(len(raw))
    server = f"{settings.smtp_host}:{settings.smtp_port}"
    where = f"the SMTP server {server}"
    smtp: smtplib.SMTP | None = None
    try:
        context = settings.ssl_context() if settings.smtp_tls != "none" else None
        if settings.smtp_tls == "ssl":
            smtp = smtplib.SMTP_SSL(settings.smtp_host, settings.smtp_port,
                                    timeout=settings.timeout, context=context)
        else:
            smtp = smtplib.SMTP(settings.smtp_host, settings.smtp_port,
                                timeout=settings.timeout)
            smtp.ehlo()
            if settings.smtp_tls == "starttls":
                smtp.starttls(context=context)
                smtp.ehlo()
        _log_in(smtp, settings, where)
        announced = smtp.esmtp_features.get("size", "").strip()
        if announced.isdigit() and int(announced) > 0:
            check_size(len(raw), int(announced), where=where)
        options = ["SMTPUTF8", "BODY=8BITMIME"] if international else []
        refused = smtp.sendmail(sender, recipients, raw, mail_options=options)
        return sorted(refused)
    except MailError:
        raise
    except Exception as exc:
        raise classify(exc, server=server, protocol="SMTP") from None
    finally:
        if smtp is not None:
            try:
                smtp.quit()
            except Exception:
                smtp.close()


def _log_in(smtp: smtplib.SMTP, settings: Settings, where: str) -> None:
    """The password, or XOAUTH2 with a new token once if the server refuses a cached one."""
    token = settings.access_token()
    if not token:
        smtp.login(settings.username, settings.password or "")
        return
    while True:
        answer = f"user={settings.username}\1auth=Bearer {token}\1\1"
        try:
            # a challenge after the first answer carries the server's error: answer empty
            smtp.auth("XOAUTH2", lambda challenge=None, a=answer: a if challenge is None else "",
                      initial_response_ok=True)
            return
        except smtplib.SMTPAuthenticationError as exc:
            renewed = settings.renew_access_token()
            if renewed and renewed != token:
                token = renewed
                continue
            raise oauth_refused(settings, where, smtp_text(exc)) from None
