"""Group and version of the Ballast kinds."""

GROUP = "ballast.tightlinesoftware.com"
VERSION = "v1"
