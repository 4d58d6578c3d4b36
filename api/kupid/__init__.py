"""The `kupid.gardener.cloud` API group (gardener kupid's scheduling policies)."""
