"""Layer 2: queue orders, one registry (``POLICIES``).

``base`` holds the priority-key types and the registry; each other module registers one family
of policies when imported, which this package does for all of them. ``learned`` registers the
policy spec ``learned:PATH#RANK`` (a fitted function, ``docs/learned.md``) and aliases for it.
"""

from scheduler.policies import classic as _classic
from scheduler.policies import published as _published
from scheduler.policies.base import (
    MULTIFACTOR,
    POLICIES,
    POLICY_SPECS,
    Policy,
    PolicyInputs,
    PriorityKey,
    get_policy,
    policy_names,
    priority_key,
    register,
)
from scheduler.policies.classic import STUDY_POLICIES
from scheduler.policies.learned import register_learned, unregister_learned

del _classic, _published  # imported for their registrations
__all__ = [
    "MULTIFACTOR",
    "POLICIES",
    "POLICY_SPECS",
    "STUDY_POLICIES",
    "Policy",
    "PolicyInputs",
    "PriorityKey",
    "get_policy",
    "policy_names",
    "priority_key",
    "register",
    "register_learned",
    "unregister_learned",
]
