"""Implementation packages: the runtime framework, the command entry points and the domain."""
