"""The `ballast.tightlinesoftware.com` API group."""
