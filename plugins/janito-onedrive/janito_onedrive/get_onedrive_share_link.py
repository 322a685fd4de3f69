"""GetOneDriveShareLink: a sharing link for a OneDrive file or folder."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool

from ._common import gate, guarded, invalid

LINK_TYPES = ("view", "edit", "embed")
SCOPES = ("anonymous", "organization", "users")


# w although nothing local is written: a new link changes who can reach the file.
@tool(permissions="w")
class GetOneDriveShareLink(BaseTool):
    """Get a sharing link for a OneDrive file or folder (an existing link of that kind is reused)."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str, link_type: str = "view", scope: str = "anonymous") -> dict[str, Any]:
        """Create or reuse a sharing link.

        Args:
            path: The file or folder, relative to the OneDrive root, such as
                "Documents/report.pdf".
            link_type: "view" (read-only), "edit" (read-write) or "embed" (personal OneDrive only).
            scope: Who the link works for: "anonymous" (anyone with it), "organization" (the same
                tenant) or "users" (people already given access).
        """
        echo = {"path": path, "link_type": link_type, "scope": scope}
        if link_type not in LINK_TYPES:
            return invalid("link_type must be one of: " + ", ".join(LINK_TYPES), **echo)
        if scope not in SCOPES:
            return invalid("scope must be one of: " + ", ".join(SCOPES), **echo)
        return guarded(self, lambda: self._share(path, link_type, scope), **echo)

    def _share(self, path: str, link_type: str, scope: str) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import clean_path, graph_error, item_action

        echo = {"path": path, "link_type": link_type, "scope": scope}
        try:
            where = clean_path(path, allow_root=False)
        except ValueError as exc:
            return invalid(str(exc), **echo)
        self.report_start(f"Getting a {link_type} link ({scope}) for OneDrive /{where}")
        graph = _common.client()
        response = graph.request("POST", item_action(where, "createLink"),
                                 json_body={"type": link_type, "scope": scope})
        if response.status == 404:
            raise GraphError(_common.not_found("item", where), "not_found", status=404)
        if response.status not in (200, 201):
            raise graph_error(response, f"creating a link for '/{where}'")
        permission = response.json()
        link = permission.get("link") if isinstance(permission, dict) else None
        if not isinstance(link, dict) or not link.get("webUrl"):
            raise GraphError("Microsoft Graph returned a permission without a link",
                             "invalid_response")
        self.report_result(f"Link for /{where}: {link['webUrl']}")
        return {
            "success": True,
            "path": where,
            "share_link": link.get("webUrl"),
            "link_type": link.get("type") or link_type,
            "scope": link.get("scope") or scope,
            "expiration": permission.get("expirationDateTime"),
            "roles": permission.get("roles"),
            "permission_id": permission.get("id"),
            "created": response.status == 201,
        }


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(GetOneDriveShareLink, argv)


if __name__ == "__main__":
    main()
