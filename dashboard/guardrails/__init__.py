"""Guard rails for release managers: approvals, change freezes and reasons, enforced by the server."""
