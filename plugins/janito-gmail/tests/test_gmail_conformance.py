"""janito's conformance check on the whole toolset, its calls reaching the test servers.

Generated arguments (hypothesis, from each tool's own schema) and tricky paths go to
every tool signed in to the real Dovecot and SMTP server: no call may raise, print to
stdout, take too long, or touch anything outside the workspace.
"""

from __future__ import annotations

from janito_core.testing import check_toolset


def test_the_toolset_conforms(mail_env: dict[str, str]) -> None:
    report = check_toolset("gmail", max_examples=5, call_budget=10)
    assert report.not_exercised == {}, str(report)
    assert len(report.reached) == 17 and min(report.reached.values()) >= 5, str(report)
