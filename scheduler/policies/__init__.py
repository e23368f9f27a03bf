"""Layer 2: queue orders, one registry (``POLICIES``).

``base`` holds the priority-key types and the registry; each other module registers one family
of policies when imported, which this package does for all of them.
"""

from scheduler.policies import classic as _classic
from scheduler.policies import published as _published
from scheduler.policies.base import (
    POLICIES,
    Policy,
    PolicyInputs,
    PriorityKey,
    get_policy,
    policy_names,
    priority_key,
    register,
)
from scheduler.policies.classic import STUDY_POLICIES

del _classic, _published  # imported for their registrations
__all__ = [
    "POLICIES",
    "STUDY_POLICIES",
    "Policy",
    "PolicyInputs",
    "PriorityKey",
    "get_policy",
    "policy_names",
    "priority_key",
    "register",
]
