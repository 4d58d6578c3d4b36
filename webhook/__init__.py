"""Admission handlers served by the runtime webhook server."""
