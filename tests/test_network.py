"""The private-network policy: which addresses count as private, and who decides."""

from __future__ import annotations

import threading

import pytest

from janito_core.network import ENV_VAR, env_choice, private_network, private_network_allowed, private_reason

PRIVATE = {
    "127.0.0.1": "loopback",
    "127.8.9.10": "loopback",
    "::1": "loopback",
    "0.0.0.0": "unspecified",
    "::": "unspecified",
    "10.1.2.3": "private network",
    "172.16.0.1": "private network",
    "192.168.1.1": "private network",
    "169.254.169.254": "cloud metadata",
    "fd00:ec2::254": "cloud metadata",
    "100.100.100.200": "cloud metadata",
    "169.254.10.1": "link-local",
    "fe80::1": "link-local",
    "fe80::1%eth0": "link-local",
    "fd12:3456::1": "unique-local",
    "fc00::1": "unique-local",
    "224.0.0.1": "multicast",
    "ff02::1": "multicast",
    "100.64.0.1": "reserved or shared",
    "240.0.0.1": "reserved",
    "::ffff:127.0.0.1": "IPv6 form of 127.0.0.1, a loopback",
    "::ffff:169.254.169.254": "IPv6 form of 169.254.169.254, a cloud metadata",
    "64:ff9b::a00:1": "IPv6 form of 10.0.0.1, a private network",
    "2002:7f00:1::": "IPv6 form of 127.0.0.1, a loopback",
    "not-an-address": "not an IP address",
}
PUBLIC = ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]


@pytest.mark.parametrize("address", sorted(PRIVATE))
def test_private_addresses_say_why(address: str) -> None:
    reason = private_reason(address)
    assert reason is not None and PRIVATE[address] in reason


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert private_reason(address) is None


def test_allowed_locally_unless_the_environment_or_the_host_says_otherwise(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert env_choice() is None and private_network_allowed() is True
    with private_network(False):
        assert private_network_allowed() is False
        seen: list[bool] = []
        # a thread started without the context does not inherit the host's choice
        thread = threading.Thread(target=lambda: seen.append(private_network_allowed()))
        thread.start()
        thread.join()
        assert seen == [True]
    assert private_network_allowed() is True
    monkeypatch.setenv(ENV_VAR, "refuse")
    assert private_network_allowed() is False
    with private_network(True):
        assert private_network_allowed() is True
    monkeypatch.setenv(ENV_VAR, "Allow")
    assert env_choice() is True and private_network_allowed() is True


def test_an_unreadable_setting_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "sometimes")
    with pytest.raises(ValueError, match="use 'allow' or 'refuse'"):
        env_choice()
    assert private_network_allowed() is False
