"""janito-gmail: the "gmail" toolset, mail over IMAP and SMTP (Gmail's servers by default),
and the ``janito gmail`` command that signs in to Google."""

__version__ = "0.1.0"
