"""What the admission handlers read through, and the owner lookup behind the policy `kinds` rule.

The handlers read policies, the BallastConfig and WorkloadProfiles through the manager's cache-backed client
(`manager.client`); any runtime `interfaces.Reader` will do (a plain `Client`, `FakeAPI().client()`).

Owners (ReplicaSet → Deployment, Job → CronJob) are read through a reader of their own, which the wiring
points at `manager.api_reader` (live reads, by `policy.OwnerReader`, shared with enrollment): a Deployment's
rollout creates the new ReplicaSet milliseconds before its first pod, so a cache may not hold it yet at that
pod's admission — the pod would then miss a `kinds: [Deployment]` policy and be admitted under another
profile. Live reads also keep cluster-wide ReplicaSet/Job informers off every replica, honour the webhook's
request deadline, and need only `get` permission. They cost at most one GET per owner uid, and only when some
candidate policy lists `kinds` at all (`policy.Resolver` checks that first).
"""

from __future__ import annotations

from ballast.runtime import Reader

__all__ = ["Reader"]
