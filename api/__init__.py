"""Ballast API types: pydantic models per group/version, from which the CRDs are generated."""
