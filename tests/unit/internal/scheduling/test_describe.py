"""`ballast explain`'s scheduling section: the policies admission stamped on the pod, and whether today's policies
give the same list (select_policies over the pod's and its namespace's labels)."""

from __future__ import annotations

from typing import Any

from ballast.internal.explain import PodContext, comparison, explain, gather, scheduling_lines, stamped_policies
from ballast.internal.scheduling import POLICIES_ANNOTATION
from ballast.runtime import FakeAPI

KUPID = "kupid.gardener.cloud/v1alpha1"


def pod(annotation: str | None = None, **metadata: Any) -> dict[str, Any]:
    annotations = {POLICIES_ANNOTATION: annotation} if annotation is not None else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "shop", "labels": {"app": "web"}, "annotations": annotations,
                     **metadata},
        "spec": {"containers": [{"name": "app"}]},
    }  # fmt: skip


def cluster(name: str, namespaces: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = {"podSelector": {"matchLabels": {"app": "web"}}, "namespaceSelector": namespaces or {}}
    return {"apiVersion": KUPID, "kind": "ClusterPodSchedulingPolicy", "metadata": {"name": name}, "spec": spec}


def namespaced(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": KUPID,
        "kind": "PodSchedulingPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"podSelector": {}},
    }


PROD = {"tier": "prod"}
ETCD = cluster("etcd", {"matchLabels": PROD})
SPOT = namespaced("shop", "spot")


def test_the_annotation_is_read_in_order() -> None:
    assert stamped_policies(pod(" ClusterPodSchedulingPolicy/etcd, PodSchedulingPolicy/shop/spot,")) == (
        "ClusterPodSchedulingPolicy/etcd",
        "PodSchedulingPolicy/shop/spot",
    )
    assert stamped_policies(pod()) is None


def test_the_same_policies_today() -> None:
    lines = scheduling_lines(pod("ClusterPodSchedulingPolicy/etcd,PodSchedulingPolicy/shop/spot"), PROD, [ETCD, SPOT])
    assert lines == [
        "",
        "Scheduling policies",
        "  matched at admission: ClusterPodSchedulingPolicy/etcd, PodSchedulingPolicy/shop/spot",
        "  today: same policies today",
    ]


def test_added_and_removed_policies_are_named() -> None:
    # the namespace lost the label etcd selects; a PodSchedulingPolicy of another namespace never counts
    lines = scheduling_lines(
        pod("ClusterPodSchedulingPolicy/etcd"), {}, [ETCD, SPOT, namespaced("other", "zone"), cluster("all")]
    )
    assert lines[-1] == (
        "  today: ClusterPodSchedulingPolicy/all, PodSchedulingPolicy/shop/spot (added ClusterPodSchedulingPolicy/all, "
        "PodSchedulingPolicy/shop/spot; removed ClusterPodSchedulingPolicy/etcd; the pod changes only when it is "
        "re-created)"
    )
    assert comparison(["a", "b"], ["b", "a"]) == "the same policies in another order today: b, a"
    assert comparison(["a"], []).startswith("none (removed a;")


def test_without_the_annotation_a_policy_is_mentioned_only_when_one_matches_now() -> None:
    assert scheduling_lines(pod(), PROD, [cluster("other", {"matchLabels": {"tier": "dev"}})]) == [
        "",
        "Scheduling policies",
        "  no scheduling policy matched at admission",
    ]
    assert scheduling_lines(pod(), PROD, [ETCD])[-1] == (
        "  today: ClusterPodSchedulingPolicy/etcd would match (it applies when the pod is re-created)"
    )
    assert scheduling_lines(pod(), None, None)[-1] == "  no scheduling policy matched at admission"


def test_unreadable_policies_make_today_unknown_and_invalid_ones_are_named() -> None:
    lines = scheduling_lines(pod("ClusterPodSchedulingPolicy/etcd"), PROD, None)
    assert lines[-1].startswith("  today: unknown")
    broken = cluster("broken", {"matchExpressions": [{"key": "k", "operator": "Near"}]})
    lines = scheduling_lines(pod("ClusterPodSchedulingPolicy/etcd"), PROD, [ETCD, broken])
    assert lines[-2:] == [
        "  today: same policies today",
        "  skipped as invalid: ClusterPodSchedulingPolicy/broken (spec.namespaceSelector.matchExpressions[0]: "
        "operator 'Near' is not one of In, NotIn, Exists, DoesNotExist)",
    ]


def test_a_policy_skipped_as_contradictory_is_named_as_such_not_as_matched() -> None:
    zone_c = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["c"]}]}]}
    zone_a = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
    contradicting = cluster("zone-a")
    contradicting["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": zone_a}}
    stamped = pod("PodSchedulingPolicy/shop/spot")
    stamped["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": zone_c}}
    lines = scheduling_lines(stamped, PROD, [contradicting, SPOT])
    assert lines[2:4] == ["  matched at admission: PodSchedulingPolicy/shop/spot", "  today: same policies today"]
    assert len(lines) == 5
    assert lines[4].startswith("  skipped as contradictory: ClusterPodSchedulingPolicy/zone-a (")


def test_daemonset_and_mirror_pods_say_why_admission_leaves_them() -> None:
    owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u", "controller": True}
    lines = scheduling_lines(pod(ownerReferences=[owner]), PROD, [ETCD])
    assert lines[2:] == [
        "  a DaemonSet pod: admission leaves it to its DaemonSet's template, which the policies mutate",
        "  today its template would get: ClusterPodSchedulingPolicy/etcd",
    ]
    mirror = pod(annotation="x")
    mirror["metadata"]["annotations"]["kubernetes.io/config.mirror"] = "hash"
    assert scheduling_lines(mirror, PROD, [ETCD])[2:] == [
        "  a mirror pod: the API server refuses changes to it, so no policy applies"
    ]


def test_explain_puts_the_section_after_the_profile() -> None:
    text = "\n".join(explain(PodContext(pod("ClusterPodSchedulingPolicy/etcd"), (), None, (), None, PROD, (ETCD,))))
    assert text.index("Profile: none yet") < text.index("Scheduling policies") < text.index("Container app")


def test_gather_reads_the_namespaces_labels_and_the_scheduling_policies(api: FakeAPI) -> None:
    client = api.client()
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": PROD}})
    client.create(pod("ClusterPodSchedulingPolicy/etcd"))
    for policy in (ETCD, SPOT, namespaced("other", "zone")):
        client.create(policy)
    ctx = gather(client, "shop", "web-0")
    assert ctx.namespace_labels == PROD
    assert ctx.scheduling_policies is not None
    assert [p["metadata"]["name"] for p in ctx.scheduling_policies] == ["etcd", "spot"]
    bare = FakeAPI()  # no kupid CRDs: the section says what it cannot tell
    bare_client = bare.client()
    bare_client.create(pod())
    assert gather(bare_client, "shop", "web-0").scheduling_policies is None
    assert gather(bare_client, "shop", "web-0").namespace_labels is None
    bare.close()
