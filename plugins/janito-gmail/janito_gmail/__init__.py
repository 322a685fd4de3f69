"""janito-gmail: the "gmail" toolset, mail over IMAP and SMTP (Gmail's servers by default)."""

__version__ = "0.1.0"
