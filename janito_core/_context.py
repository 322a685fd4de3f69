"""The registry whose tool is running, so reports and nested calls reach its plugins."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .registry import Registry

active_registry: ContextVar[Registry | None] = ContextVar("janito_active_registry", default=None)

#: The id of the tool call being executed (as the model's tool call named it), if any.
current_call_id: ContextVar[str | None] = ContextVar("janito_current_call_id", default=None)
