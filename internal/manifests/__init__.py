"""The product's manifests, generated from the code by one entry point (`generate`, `hack/gen-manifests`):

- `crds`: the CustomResourceDefinitions of `ballast.api.scheme.KINDS` (`all_crds()`, which `ballastd apply-crds`
  applies);
- `rbac`: the operator's rules, roles and features, rendered for kustomize and for the Helm chart;
- `webhooks`: the Mutating/ValidatingWebhookConfiguration of the admission handlers in `ballast.webhook`.

The generic parts — a CRD from a kind's declaration, RBAC objects from rules — are the framework's
(`ballast.runtime.crdgen`, `ballast.runtime.rbacgen`); these modules hold what is Ballast's.
"""
