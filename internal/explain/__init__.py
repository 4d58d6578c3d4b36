"""Why a pod has the requests and limits it has (`ballast explain`): its profile, the policy that governs it and
why, the samples and statistics, the formula of every recommended value, the limit rule and what admission
wrote. Pure functions, except `gather`, which does the reading; `ballast.internal.cmd.explain` prints.

Everything comes from the API server — the pod and its annotations (`profile-ref`, `policy-ref`, `applied-*`),
its owners (whose pod template holds the resources the pod was created from), the BallastConfig, the policies,
the WorkloadProfile's status, the scheduling policies and the namespace's labels — so it works from a laptop
that cannot reach the operator's history store. The figures are the profile's (the collector's statistics as it
displays them); every value is recomputed with the domain functions the operator uses (`recommend`, `fit_limit`,
`resolve_policy`, `profile_name`, `select_policies`), never with arithmetic of its own.

    namespace, name = parse_pod_ref("pod/shop/web-0", None)
    ctx = gather(client, namespace, name)  # PodContext: the pod, its owners, identity labels, policies, profile
    lines = explain(ctx)                   # ["Pod shop/web-0", …, "    cpu request = p95 (212m) × 1.15 = 243m", …]
"""

from ballast.internal.scheduling.describe import comparison, policies_today, scheduling_lines, stamped_policies

from .context import Owner, PodContext, gather, parse_pod_ref
from .figures import PERCENTILES, formula, headroom_text, limit_lines, recompute, statistic
from .policies import PolicyVerdict, judge_policies, policy_label, why_loses
from .report import MODE_MEANING, explain

__all__ = [
    "MODE_MEANING",
    "PERCENTILES",
    "Owner",
    "PodContext",
    "PolicyVerdict",
    "comparison",
    "explain",
    "formula",
    "gather",
    "headroom_text",
    "judge_policies",
    "limit_lines",
    "parse_pod_ref",
    "policies_today",
    "policy_label",
    "recompute",
    "scheduling_lines",
    "stamped_policies",
    "statistic",
    "why_loses",
]
