"""Auxiliary roles: the capability the model of each role a task declares must have."""

from __future__ import annotations

from collections.abc import Mapping

from harness.adapters.capabilities import Capability
from harness.errors import HarnessError

KNOWN_ROLES: dict[str, Capability] = {"image": Capability.IMAGE_ENCODER}
"""The capability of a role a task names without one (``aux_roles = ("image",)``, the older spelling)."""


def role_capabilities(roles: Mapping[str, Capability] | tuple[str, ...], owner: str) -> dict[str, Capability]:
    """Role -> capability from an ``aux_roles`` declaration: a mapping, or role names of ``KNOWN_ROLES``."""
    if isinstance(roles, Mapping):
        found = dict(roles)
    else:
        unknown = [role for role in roles if role not in KNOWN_ROLES]
        if unknown:
            raise HarnessError(
                f"{owner} declares the auxiliary role {unknown[0]!r} without its capability: write "
                f"aux_roles = {{{unknown[0]!r}: Capability.<WHAT IT MUST DO>}}"
            )
        found = {role: KNOWN_ROLES[role] for role in roles}
    for role, capability in found.items():
        if not isinstance(capability, Capability):
            raise HarnessError(f"{owner}: auxiliary role {role!r} needs a Capability, got {capability!r}")
    return found
