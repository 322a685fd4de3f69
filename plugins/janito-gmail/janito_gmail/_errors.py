"""Turning what goes wrong with a mail server into a result a model can act on."""

from __future__ import annotations

import smtplib
import socket
import ssl
from typing import Any

# error_type values used by the mail tools
AUTH_FAILED = "auth_failed"
CONNECTION_FAILED = "connection_failed"
TIMEOUT = "timeout"
TLS_FAILED = "tls_failed"
NOT_FOUND = "not_found"
FOLDER_NOT_FOUND = "folder_not_found"
INVALID_ARGUMENTS = "invalid_arguments"
CONFIGURATION = "configuration_error"
SERVER_ERROR = "server_error"
UNSUPPORTED = "unsupported"
REJECTED = "rejected"
EXISTS = "already_exists"
OUTSIDE_WORKSPACE = "outside_workspace"
WRITE_FAILED = "write_failed"
LOGIN_REQUIRED = "login_required"
TOO_LARGE = "too_large"


class MailError(Exception):
    """An expected failure: ``error_type`` plus one human sentence, and extra fields."""

    def __init__(self, error_type: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.extra = extra


def invalid(field: str, problem: str) -> MailError:
    """invalid_arguments for one argument, with ``details`` as dispatch writes them."""
    return MailError(INVALID_ARGUMENTS, f"invalid arguments: {field} {problem}",
                     details=[{"field": field, "error": problem}])


def _text(exc: BaseException) -> str:
    if exc.args and isinstance(exc.args[0], bytes):
        text = exc.args[0].decode("utf-8", "replace")
    else:
        text = str(exc)
    if text.startswith(("b'", 'b"')) and text.endswith(("'", '"')):
        text = text[2:-1]
    return text.strip() or type(exc).__name__


def classify(exc: BaseException, *, server: str, protocol: str = "IMAP") -> MailError:
    """The MailError that describes ``exc``, raised while talking to ``server``."""
    if isinstance(exc, MailError):
        return exc
    from imapclient import exceptions as imap_errors

    where = f"the {protocol} server {server}"
    if isinstance(exc, imap_errors.LoginError) or isinstance(exc, smtplib.SMTPAuthenticationError):
        detail = _text(exc) if not isinstance(exc, smtplib.SMTPAuthenticationError) \
            else _smtp_text(exc)
        return MailError(
            AUTH_FAILED,
            f"{where} refused the login ({detail}); check the secrets gmail_username and "
            "gmail_password (for Gmail, an app password) or gmail_oauth_token",
        )
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        return MailError(UNSUPPORTED, f"{where} does not support what was asked: {_text(exc)}")
    if isinstance(exc, ssl.SSLCertVerificationError):
        return MailError(
            TLS_FAILED,
            f"the certificate of {where} could not be verified ({exc.verify_message}); "
            "for a private server, name its certificate in the setting ca_file",
        )
    if isinstance(exc, ssl.SSLError):
        return MailError(TLS_FAILED, f"TLS with {where} failed: {_text(exc)}; check the "
                                     "setting for the TLS mode (ssl, starttls or none)")
    if isinstance(exc, (socket.timeout, TimeoutError)) or isinstance(
        exc.__context__, (socket.timeout, TimeoutError)
    ):
        return MailError(TIMEOUT, f"{where} did not answer in time; try again later or raise "
                                  "the setting timeout")
    if isinstance(exc, ConnectionRefusedError):
        return MailError(CONNECTION_FAILED, f"{where} refused the connection; check the host "
                                            "and port settings")
    if isinstance(exc, socket.gaierror):
        return MailError(CONNECTION_FAILED, f"the host name of {where} could not be resolved "
                                            f"({_text(exc)})")
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        refused = sorted(exc.recipients)
        return MailError(REJECTED, f"{where} refused every recipient: {', '.join(refused)}",
                         refused=refused)
    if isinstance(exc, smtplib.SMTPSenderRefused):
        return MailError(REJECTED, f"{where} refused the sender {exc.sender}: "
                                   f"{_smtp_text(exc)}")
    if isinstance(exc, smtplib.SMTPResponseException):
        return MailError(SERVER_ERROR, f"{where} answered with an error: {_smtp_text(exc)}")
    if isinstance(exc, (smtplib.SMTPServerDisconnected, imap_errors.IMAPClientAbortError,
                        ConnectionError, EOFError)):
        return MailError(CONNECTION_FAILED, f"the connection to {where} was lost: {_text(exc)}")
    if isinstance(exc, imap_errors.CapabilityError):
        return MailError(UNSUPPORTED, f"{where} lacks a needed capability: {_text(exc)}")
    if isinstance(exc, imap_errors.IMAPClientError):
        return MailError(SERVER_ERROR, f"{where} answered with an error: {_text(exc)}")
    if isinstance(exc, OSError):
        return MailError(CONNECTION_FAILED, f"cannot talk to {where}: {_text(exc)}")
    return MailError(SERVER_ERROR, f"unexpected error with {where}: "
                                   f"{type(exc).__name__}: {_text(exc)}")


def size_text(size: int) -> str:
    """A size for people: "4.0 kB", "26.0 MB" (decimal units, as Gmail states its limits)."""
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def oauth_refused(settings: Any, where: str, detail: str) -> MailError:
    """A server refused an access token, and a new one cannot help (or was refused too)."""
    if getattr(settings, "tokens", None) is None:
        return MailError(AUTH_FAILED, f"{where} refused the OAuth access token in "
                                      f"gmail_oauth_token ({detail}); it may have expired: store "
                                      "a new one, or run `janito gmail login` so that janito "
                                      "renews tokens itself")
    return MailError(AUTH_FAILED, f"{where} refused the OAuth access token just issued for "
                                  f"{settings.username} ({detail}); the account may not allow "
                                  "IMAP or SMTP, or the sign-in was for another account; run "
                                  "`janito gmail login` again")


def smtp_text(exc: smtplib.SMTPResponseException) -> str:
    return _smtp_text(exc)


def _smtp_text(exc: smtplib.SMTPResponseException) -> str:
    message = exc.smtp_error
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    return f"{exc.smtp_code} {message}".strip()
