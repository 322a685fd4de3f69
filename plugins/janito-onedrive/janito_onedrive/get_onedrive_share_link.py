"""GetOneDriveShareLink: a sharing link for a OneDrive file or folder."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Interval, MinLen

from ._common import gate, guarded, invalid
from ._items import NotRequired, TypedDict


class ShareLink(TypedDict):
    """What GetOneDriveShareLink answers.

    Attributes:
        path: The item shared, from the drive's root.
        link_type: The link's kind: "view", "edit" or "embed".
        scope: Who the link works for: "anonymous", "organization" or "users".
        expires_in_days: The lifetime asked for.
        share_link: The link to give out.
        expiration: When the link stops working (ISO 8601), null for never.
        password_protected: Whether the link asks for a password.
        roles: What the link lets people do ("read", "write").
        permission_id: The sharing permission's id on OneDrive.
        created: False when an existing link was reused.
    """

    success: Literal[True]
    path: str
    link_type: str
    scope: str
    expires_in_days: NotRequired[int]
    share_link: str
    expiration: str | None
    password_protected: bool
    roles: list[str] | None
    permission_id: str | None
    created: bool


# w although nothing local is written: a new link changes who can reach the file.
@tool(permissions="w")
class GetOneDriveShareLink(BaseTool):
    """Get a sharing link for a OneDrive file or folder (an existing link of that kind is reused)."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str, link_type: Literal["view", "edit", "embed"] = "view",
            scope: Literal["anonymous", "organization", "users"] = "anonymous",
            expires_in_days: Annotated[int, Interval(ge=1, le=730)] | None = None,
            password: Annotated[str, MinLen(1)] | None = None) -> ShareLink | Failure:
        """Create or reuse a sharing link, optionally expiring or protected by a password.

        Args:
            path: The file or folder, relative to the OneDrive root, such as
                "Documents/report.pdf".
            link_type: "view" (read-only), "edit" (read-write) or "embed" (personal OneDrive only).
            scope: Who the link works for: "anonymous" (anyone with it), "organization" (the same
                tenant) or "users" (people already given access).
            expires_in_days: The link stops working after this many days; omitted:
                the account's default. A new link is made rather than an existing one reused.
            password: A password the link asks for (OneDrive personal accounts that allow it);
                a new link is made. It is never shown back.
        """
        echo: dict[str, Any] = {"path": path, "link_type": link_type, "scope": scope}
        if expires_in_days is not None:
            echo["expires_in_days"] = expires_in_days
        if password is not None:
            from ._errors import remember_secret

            remember_secret(password)
        return guarded(self, lambda: self._share(path, link_type, scope, expires_in_days,
                                                 password, echo), **echo)

    def _share(self, path: str, link_type: str, scope: str, days: int | None = None,
               password: str | None = None, echo: dict[str, Any] | None = None) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import clean_path, graph_error, item_action, text

        echo = dict(echo or {"path": path, "link_type": link_type, "scope": scope})
        try:
            where = clean_path(path, allow_root=False)
        except ValueError as exc:
            return invalid(str(exc), **echo)
        self.report_start(f"Getting a {link_type} link ({scope}) for OneDrive /{where}")
        graph = _common.client()
        body: dict[str, Any] = {"type": link_type, "scope": scope}
        if days is not None:
            import datetime as dt

            when = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=days)
            body["expirationDateTime"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        if password is not None:
            body["password"] = password
        response = graph.request("POST", item_action(where, "createLink"), json_body=body)
        if response.status == 404:
            raise GraphError(_common.not_found("item", where), "not_found", status=404)
        if response.status == 403 and scope == "anonymous":
            raise GraphError(
                "the organization's sharing policy does not allow links that work for anyone "
                "(anonymous); ask for scope 'organization' (people in the organization) or "
                "'users' (people who already have access)", "sharing_refused", status=403)
        if response.status == 400 and password is not None:
            raise GraphError(
                "this account does not accept a password on sharing links (OneDrive for "
                "Business and SharePoint have none; a personal account may need a Microsoft "
                "365 subscription); share without a password, or with scope 'organization'",
                "not_supported", status=400)
        if response.status not in (200, 201):
            raise graph_error(response, f"creating a link for '/{where}'")
        permission = response.json()
        link = permission.get("link") if isinstance(permission, dict) else None
        if not isinstance(link, dict) or not text(link.get("webUrl")):
            raise GraphError("Microsoft Graph returned a permission without a link",
                             "invalid_response")
        self.report_result(f"Link for /{where}: {link['webUrl']}")
        return {
            **echo,
            "success": True,
            "path": where,
            "share_link": link.get("webUrl"),
            "link_type": text(link.get("type")) or link_type,
            "scope": text(link.get("scope")) or scope,
            "expiration": text(permission.get("expirationDateTime")),
            "password_protected": bool(permission.get("hasPassword")) or password is not None,
            "roles": _roles(permission.get("roles")),
            "permission_id": text(permission.get("id")),
            "created": response.status == 201,
        }


def _roles(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    return [role for role in value if isinstance(role, str)]


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(GetOneDriveShareLink, argv)


if __name__ == "__main__":
    main()
