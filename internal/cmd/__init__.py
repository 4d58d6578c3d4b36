"""Entry points of the `ballastd` and `ballast` commands: flag parsing and wiring only."""
