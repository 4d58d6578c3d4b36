"""The API group and version of the tutorial's kinds (api/v1/groupversion_info.go)."""

GROUP = "batch.tutorial.kubebuilder.io"
VERSION = "v1"
