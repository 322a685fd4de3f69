"""The defaults of HTTP serving's limits (see ``_guard``), apart from the code that
enforces them: the ``janito mcp`` command shows them in its help, and it is imported on
every start of ``janito``, where ``_guard`` would bring in asyncio."""

DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_MAX_CONNECTIONS = 1024
DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 256
#: Seconds the calls in flight have to finish after SIGTERM before they are cancelled
#: (``_drain``).
DEFAULT_SHUTDOWN_GRACE = 20.0
