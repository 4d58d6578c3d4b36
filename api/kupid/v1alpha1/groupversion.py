"""Group and version of the kupid scheduling-policy kinds."""

GROUP = "kupid.gardener.cloud"
VERSION = "v1alpha1"
